package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Limits are DynamoDB's per-partition throughput limits: a partition of
// a table or of a GSI takes at most this many units per second.
const (
	PartitionWCU = 1000
	PartitionRCU = 3000
)

// Markdown renders a model as a table, one row per operation, its
// figures per operation (a figure of Per operations divided by Per).
func Markdown(us []Usage) string {
	var b strings.Builder
	b.WriteString("| operation | calls | items written | index entries | largest item (B) | table WCU | index WCU | RCU | units per partition key |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	for _, u := range us {
		per := float64(max(u.Per, 1))
		var ix, keys []string
		for _, k := range slices.Sorted(maps.Keys(u.IndexWCU)) {
			ix = append(ix, fmt.Sprintf("%s %s", k, num(float64(u.IndexWCU[k])/per)))
		}
		for _, k := range slices.Sorted(maps.Keys(u.Keys)) {
			keys = append(keys, fmt.Sprintf("%s %s", strings.ReplaceAll(k, "|", " "), num(u.Keys[k]/per)))
		}
		op := u.Op
		if u.Per > 1 {
			op = fmt.Sprintf("%s, per op of %d", op, u.Per)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", op, num(float64(u.Calls)/per),
			num(float64(u.Items)/per), num(float64(u.Entries)/per), u.MaxItem, num(float64(u.WCU)/per),
			orDash(strings.Join(ix, ", ")), num(u.RCU/per), orDash(strings.Join(keys, ", ")))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// num prints a figure with at most two decimals.
func num(f float64) string {
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
	if s == "" || s == "-0" {
		return "0"
	}
	return s
}

// Units sums, over the operations ops of the model us, the units one of
// each spends on the partition key kind key (a Keys entry, see KeyKind).
func Units(us []Usage, key string, ops ...string) float64 {
	total := 0.0
	for _, u := range us {
		if slices.Contains(ops, u.Op) {
			total += u.PerOp(key)
		}
	}
	return total
}

// Ceiling is the most flows a second one partition of kind key takes
// when each flow runs ops once: the partition's limit over the units a
// flow spends on it (0 when it spends none).
func Ceiling(us []Usage, key string, ops ...string) float64 {
	u := Units(us, key, ops...)
	if u == 0 {
		return 0
	}
	limit := float64(PartitionWCU)
	if strings.HasPrefix(key, "R|") {
		limit = PartitionRCU
	}
	return limit / u
}

// CeilingRow is one row of a ceilings table: a flow on one partition.
type CeilingRow struct {
	Flow string
	Ops  []string
	Keys []string
}

// CeilingMarkdown renders, for each row, the units the flow spends on
// each key and the rate at which that partition throttles; the lowest
// is marked as what throttles first.
func CeilingMarkdown(us []Usage, rows []CeilingRow) string {
	var b strings.Builder
	b.WriteString("| flow | partition | units per flow | ceiling (flows/s) |\n|---|---|---|---|\n")
	for _, r := range rows {
		first := ""
		low := 0.0
		for _, k := range r.Keys {
			if c := Ceiling(us, k, r.Ops...); c > 0 && (low == 0 || c < low) {
				low, first = c, k
			}
		}
		for _, k := range r.Keys {
			c := Ceiling(us, k, r.Ops...)
			if c == 0 {
				continue
			}
			mark := ""
			if k == first {
				mark = " **(first)**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s%s |\n", r.Flow, strings.ReplaceAll(k, "|", " "), num(Units(us, k, r.Ops...)), num(float64(int(c))), mark)
		}
	}
	return b.String()
}
