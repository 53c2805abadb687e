package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Usage is what an operation (or Per of them) costs: the figures of a
// capacity model, as measured by a Meter and as written down in a model
// table that a test compares with the measurement.
type Usage struct {
	// Op names the operation; Per is how many operations the figures
	// cover (an allocator batch decides 49 requests at once).
	Op  string
	Per int
	// Calls is the DynamoDB calls made.
	Calls int
	// Items is the table items written (puts, updates, deletes); Entries
	// the index entries written (a key change writes two).
	Items, Entries int
	// MaxItem is the largest item written, in bytes.
	MaxItem int
	// WCU is the table's write units; IndexWCU each index's.
	WCU      int
	IndexWCU map[string]int
	// RCU is the read units, table and indexes.
	RCU float64
	// Keys are the units spent per kind of partition key, as
	// "W|<index or table>|<key prefix>" and "R|...": the key prefix is the
	// key's text up to its first '#' ("EVENT#", "REQ#"...), one partition
	// per event, request, user... in a measurement of one of each.
	Keys map[string]float64
}

// Measure sums calls into a Usage.
func Measure(op string, per int, calls []Call) Usage {
	u := Usage{Op: op, Per: per, IndexWCU: map[string]int{}, Keys: map[string]float64{}}
	for _, c := range calls {
		u.Calls++
		for _, w := range slices.Concat(c.Writes, c.Checks) {
			u.WCU += w.Units
			u.Keys[KeyKind("W", "table", w.PK)] += float64(w.Units)
			for _, iw := range w.Indexes {
				u.Entries++
				u.IndexWCU[iw.Index] += iw.Units
				u.Keys[KeyKind("W", iw.Index, iw.PK)] += float64(iw.Units)
			}
		}
		for _, w := range c.Writes {
			u.Items++
			u.MaxItem = max(u.MaxItem, w.Size)
		}
		for _, r := range c.Reads {
			u.RCU += r.Units
			ix := r.Index
			if ix == "" {
				ix = "table"
			}
			u.Keys[KeyKind("R", ix, r.PK)] += r.Units
		}
	}
	for k, v := range u.IndexWCU {
		if v == 0 {
			delete(u.IndexWCU, k)
		}
	}
	return u
}

// KeyKind is the Keys entry of units of kind ("W" or "R") spent on the
// partition pk of index ("table" for the table).
func KeyKind(kind, index, pk string) string {
	if i := strings.IndexByte(pk, '#'); i >= 0 {
		pk = pk[:i+1]
	}
	return kind + "|" + index + "|" + pk
}

// PerOp is the units one operation spends on a kind of partition key.
func (u Usage) PerOp(key string) float64 { return u.Keys[key] / float64(max(u.Per, 1)) }

// SizeSlack is how many bytes a measured item size may differ from the
// model's: numbers such as timestamps are stored without their trailing
// zeroes, so an item's size varies by a few bytes from run to run.
const SizeSlack = 8

// Diff lists how got differs from the model u ("" when it does not).
func (u Usage) Diff(got Usage) string {
	var d []string
	f := func(name string, want, have any) {
		if fmt.Sprint(want) != fmt.Sprint(have) {
			d = append(d, fmt.Sprintf("%s: model %v, measured %v", name, want, have))
		}
	}
	f("Per", u.Per, got.Per)
	f("Calls", u.Calls, got.Calls)
	f("Items", u.Items, got.Items)
	f("Entries", u.Entries, got.Entries)
	if got.MaxItem < u.MaxItem-SizeSlack || got.MaxItem > u.MaxItem+SizeSlack {
		d = append(d, fmt.Sprintf("MaxItem: model %d±%d, measured %d", u.MaxItem, SizeSlack, got.MaxItem))
	}
	f("WCU", u.WCU, got.WCU)
	f("RCU", u.RCU, got.RCU)
	for _, k := range slices.Sorted(maps.Keys(merge(u.IndexWCU, got.IndexWCU))) {
		f("IndexWCU["+k+"]", u.IndexWCU[k], got.IndexWCU[k])
	}
	for _, k := range slices.Sorted(maps.Keys(merge(u.Keys, got.Keys))) {
		f("Keys["+k+"]", u.Keys[k], got.Keys[k])
	}
	return strings.Join(d, "; ")
}

func merge[V any](a, b map[string]V) map[string]V {
	m := maps.Clone(a)
	if m == nil {
		m = map[string]V{}
	}
	maps.Copy(m, b)
	return m
}

// GoString prints u as a Go literal, for pasting a measurement into a
// model table.
func (u Usage) GoString() string {
	var b strings.Builder
	fmt.Fprintf(&b, "{Op: %q, Per: %d, Calls: %d, Items: %d, Entries: %d, MaxItem: %d, WCU: %d, RCU: %v,\n\t\tIndexWCU: map[string]int{",
		u.Op, u.Per, u.Calls, u.Items, u.Entries, u.MaxItem, u.WCU, u.RCU)
	for i, k := range slices.Sorted(maps.Keys(u.IndexWCU)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %d", k, u.IndexWCU[k])
	}
	b.WriteString("},\n\t\tKeys: map[string]float64{")
	for i, k := range slices.Sorted(maps.Keys(u.Keys)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q: %v", k, u.Keys[k])
	}
	b.WriteString("}},")
	return b.String()
}
