package capacity

import (
	"reflect"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// Write is what one item write costs: on the table and on each index it
// writes.
type Write struct {
	// PK is the table partition key value written.
	PK string
	// Size is the larger of the item's sizes before and after the write.
	Size int
	// Units is the table's write units (doubled in a transaction).
	Units int
	// Indexes are the index writes it causes, in schema order.
	Indexes []IndexWrite
}

// IndexWrite is the write of one index entry (a put or a delete).
type IndexWrite struct {
	Index string
	// PK is the index partition key value written.
	PK string
	// Size is the entry's size; Units its write units.
	Size, Units int
	// Delete tells a removed entry from a put one.
	Delete bool
}

// IndexUnits sums the write units of the index writes to index.
func (w Write) IndexUnits(index string) int {
	n := 0
	for _, iw := range w.Indexes {
		if iw.Index == index {
			n += iw.Units
		}
	}
	return n
}

// Cost returns what a write that turns before into after costs on a
// table of schema s (before nil: a new item; after nil: a deleted one, or
// a write refused by its condition, which costs the table and no index).
// tx marks a transactional write.
func Cost(s *ddb.Schema, before, after Item, tx bool) Write {
	item := after
	if item == nil {
		item = before
	}
	w := Write{PK: str(item[s.PK]), Size: max(Size(before), Size(after))}
	w.Units = WriteUnits(w.Size)
	if tx {
		w.Units *= 2
	}
	for _, ix := range s.Indexes {
		old, cur := Entry(s, ix, before), Entry(s, ix, after)
		switch {
		case old == nil && cur == nil:
		case old == nil:
			w.Indexes = append(w.Indexes, indexWrite(ix, cur, false))
		case cur == nil:
			w.Indexes = append(w.Indexes, indexWrite(ix, old, true))
		case str(old[ix.PK]) != str(cur[ix.PK]) || str(old[ix.SK]) != str(cur[ix.SK]):
			w.Indexes = append(w.Indexes, indexWrite(ix, old, true), indexWrite(ix, cur, false))
		case !reflect.DeepEqual(old, cur):
			iw := indexWrite(ix, cur, false)
			iw.Size = max(iw.Size, Size(old))
			iw.Units = WriteUnits(iw.Size)
			w.Indexes = append(w.Indexes, iw)
		}
	}
	return w
}

func indexWrite(ix ddb.Index, e Item, del bool) IndexWrite {
	size := Size(e)
	return IndexWrite{Index: ix.Name, PK: str(e[ix.PK]), Size: size, Units: WriteUnits(size), Delete: del}
}

// Entry returns item's entry in the index ix of schema s: the index's and
// the table's keys and the projected attributes; nil when item lacks the
// index's keys (a sparse index leaves it out).
func Entry(s *ddb.Schema, ix ddb.Index, item Item) Item {
	if item == nil || item[ix.PK] == nil || (ix.SK != "" && item[ix.SK] == nil) {
		return nil
	}
	keys := []string{s.PK, s.SK, ix.PK, ix.SK}
	if ix.ProjectionType() == types.ProjectionTypeAll {
		return item
	}
	e := Item{}
	for name, v := range item {
		if name != "" && (slices.Contains(keys, name) ||
			(ix.ProjectionType() == types.ProjectionTypeInclude && slices.Contains(ix.NonKeyAttributes, name))) {
			e[name] = v
		}
	}
	return e
}

func str(v types.AttributeValue) string {
	if s, ok := v.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
