package ddb_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// benchRequest has the seeds' Request fields (async-event-table.md). The
// SDK fills PK, SK and entityType from the entity.
type benchRequest struct {
	RequestID      string `dynamodbav:"requestId"`
	EventID        string `dynamodbav:"eventId"`
	UserID         string `dynamodbav:"userId"`
	EventType      string `dynamodbav:"eventType"`
	Status         string `dynamodbav:"status"`
	UIPhase        string `dynamodbav:"uiPhase"`
	UIResult       string `dynamodbav:"uiResult,omitempty"`
	ResultCode     string `dynamodbav:"resultCode,omitempty"`
	RequestedAt    int64  `dynamodbav:"requestedAt"`
	QueuedAt       int64  `dynamodbav:"queuedAt,omitempty"`
	StartedAt      int64  `dynamodbav:"startedAt,omitempty"`
	FinishedAt     int64  `dynamodbav:"finishedAt,omitempty"`
	IdempotencyKey string `dynamodbav:"idempotencyKey"`
	GSI1PK         string `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK         string `dynamodbav:"GSI1SK,omitempty"`
	GSI2PK         string `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK         string `dynamodbav:"GSI2SK,omitempty"`
	TTL            int64  `dynamodbav:"ttl,omitempty"`
}

// rawRequest is the same item written by hand: the key and type attributes
// are fields the caller fills.
type rawRequest struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	EntityType string `dynamodbav:"entityType"`
	benchRequest
}

func sampleRequest() benchRequest {
	return benchRequest{
		RequestID: "01J9Z3Q4X8M2N5P7R9T1V3W5Y7", EventID: "evt-2024-seoul-marathon", UserID: "user-8f14e45f",
		EventType: "FIRST_COME", Status: "SUCCEEDED", UIPhase: "ANNOUNCED", UIResult: "WIN", ResultCode: "FIRST_COME_WIN",
		RequestedAt: 1718000000000, QueuedAt: 1718000000050, StartedAt: 1718000000300, FinishedAt: 1718000000420,
		IdempotencyKey: "evt-2024-seoul-marathon#user-8f14e45f",
		GSI1PK:         "USER#user-8f14e45f", GSI1SK: "QAT#1718000000050#REQ#01J9Z3Q4X8M2N5P7R9T1V3W5Y7",
		GSI2PK: "EVENT#evt-2024-seoul-marathon", GSI2SK: "QAT#1718000000050#REQ#01J9Z3Q4X8M2N5P7R9T1V3W5Y7",
		TTL: 1725776000,
	}
}

func benchEntity() *ddb.Entity[benchRequest] {
	db := ddb.New(nil, ddb.Config{CursorKey: []byte("bench")})
	t := db.Table("AsyncEventTable", &schema)
	return ddb.NewEntity(t, "REQUEST", func(r *benchRequest) ddb.Key {
		return ddb.Key{PK: reqPK.Build(r.RequestID), SK: "META"}
	}, "GSI1", "GSI2")
}

// Run the encode/decode benchmarks together so their ratios come from one
// run:
//
//	go test -run '^$' -bench 'Encode|Decode' -benchmem -count 8 ./sdk/ddb | benchstat -col /impl -
func BenchmarkEncode(b *testing.B) {
	b.Run("impl=sdk", func(b *testing.B) {
		e := benchEntity()
		r := sampleRequest()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.Marshal(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=attributevalue", func(b *testing.B) {
		r := rawRequest{benchRequest: sampleRequest()}
		b.ReportAllocs()
		for b.Loop() {
			r.PK, r.SK, r.EntityType = "REQ#"+r.RequestID, "META", "REQUEST"
			if _, err := attributevalue.MarshalMap(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	e := benchEntity()
	r := sampleRequest()
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
}

// TestEncodeMatchesRaw keeps the benchmark honest: both sides produce the
// same item.
func TestEncodeMatchesRaw(t *testing.T) {
	r := sampleRequest()
	got, err := benchEntity().Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	raw := rawRequest{PK: "REQ#" + r.RequestID, SK: "META", EntityType: "REQUEST", benchRequest: r}
	want, err := attributevalue.MarshalMap(&raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("sdk item has %d attributes, raw %d", len(got), len(want))
	}
	var a, b rawRequest
	if err := attributevalue.UnmarshalMap(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := attributevalue.UnmarshalMap(want, &b); err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Fatalf("sdk item %+v\nraw item %+v", a, b)
	}
}
