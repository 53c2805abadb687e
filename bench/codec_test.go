package bench

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/guregu/dynamo/v2"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// request has the seeds' Request fields; the SDK adds PK, SK, entityType.
type request struct {
	RequestID      string `dynamodbav:"requestId" dynamo:"requestId"`
	EventID        string `dynamodbav:"eventId" dynamo:"eventId"`
	UserID         string `dynamodbav:"userId" dynamo:"userId"`
	EventType      string `dynamodbav:"eventType" dynamo:"eventType"`
	Status         string `dynamodbav:"status" dynamo:"status"`
	UIPhase        string `dynamodbav:"uiPhase" dynamo:"uiPhase"`
	UIResult       string `dynamodbav:"uiResult,omitempty" dynamo:"uiResult,omitempty"`
	ResultCode     string `dynamodbav:"resultCode,omitempty" dynamo:"resultCode,omitempty"`
	RequestedAt    int64  `dynamodbav:"requestedAt" dynamo:"requestedAt"`
	QueuedAt       int64  `dynamodbav:"queuedAt,omitempty" dynamo:"queuedAt,omitempty"`
	StartedAt      int64  `dynamodbav:"startedAt,omitempty" dynamo:"startedAt,omitempty"`
	FinishedAt     int64  `dynamodbav:"finishedAt,omitempty" dynamo:"finishedAt,omitempty"`
	IdempotencyKey string `dynamodbav:"idempotencyKey" dynamo:"idempotencyKey"`
	GSI1PK         string `dynamodbav:"GSI1PK,omitempty" dynamo:"GSI1PK,omitempty"`
	GSI1SK         string `dynamodbav:"GSI1SK,omitempty" dynamo:"GSI1SK,omitempty"`
	GSI2PK         string `dynamodbav:"GSI2PK,omitempty" dynamo:"GSI2PK,omitempty"`
	GSI2SK         string `dynamodbav:"GSI2SK,omitempty" dynamo:"GSI2SK,omitempty"`
	TTL            int64  `dynamodbav:"ttl,omitempty" dynamo:"ttl,omitempty"`
}

// rawRequest carries its key and type as fields, as hand-written code does.
type rawRequest struct {
	PK         string `dynamodbav:"PK" dynamo:"PK"`
	SK         string `dynamodbav:"SK" dynamo:"SK"`
	EntityType string `dynamodbav:"entityType" dynamo:"entityType"`
	request
}

var reqPK = ddb.MustFormat("REQ#{requestId}")

func sample() request {
	return request{
		RequestID: "01J9Z3Q4X8M2N5P7R9T1V3W5Y7", EventID: "evt-2024-seoul-marathon", UserID: "user-8f14e45f",
		EventType: "FIRST_COME", Status: "SUCCEEDED", UIPhase: "ANNOUNCED", UIResult: "WIN", ResultCode: "FIRST_COME_WIN",
		RequestedAt: 1718000000000, QueuedAt: 1718000000050, StartedAt: 1718000000300, FinishedAt: 1718000000420,
		IdempotencyKey: "evt-2024-seoul-marathon#user-8f14e45f",
		GSI1PK:         "USER#user-8f14e45f", GSI1SK: "QAT#1718000000050#REQ#01J9Z3Q4X8M2N5P7R9T1V3W5Y7",
		GSI2PK: "EVENT#evt-2024-seoul-marathon", GSI2SK: "QAT#1718000000050#REQ#01J9Z3Q4X8M2N5P7R9T1V3W5Y7",
		TTL: 1725776000,
	}
}

func entity() *ddb.Entity[request] {
	schema := &ddb.Schema{PK: "PK", SK: "SK", Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"}, {Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"},
	}}
	t := ddb.New(nil, ddb.Config{CursorKey: []byte("bench")}).Table("AsyncEventTable", schema)
	return ddb.NewEntity(t, "REQUEST", func(r *request) ddb.Key { return ddb.Key{PK: reqPK.Build(r.RequestID), SK: "META"} }, "GSI1", "GSI2")
}

func BenchmarkEncode(b *testing.B) {
	b.Run("impl=sdk", func(b *testing.B) {
		e, r := entity(), sample()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Marshal(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		r := rawRequest{request: sample()}
		b.ReportAllocs()
		for b.Loop() {
			r.PK, r.SK, r.EntityType = "REQ#"+r.RequestID, "META", "REQUEST"
			if _, err := attributevalue.MarshalMap(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=guregu", func(b *testing.B) {
		r := rawRequest{request: sample()}
		b.ReportAllocs()
		for b.Loop() {
			r.PK, r.SK, r.EntityType = "REQ#"+r.RequestID, "META", "REQUEST"
			if _, err := dynamo.MarshalItem(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	e, r := entity(), sample()
	it, err := e.Marshal(&r)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("impl=sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Unmarshal(it); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v rawRequest
			if err := attributevalue.UnmarshalMap(it, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=guregu", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v rawRequest
			if err := dynamo.UnmarshalItem(it, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// All three produce the same item.
func TestSameItem(t *testing.T) {
	r := sample()
	sdk, err := entity().Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawRequest{PK: "REQ#" + r.RequestID, SK: "META", EntityType: "REQUEST", request: r}
	g, err := dynamo.MarshalItem(&raw)
	if err != nil {
		t.Fatal(err)
	}
	var a, c rawRequest
	if err := attributevalue.UnmarshalMap(sdk, &a); err != nil {
		t.Fatal(err)
	}
	if err := dynamo.UnmarshalItem(g, &c); err != nil {
		t.Fatal(err)
	}
	if a != raw || c != raw || len(sdk) != len(g) {
		t.Fatalf("sdk %+v\nguregu %+v\nwant %+v", a, c, raw)
	}
}
