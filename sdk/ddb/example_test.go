package ddb_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
)

var exampleSeq atomic.Int64

// exampleTable creates a fresh table on DynamoDB Local (started by TestMain;
// AWS_ENDPOINT_URL_DYNAMODB points at it) the way a service would at start.
func exampleTable(ctx context.Context, schema *ddb.Schema) *ddb.Table {
	cfg, err := awsclient.Load(ctx)
	if err != nil {
		panic(err)
	}
	db := ddb.New(awsclient.DynamoDB(cfg), ddb.Config{CursorKey: []byte("example-cursor-key-0123456789abcdef")})
	name := fmt.Sprintf("Example-%d-%d", time.Now().UnixNano()%1e9, exampleSeq.Add(1))
	table := db.Table(name, schema)
	if err := table.Ensure(ctx); err != nil {
		panic(err)
	}
	return table
}

// The example schema: AsyncEventTable's keys, GSIs and TTL.
var exampleSchema = ddb.Schema{
	PK: "PK", SK: "SK",
	Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"},
		{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"},
	},
	TTLAttribute: "ttl",
}

func ExampleFormat() {
	idemp := ddb.MustFormat("IDEMP#{eventId}#{userId}")
	qat := ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}")

	fmt.Println(idemp.Build("evt-1", "user-7"))
	fmt.Println(qat.Build(ddb.Millis(1718000000050), "r1"))
	// A '#' inside a value is escaped: it cannot forge a segment.
	fmt.Println(idemp.Build("evt#1", "user-7"))
	v, err := idemp.Parse("IDEMP#evt%231#user-7")
	fmt.Println(v, err)
	// Prefix is for begins_with on the sort key.
	fmt.Println(ddb.MustFormat("EVT#{eventId}#TIME#{createdAt}").Prefix("evt-1"))
	// Output:
	// IDEMP#evt-1#user-7
	// QAT#1718000000050#REQ#r1
	// IDEMP#evt%231#user-7
	// [evt#1 user-7] <nil>
	// EVT#evt-1#TIME#
}

type exampleLock struct {
	EventID   string `dynamodbav:"eventId"`
	UserID    string `dynamodbav:"userId"`
	RequestID string `dynamodbav:"requestId"`
}

func ExampleEntity_Create() {
	ctx := context.Background()
	table := exampleTable(ctx, &exampleSchema)
	idemp := ddb.MustFormat("IDEMP#{eventId}#{userId}")
	locks := ddb.NewEntity(table, "IDEMPOTENCY_LOCK", func(l *exampleLock) ddb.Key {
		return ddb.Key{PK: idemp.Build(l.EventID, l.UserID), SK: "LOCK"}
	})

	err := locks.Create(&exampleLock{EventID: "e1", UserID: "u1", RequestID: "r1"}).Run(ctx)
	fmt.Println("first:", err)

	// The duplicate fails, and the error carries the stored item: no second
	// read is needed to learn the original request.
	err = locks.Create(&exampleLock{EventID: "e1", UserID: "u1", RequestID: "r2"}).Run(ctx)
	var ce *ddb.ConditionError
	if errors.As(err, &ce) {
		var cur exampleLock
		if err := ce.Decode(&cur); err != nil {
			panic(err)
		}
		fmt.Println("duplicate of", cur.RequestID)
	}
	// Output:
	// first: <nil>
	// duplicate of r1
}

type exampleStatus string

type exampleRequest struct {
	RequestID string        `dynamodbav:"requestId"`
	Status    exampleStatus `dynamodbav:"status"`
	QueuedAt  int64         `dynamodbav:"queuedAt,omitempty"`
	GSI1PK    string        `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK    string        `dynamodbav:"GSI1SK,omitempty"`
}

func ExampleTransition() {
	ctx := context.Background()
	table := exampleTable(ctx, &exampleSchema)
	reqPK := ddb.MustFormat("REQ#{requestId}")
	requests := ddb.NewEntity(table, "REQUEST", func(r *exampleRequest) ddb.Key {
		return ddb.Key{PK: reqPK.Build(r.RequestID), SK: "META"}
	}, "GSI1")
	lifecycle := ddb.NewMachine("status", map[exampleStatus][]exampleStatus{
		"RECEIVED":   {"QUEUED"},
		"QUEUED":     {"PROCESSING"},
		"PROCESSING": {"SUCCEEDED", "REJECTED"},
	})
	k := ddb.Key{PK: reqPK.Build("r1"), SK: "META"}
	if err := requests.Create(&exampleRequest{RequestID: "r1", Status: "RECEIVED"}).Run(ctx); err != nil {
		panic(err)
	}

	// Allowed and conditional on the current status, with extra SETs.
	err := ddb.Transition(requests, k, lifecycle, "QUEUED", "RECEIVED").Set("queuedAt", 1718000000050).Run(ctx)
	fmt.Println("RECEIVED → QUEUED:", err)

	// Not declared: refused before any call.
	err = ddb.Transition(requests, k, lifecycle, "SUCCEEDED", "QUEUED").Run(ctx)
	fmt.Println("QUEUED → SUCCEEDED is a transition error:", errors.Is(err, ddb.ErrTransition))

	// Declared, but the item is no longer RECEIVED: the error carries it.
	err = ddb.Transition(requests, k, lifecycle, "QUEUED", "RECEIVED").Run(ctx)
	var ce *ddb.ConditionError
	if errors.As(err, &ce) {
		var cur exampleRequest
		if err := ce.Decode(&cur); err != nil {
			panic(err)
		}
		fmt.Println("already", cur.Status, "since", cur.QueuedAt)
	}
	// Output:
	// RECEIVED → QUEUED: <nil>
	// QUEUED → SUCCEEDED is a transition error: true
	// already QUEUED since 1718000000050
}

func ExampleQuery_Page() {
	ctx := context.Background()
	table := exampleTable(ctx, &exampleSchema)
	reqPK := ddb.MustFormat("REQ#{requestId}")
	userPK := ddb.MustFormat("USER#{userId}")
	qatSK := ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}")
	requests := ddb.NewEntity(table, "REQUEST", func(r *exampleRequest) ddb.Key {
		return ddb.Key{PK: reqPK.Build(r.RequestID), SK: "META"}
	}, "GSI1")
	var rs []*exampleRequest
	for i := 1; i <= 5; i++ {
		id := fmt.Sprintf("r%d", i)
		at := int64(1718000000000 + i)
		rs = append(rs, &exampleRequest{RequestID: id, Status: "QUEUED", QueuedAt: at,
			GSI1PK: userPK.Build("u1"), GSI1SK: qatSK.Build(ddb.Millis(at), id)})
	}
	if err := requests.BatchPut(ctx, rs); err != nil {
		panic(err)
	}

	// Newest first, two per page. The cursor is opaque, signed, and only
	// valid for this index, partition and direction.
	cursor := ""
	for {
		page, err := requests.Query("GSI1", userPK.Build("u1")).Desc().Limit(2).After(cursor).Page(ctx)
		if err != nil {
			panic(err)
		}
		for _, r := range page.Items {
			fmt.Print(r.RequestID, " ")
		}
		fmt.Println("| more:", page.Cursor != "")
		if page.Cursor == "" {
			break
		}
		cursor = page.Cursor
	}

	_, err := requests.Query("GSI1", userPK.Build("u2")).Desc().Limit(2).After(cursor + "x").Page(ctx)
	fmt.Println(errors.Is(err, ddb.ErrCursor))
	// Output:
	// r5 r4 | more: true
	// r3 r2 | more: true
	// r1 | more: false
	// true
}

type exampleCapacity struct {
	EventID   string `dynamodbav:"eventId"`
	Remaining int64  `dynamodbav:"capacityRemaining"`
}

func ExampleUpdate_Bounded() {
	ctx := context.Background()
	table := exampleTable(ctx, &exampleSchema)
	evPK := ddb.MustFormat("EVENT#{eventId}")
	caps := ddb.NewEntity(table, "EVENT_CAPACITY", func(c *exampleCapacity) ddb.Key {
		return ddb.Key{PK: evPK.Build(c.EventID), SK: "CAPACITY"}
	})
	k := ddb.Key{PK: evPK.Build("e1"), SK: "CAPACITY"}
	if err := caps.Put(&exampleCapacity{EventID: "e1", Remaining: 2}).Run(ctx); err != nil {
		panic(err)
	}
	zero := int64(0)
	for i := 0; i < 3; i++ {
		err := caps.Update(k).Bounded("capacityRemaining", -1, &zero, nil).Run(ctx)
		fmt.Println("take a seat:", err == nil, errors.Is(err, ddb.ErrConditionFailed))
	}
	// Output:
	// take a seat: true false
	// take a seat: true false
	// take a seat: false true
}

func ExampleDB_Transact() {
	ctx := context.Background()
	table := exampleTable(ctx, &exampleSchema)
	idemp := ddb.MustFormat("IDEMP#{eventId}#{userId}")
	reqPK := ddb.MustFormat("REQ#{requestId}")
	locks := ddb.NewEntity(table, "IDEMPOTENCY_LOCK", func(l *exampleLock) ddb.Key {
		return ddb.Key{PK: idemp.Build(l.EventID, l.UserID), SK: "LOCK"}
	})
	requests := ddb.NewEntity(table, "REQUEST", func(r *exampleRequest) ddb.Key {
		return ddb.Key{PK: reqPK.Build(r.RequestID), SK: "META"}
	}, "GSI1")

	// The lock and the request are written together or not at all.
	ingest := func(requestID string) error {
		return table.DB().Transact(ctx,
			locks.Create(&exampleLock{EventID: "e1", UserID: "u1", RequestID: requestID}).Label("lock"),
			requests.Create(&exampleRequest{RequestID: requestID, Status: "RECEIVED"}).Label("request"),
		)
	}
	fmt.Println("first:", ingest("r1"))

	err := ingest("r2")
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("lock"); r != nil {
			var cur exampleLock
			if err := r.Decode(&cur); err != nil {
				panic(err)
			}
			fmt.Println("duplicate of", cur.RequestID)
		}
	}
	_, err = requests.Get(ctx, ddb.Key{PK: reqPK.Build("r2"), SK: "META"})
	fmt.Println("r2 written:", !errors.Is(err, ddb.ErrNotFound))
	// Output:
	// first: <nil>
	// duplicate of r1
	// r2 written: false
}
