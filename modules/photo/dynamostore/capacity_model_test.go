package dynamostore

import "github.com/pacerhq/pacer/sdk/ddb/capacity"

// CapacityModel is the photo table's capacity model (docs/capacity.md):
// for each operation, the DynamoDB calls, items and index entries it
// writes, its write and read units and the units it spends per kind of
// partition key, measured on real items (a typical photo: three bibs,
// two faces, a photographer) written by this store on DynamoDB Local.
// TestCapacityModel fails when they drift.
var CapacityModel = []capacity.Usage{
	{Op: "ingest (1 photo, 3 bibs)", Per: 1, Calls: 1, Items: 4, Entries: 4, MaxItem: 902, WCU: 8, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 3, "GSI2": 1},
		Keys:     map[string]float64{"W|GSI1|EVT#": 3, "W|GSI2|PHOTOGRAPHER#": 1, "W|table|ORG#": 8}},
	{Op: "ingest batch (25 photos, 3 bibs each)", Per: 25, Calls: 29, Items: 100, Entries: 100, MaxItem: 902, WCU: 100, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 75, "GSI2": 25},
		Keys:     map[string]float64{"W|GSI1|EVT#": 75, "W|GSI2|PHOTOGRAPHER#": 25, "W|table|ORG#": 100}},
	{Op: "search by bib (20)", Per: 1, Calls: 2, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 11,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|GSI1|EVT#": 1, "R|table|ORG#": 10}},
	{Op: "search by photographer (20, 1 event)", Per: 1, Calls: 1, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 2.5,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|GSI2|PHOTOGRAPHER#": 2.5}},
	{Op: "gallery (20)", Per: 1, Calls: 1, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 2.5,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|table|ORG#": 2.5}},
	{Op: "search by passing time (20, 2 photographers)", Per: 1, Calls: 2, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 3.5,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|GSI2|PHOTOGRAPHER#": 3.5}},
}
