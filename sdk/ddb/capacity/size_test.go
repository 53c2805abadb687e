package capacity_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/capacity"
)

func TestSize(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	cases := []struct {
		name string
		item capacity.Item
		want int
	}{
		{"string", capacity.Item{"id": s("abc")}, 2 + 3},
		{"utf8", capacity.Item{"t": s("마라톤")}, 1 + 9},
		{"number 3 digits", capacity.Item{"n": n("123")}, 1 + 3},
		{"number 13 digits", capacity.Item{"queuedAt": n("1764150000123")}, 8 + 8},
		{"number zeros trimmed", capacity.Item{"n": n("1000")}, 1 + 2},
		{"negative decimal", capacity.Item{"n": n("-12.5")}, 1 + 3},
		{"bool", capacity.Item{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 2 + 1},
		{"list", capacity.Item{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{s("ab"), n("7")}}}, 1 + 3 + (1 + 2) + (1 + 2)},
		{"map", capacity.Item{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"w": n("4000")}}}, 1 + 3 + (1 + 1 + 2)},
		{"string set", capacity.Item{"ss": &types.AttributeValueMemberSS{Value: []string{"a", "bc"}}}, 2 + 3},
	}
	for _, c := range cases {
		if got := capacity.Size(c.item); got != c.want {
			t.Errorf("%s: Size = %d, want %d", c.name, got, c.want)
		}
	}
	for size, want := range map[int]int{1: 1, 1024: 1, 1025: 2, 4096: 4} {
		if got := capacity.WriteUnits(size); got != want {
			t.Errorf("WriteUnits(%d) = %d, want %d", size, got, want)
		}
	}
	for _, c := range []struct {
		size   int
		strong bool
		want   float64
	}{{100, true, 1}, {100, false, 0.5}, {4097, true, 2}, {8192, false, 1}} {
		if got := capacity.ReadUnits(c.size, c.strong); got != c.want {
			t.Errorf("ReadUnits(%d, %v) = %v, want %v", c.size, c.strong, got, c.want)
		}
	}
}

var costSchema = ddb.Schema{PK: "PK", SK: "SK", Indexes: []ddb.Index{
	{Name: "ALL", PK: "APK", SK: "ASK"},
	{Name: "KEYS", PK: "KPK", SK: "KSK", Projection: types.ProjectionTypeKeysOnly},
	{Name: "INC", PK: "KPK", SK: "KSK", Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"fixed"}},
}}

func TestCostIndexes(t *testing.T) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	base := capacity.Item{"PK": s("A"), "SK": s("B"), "APK": s("E"), "ASK": s("1"), "KPK": s("E"), "KSK": s("1"),
		"fixed": s("f"), "status": s("QUEUED")}
	moved := map[string]types.AttributeValue{}
	for k, v := range base {
		moved[k] = v
	}
	moved["status"] = s("PROCESSING")
	big := map[string]types.AttributeValue{}
	for k, v := range moved {
		big[k] = v
	}
	big["blob"] = s(strings.Repeat("x", 1500))

	// A new item: one put in each index.
	w := capacity.Cost(&costSchema, nil, base, true)
	if w.Units != 2 || len(w.Indexes) != 3 || w.IndexUnits("ALL") != 1 || w.IndexUnits("KEYS") != 1 {
		t.Fatalf("create: %+v", w)
	}
	// A status change: only the ALL index is written.
	w = capacity.Cost(&costSchema, base, moved, false)
	if w.Units != 1 || len(w.Indexes) != 1 || w.Indexes[0].Index != "ALL" {
		t.Fatalf("status change: %+v", w)
	}
	// Growing past 1 KB: 2 WCU on the table and the ALL index.
	w = capacity.Cost(&costSchema, moved, big, false)
	if w.Units != 2 || w.IndexUnits("ALL") != 2 || w.IndexUnits("KEYS") != 0 {
		t.Fatalf("growth: %+v", w)
	}
	// A key change: a delete and a put in every index keyed on it.
	rekeyed := map[string]types.AttributeValue{}
	for k, v := range base {
		rekeyed[k] = v
	}
	rekeyed["KSK"] = s("2")
	w = capacity.Cost(&costSchema, base, rekeyed, false)
	if len(w.Indexes) != 5 || !w.Indexes[1].Delete || w.Indexes[2].Delete {
		t.Fatalf("key change: %+v", w)
	}
	// An item without the index keys writes no entry (sparse index).
	w = capacity.Cost(&costSchema, nil, capacity.Item{"PK": s("A"), "SK": s("B")}, false)
	if len(w.Indexes) != 0 {
		t.Fatalf("sparse: %+v", w)
	}
}
