package asyncevent_test

import (
	"context"
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// CheckCapacity checks the open FIRST_COME events, at most max of them,
// and names those whose seat count disagrees with their SUCCEEDED requests.
func TestCheckCapacity(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "a", 3)
	firstCome(t, env, "b", 3)
	firstCome(t, env, "closed", 3)
	if _, err := env.Admin.CloseEvent(ctx, "closed"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lot", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	checked, broken, err := env.Operations.CheckCapacity(ctx, 100)
	if err != nil || checked != 2 || len(broken) != 0 {
		t.Fatalf("healthy: checked %d, broken %v, %v", checked, broken, err)
	}
	// A seat taken with no SUCCEEDED request behind it.
	if _, err := env.DDB.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(env.DDB.Table.Name()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "EVENT#b"}, "SK": &types.AttributeValueMemberS{Value: "CAPACITY"},
		},
		UpdateExpression:          aws.String("SET capacityRemaining = :r"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberN{Value: "2"}},
	}); err != nil {
		t.Fatal(err)
	}
	checked, broken, err = env.Operations.CheckCapacity(ctx, 100)
	if err != nil || checked != 2 || !slices.Equal(broken, []string{"b"}) {
		t.Fatalf("broken b: checked %d, broken %v, %v", checked, broken, err)
	}
	if checked, _, err = env.Operations.CheckCapacity(ctx, 1); err != nil || checked != 1 {
		t.Fatalf("max 1: checked %d, %v", checked, err)
	}
}

// listCounter counts the store's listings of open events (a Query on
// DynamoDB). If set, during runs in the middle of a listing, and the
// listing leaves out the event hide, as a paged listing that had passed
// its key when it was created would.
type listCounter struct {
	asyncevent.CapacityReader
	lists  atomic.Int64
	hide   string
	during func()
}

func (c *listCounter) OpenEvents(ctx context.Context, t asyncevent.EventType) iter.Seq2[string, error] {
	c.lists.Add(1)
	return func(yield func(string, error) bool) {
		if c.during != nil {
			c.during()
		}
		for id, err := range c.CapacityReader.OpenEvents(ctx, t) {
			if err == nil && id == c.hide {
				continue
			}
			if !yield(id, err) {
				return
			}
		}
	}
}

// CheckCapacity lists the open events (a Query) at most every
// OpenEventsEvery; in between it checks what that listing found and the
// events this process has admitted a participation to since, those first,
// so an event with traffic here is checked from its first participation
// even when max leaves others out, and one closed here drops out. An event
// participated in while a listing runs is kept, though the listing missed
// it.
func TestCheckCapacityListsOpenEventsRarely(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	store := &listCounter{CapacityReader: env.Store}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// One process's roles: their EventCache is shared.
	events := asyncevent.NewEventCache(0)
	ingest := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: env.Store, Events: env.Store, Queue: env.Queue, Cache: events, Now: clock})
	admin := asyncevent.NewAdmin(asyncevent.AdminConfig{Events: env.Store, Requests: env.Store, Draw: env.Store, Cache: events, Now: clock})
	ops := asyncevent.NewOperations(asyncevent.OperationsConfig{Requests: env.Store, Events: env.Store, Capacity: store, LockJobs: env.Store,
		Cache: events, OpenEventsEvery: time.Minute, Lateness: asyncevent.Lateness{IndexLag: -1}, Now: clock})
	check := func(step string, wantChecked int, wantLists int64) {
		t.Helper()
		checked, broken, err := ops.CheckCapacity(ctx, 100)
		if err != nil || checked != wantChecked || len(broken) != 0 || store.lists.Load() != wantLists {
			t.Fatalf("%s: checked %d, broken %v, %v, %d listings; want %d checked, %d listings", step, checked, broken, err, store.lists.Load(), wantChecked, wantLists)
		}
	}
	firstCome(t, env, "listed", 3) // env.Admin: another replica
	check("first check", 1, 1)
	firstCome(t, env, "unseen", 3)
	firstCome(t, env, "seen", 3)
	participate(t, ingest, "seen", "u1")
	check("an event that had a participation here", 2, 1)
	breakCapacity(t, env, "seen")
	if checked, broken, err := ops.CheckCapacity(ctx, 1); err != nil || checked != 1 || !slices.Equal(broken, []string{"seen"}) {
		t.Fatalf("max 1: checked %d, broken %v, %v; want the event with traffic here first (broken)", checked, broken, err)
	}
	if _, err := admin.CloseEvent(ctx, "seen"); err != nil {
		t.Fatal(err)
	}
	check("the event closed here", 1, 1)
	firstCome(t, env, "late", 3)
	store.hide, store.during = "late", func() { participate(t, ingest, "late", "u1") }
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	check("a minute later: listed again, and the event read during the listing kept", 3, 2)
	store.during = nil
	check("and not again", 3, 2)
}

// breakCapacity takes a seat of eventID with no SUCCEEDED request behind it.
func breakCapacity(t *testing.T, env *asynceventtest.Env, eventID string) {
	t.Helper()
	if _, err := env.DDB.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(env.DDB.Table.Name()),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "EVENT#" + eventID}, "SK": &types.AttributeValueMemberS{Value: "CAPACITY"},
		},
		UpdateExpression:          aws.String("SET capacityRemaining = capacityRemaining - :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	}); err != nil {
		t.Fatal(err)
	}
}

// decideDuringRead takes a seat for a request once, right after the
// first read of the event's requests: between EventStats' reads of the
// requests and of the capacity, as a worker's decision can land.
type decideDuringRead struct {
	asyncevent.AdminReader
	decide func()
	once   sync.Once
}

func (d *decideDuringRead) AllEventRequests(ctx context.Context, eventID string) iter.Seq2[*asyncevent.Request, error] {
	return func(yield func(*asyncevent.Request, error) bool) {
		for r, err := range d.AdminReader.AllEventRequests(ctx, eventID) {
			if !yield(r, err) {
				return
			}
		}
		d.once.Do(d.decide)
	}
}

// A decision between EventStats' reads does not make a sound event look
// broken: the counts are read again.
func TestEventStatsThroughADecision(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	firstCome(t, env, "race", 3)
	id := participate(t, env.Ingest, "race", "u1").RequestID
	now := time.Now().UnixMilli()
	if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: id, EventID: "race", UserID: "u1",
		From: []asyncevent.Status{asyncevent.StatusQueued}, To: asyncevent.StatusProcessing, At: now, StartedAt: now, KeepQueuedAt: true}); err != nil {
		t.Fatal(err)
	}
	store := &decideDuringRead{AdminReader: env.Store, decide: func() {
		at := time.Now().UnixMilli()
		if err := env.Store.Transition(ctx, &asyncevent.Transition{RequestID: id, EventID: "race", UserID: "u1",
			From: []asyncevent.Status{asyncevent.StatusProcessing}, To: asyncevent.StatusSucceeded, At: at, FinishedAt: at,
			UIResult: asyncevent.ResultSuccess, ResultCode: asyncevent.CodeSuccess, TakeSeat: true}); err != nil {
			t.Error(err)
		}
	}}
	admin := asyncevent.NewAdmin(asyncevent.AdminConfig{Events: env.Store, Requests: store, Draw: env.Store, Lateness: asyncevent.Lateness{IndexLag: -1}})
	st, err := admin.EventStats(ctx, "race")
	if err != nil || !st.InvariantOK || st.ByStatus[asyncevent.StatusSucceeded] != 1 || st.CapacityRemaining != 2 {
		t.Fatalf("stats through a decision: %+v, %v; want the invariant to hold with 1 SUCCEEDED and 2 seats left", st, err)
	}
}
