package ddb_test

import (
	"github.com/pacerhq/pacer/sdk/ddb"
)

// The test schema mirrors AsyncEventTable.
var schema = ddb.Schema{
	PK: "PK", SK: "SK",
	Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"},
		{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"},
	},
	TTLAttribute: "ttl",
}

type status string

const (
	received   status = "RECEIVED"
	queued     status = "QUEUED"
	processing status = "PROCESSING"
	succeeded  status = "SUCCEEDED"
	rejected   status = "REJECTED"
)

var lifecycle = ddb.NewMachine("status", map[status][]status{
	received:   {queued},
	queued:     {processing},
	processing: {succeeded, rejected},
})

var (
	reqPK  = ddb.MustFormat("REQ#{requestId}")
	userPK = ddb.MustFormat("USER#{userId}")
	qatSK  = ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}")
	capPK  = ddb.MustFormat("EVENT#{eventId}")
)

type request struct {
	RequestID string `dynamodbav:"requestId"`
	UserID    string `dynamodbav:"userId"`
	Status    status `dynamodbav:"status"`
	GSI1PK    string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK    string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK    string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK    string `dynamodbav:"GSI2SK,omitempty"`
}

func requestKey(id string) ddb.Key { return ddb.Key{PK: reqPK.Build(id), SK: "META"} }

type capacity struct {
	EventID   string `dynamodbav:"eventId"`
	Remaining int64  `dynamodbav:"capacityRemaining"`
	GSI1PK    string `dynamodbav:"GSI1PK,omitempty"`
}

func capacityKey(ev string) ddb.Key { return ddb.Key{PK: capPK.Build(ev), SK: "CAPACITY"} }

func entities(t *ddb.Table) (*ddb.Entity[request], *ddb.Entity[capacity]) {
	reqs := ddb.NewEntity(t, "REQUEST", func(r *request) ddb.Key { return requestKey(r.RequestID) }, "GSI1", "GSI2")
	caps := ddb.NewEntity(t, "CAPACITY", func(c *capacity) ddb.Key { return capacityKey(c.EventID) })
	return reqs, caps
}
