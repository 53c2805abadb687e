package ddbtest

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// The codec benchmarks (sdk/ddb's, and the bench module's, which adds
// libraries the main module does not depend on) share the item, the codecs
// and the benchmark loops below, so every comparison measures the same
// thing.

// CodecRequest is the codec benchmarks' item: an AsyncEvent request's
// fields, tagged for attributevalue and for guregu/dynamo. The SDK fills
// PK, SK and entityType from RequestEntity.
type CodecRequest struct {
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

// RawRequest is the same item as hand-written code stores it: the key and
// type attributes are fields the caller fills (FillKey).
type RawRequest struct {
	PK         string `dynamodbav:"PK" dynamo:"PK"`
	SK         string `dynamodbav:"SK" dynamo:"SK"`
	EntityType string `dynamodbav:"entityType" dynamo:"entityType"`
	CodecRequest
}

// FillKey sets the key and type attributes as RequestEntity does.
func (r *RawRequest) FillKey() {
	r.PK, r.SK, r.EntityType = "REQ#"+r.RequestID, "META", "REQUEST"
}

// SampleRequest returns a request with every field set.
func SampleRequest() CodecRequest {
	return CodecRequest{
		RequestID: "01J9Z3Q4X8M2N5P7R9T1V3W5Y7", EventID: "evt-2024-seoul-marathon", UserID: "user-8f14e45f",
		EventType: "FIRST_COME", Status: "SUCCEEDED", UIPhase: "ANNOUNCED", UIResult: "WIN", ResultCode: "FIRST_COME_WIN",
		RequestedAt: 1718000000000, QueuedAt: 1718000000050, StartedAt: 1718000000300, FinishedAt: 1718000000420,
		IdempotencyKey: "evt-2024-seoul-marathon#user-8f14e45f",
		GSI1PK:         "USER#user-8f14e45f", GSI1SK: "QAT#1718000000050#REQ#01J9Z3Q4X8M2N5P7R9T1V3W5Y7",
		GSI2PK: "EVENT#evt-2024-seoul-marathon", GSI2SK: "QAT#1718000000050#REQ#01J9Z3Q4X8M2N5P7R9T1V3W5Y7",
		TTL: 1725776000,
	}
}

var requestPK = ddb.MustFormat("REQ#{requestId}")

// RequestEntity returns the SDK's entity for CodecRequest, on a DB without
// a client: for encoding and decoding only.
func RequestEntity() *ddb.Entity[CodecRequest] {
	schema := &ddb.Schema{PK: "PK", SK: "SK", Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"}, {Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"},
	}}
	t := ddb.New(nil, ddb.Config{CursorKey: []byte("bench")}).Table("AsyncEventTable", schema)
	return ddb.NewEntity(t, "REQUEST", func(r *CodecRequest) ddb.Key {
		return ddb.Key{PK: requestPK.Build(r.RequestID), SK: "META"}
	}, "GSI1", "GSI2")
}

// Codec is one way to encode and decode the request item.
type Codec struct {
	// Name labels the sub-benchmarks: impl=Name.
	Name string
	// Encode encodes r (a hand-written codec fills its key first).
	Encode func(r *RawRequest) (ddb.Item, error)
	// Decode decodes an item into a fresh value.
	Decode func(it ddb.Item) error
}

// Codecs returns the SDK's codec and raw attributevalue's.
func Codecs() []Codec {
	e := RequestEntity()
	return []Codec{{
		Name:   "sdk",
		Encode: func(r *RawRequest) (ddb.Item, error) { return e.Marshal(&r.CodecRequest) },
		Decode: func(it ddb.Item) error { _, err := e.Unmarshal(it); return err },
	}, {
		Name: "attributevalue",
		Encode: func(r *RawRequest) (ddb.Item, error) {
			r.FillKey()
			return attributevalue.MarshalMap(r)
		},
		Decode: func(it ddb.Item) error { var v RawRequest; return attributevalue.UnmarshalMap(it, &v) },
	}}
}

// BenchmarkEncode encodes the sample with each codec, one sub-benchmark
// each, so their ratios come from one run.
func BenchmarkEncode(b *testing.B, cs []Codec) {
	for _, c := range cs {
		b.Run("impl="+c.Name, func(b *testing.B) {
			r := RawRequest{CodecRequest: SampleRequest()}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Encode(&r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode decodes the SDK's item of the sample with each codec.
func BenchmarkDecode(b *testing.B, cs []Codec) {
	r := SampleRequest()
	it, err := RequestEntity().Marshal(&r)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cs {
		b.Run("impl="+c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Decode(it); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// CheckCodecs keeps the benchmarks honest: every codec encodes the sample
// to the same item, and decodes that item.
func CheckCodecs(t testing.TB, cs []Codec) {
	t.Helper()
	want := RawRequest{CodecRequest: SampleRequest()}
	want.FillKey()
	ref, err := attributevalue.MarshalMap(&want)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		r := RawRequest{CodecRequest: SampleRequest()}
		it, err := c.Encode(&r)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var got RawRequest
		if err := attributevalue.UnmarshalMap(it, &got); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got != want || len(it) != len(ref) {
			t.Fatalf("%s encodes %d attributes %+v\nwant %d %+v", c.Name, len(it), got, len(ref), want)
		}
		if err := c.Decode(it); err != nil {
			t.Fatalf("%s cannot decode its item: %v", c.Name, err)
		}
	}
}
