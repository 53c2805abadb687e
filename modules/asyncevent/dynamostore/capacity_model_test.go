package dynamostore

import "github.com/pacerhq/pacer/sdk/ddb/capacity"

// CapacityModel is AsyncEventTable's capacity model (docs/capacity.md):
// for each operation, the DynamoDB calls, items and index entries it
// writes, its write and read units and the units it spends per kind of
// partition key, measured on real items written by this store on
// DynamoDB Local (TestCapacityModel fails when they drift). projectAll
// selects ProjectAllSchema's GSI2 (projecting ALL) instead of Schema's
// narrow one.
func CapacityModel(projectAll bool) []capacity.Usage {
	if projectAll {
		return projectAllModel
	}
	return narrowModel
}

// The operations whose cost does not depend on GSI2's projection.
var (
	createEventUsage = capacity.Usage{Op: "create event", Per: 1, Calls: 2, Items: 6, Entries: 0, MaxItem: 186, WCU: 12, RCU: 0,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"W|table|EVENT#": 8, "W|table|EVENTS#": 4}}
	ingestUsage = capacity.Usage{Op: "ingest", Per: 1, Calls: 2, Items: 5, Entries: 4, MaxItem: 405, WCU: 10, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 1, "GSI2": 1, "GSI3": 2},
		Keys:     map[string]float64{"W|GSI1|USER#": 1, "W|GSI2|EVENT#": 1, "W|GSI3|PENDING#": 2, "W|table|IDEMP#": 2, "W|table|REQ#": 8}}
	statusPollUsage = capacity.Usage{Op: "status poll", Per: 1, Calls: 1, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 1,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|table|REQ#": 1}}
	userListUsage = capacity.Usage{Op: "user list", Per: 1, Calls: 1, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 0.5,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|GSI1|USER#": 0.5}}
)

var projectAllModel = []capacity.Usage{
	createEventUsage,
	ingestUsage,
	statusPollUsage,
	{Op: "decide (delivery)", Per: 1, Calls: 2, Items: 5, Entries: 4, MaxItem: 526, WCU: 10, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 2, "GSI2": 2},
		Keys:     map[string]float64{"W|GSI1|USER#": 2, "W|GSI2|EVENT#": 2, "W|table|EVENT#": 2, "W|table|REQ#": 8}},
	{Op: "candidate (arrival)", Per: 1, Calls: 1, Items: 2, Entries: 2, MaxItem: 506, WCU: 4, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 1, "GSI2": 1},
		Keys:     map[string]float64{"W|GSI1|USER#": 1, "W|GSI2|EVENT#": 1, "W|table|REQ#": 4}},
	{Op: "allocate (arrival)", Per: 49, Calls: 5, Items: 101, Entries: 98, MaxItem: 539, WCU: 200, RCU: 4,
		IndexWCU: map[string]int{"GSI1": 49, "GSI2": 49},
		Keys:     map[string]float64{"R|GSI2|EVENT#": 4, "W|GSI1|USER#": 49, "W|GSI2|EVENT#": 49, "W|table|EVENT#": 4, "W|table|REQ#": 196}},
	{Op: "admin list (20, status filter)", Per: 1, Calls: 1, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 3.5,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|GSI2|EVENT#": 3.5}},
	userListUsage,
}

var narrowModel = []capacity.Usage{
	createEventUsage,
	ingestUsage,
	statusPollUsage,
	{Op: "decide (delivery)", Per: 1, Calls: 2, Items: 5, Entries: 2, MaxItem: 527, WCU: 10, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 2},
		Keys:     map[string]float64{"W|GSI1|USER#": 2, "W|table|EVENT#": 2, "W|table|REQ#": 8}},
	{Op: "candidate (arrival)", Per: 1, Calls: 1, Items: 2, Entries: 1, MaxItem: 506, WCU: 4, RCU: 0,
		IndexWCU: map[string]int{"GSI1": 1},
		Keys:     map[string]float64{"W|GSI1|USER#": 1, "W|table|REQ#": 4}},
	{Op: "allocate (arrival)", Per: 49, Calls: 7, Items: 101, Entries: 49, MaxItem: 540, WCU: 200, RCU: 26.5,
		IndexWCU: map[string]int{"GSI1": 49},
		Keys:     map[string]float64{"R|GSI2|EVENT#": 1.5, "R|table|REQ#": 25, "W|GSI1|USER#": 49, "W|table|EVENT#": 4, "W|table|REQ#": 196}},
	{Op: "admin list (20, status filter)", Per: 1, Calls: 4, Items: 0, Entries: 0, MaxItem: 0, WCU: 0, RCU: 11.5,
		IndexWCU: map[string]int{},
		Keys:     map[string]float64{"R|GSI2|EVENT#": 1, "R|table|REQ#": 10.5}},
	userListUsage,
}

// ShardedCeiling is the ceiling of an event whose index is written over
// shards partitions (EventConfig.IndexShards), given the ceiling one
// partition sets: each partition takes the requests that hash to it, about
// 1/shards of them, so the event's GSI2 ceiling grows shards times. The
// event's table partition (its capacity item) is not sharded: the event's
// ceiling is the lower of this and that partition's.
func ShardedCeiling(one float64, shards int) float64 { return one * float64(max(shards, 1)) }
