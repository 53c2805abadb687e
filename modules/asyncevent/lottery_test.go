package asyncevent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
)

// independentWinners is a second implementation of the draw: sort the
// entries by hex(SHA-256(seed bytes || requestId)), take the first k.
func independentWinners(seedHex string, ids []string, k int) []string {
	seed, _ := hex.DecodeString(seedHex)
	type e struct{ id, h string }
	es := make([]e, len(ids))
	for i, id := range ids {
		sum := sha256.Sum256(append(append([]byte{}, seed...), id...))
		es[i] = e{id, hex.EncodeToString(sum[:])}
	}
	sort.Slice(es, func(i, j int) bool {
		if es[i].h != es[j].h {
			return es[i].h < es[j].h
		}
		return es[i].id < es[j].id
	})
	out := []string{}
	for _, x := range es[:min(k, len(es))] {
		out = append(out, x.id)
	}
	return out
}

// 300 entries, K = 50: entries wait in COLLECTING; the draw after the
// cutoff picks exactly 50 winners, reproducibly, resumably, and as an
// independent implementation recomputes from the revealed seed.
func TestLottery(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64 // the admin's clock runs ahead to pass the cutoff
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, Admin: asyncevent.AdminConfig{DrawGrace: time.Second}})
	cutoff := time.Now().Add(time.Hour)
	cfg, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lotto", EventType: asyncevent.Lottery, Winners: 50,
		LotteryCutoffAt: cutoff.UnixMilli(), AnnouncedAt: cutoff.Add(time.Hour).UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SeedCommitment == "" || cfg.RevealedSeed() != "" {
		t.Fatalf("config %+v", cfg)
	}
	commitment := cfg.SeedCommitment
	env.StartWorkers(t, 2, consumer.Config{})
	ids := make([]string, 300)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	for i := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ids[i] = participate(t, env.Ingest, "lotto", fmt.Sprintf("p%03d", i)).RequestID
		})
	}
	wg.Wait()
	asynceventtest.Eventually(t, 60*time.Second, "300 entries collecting", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "lotto")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] == 300, err
	})
	r := env.Request(t, ids[0])
	if r.UIPhase != asyncevent.PhaseCollecting || r.UIResult != asyncevent.ResultPending || r.LotteryCutoffAt != cutoff.UnixMilli() {
		t.Fatalf("entry %+v", r)
	}
	if _, err := env.Admin.Draw(ctx, "lotto", ""); !errors.Is(err, asyncevent.ErrDrawTooEarly) {
		t.Fatalf("draw before the cutoff: %v", err)
	}
	shift.Store(int64(time.Hour + 2*time.Second))
	// After the cutoff entries are refused with a clear error.
	if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "lotto", UserID: "late"}); !errors.Is(err, asyncevent.ErrLotteryClosed) {
		t.Fatalf("late entry: %v", err)
	}

	// A draw that crashes part way (writes fail after 100 decisions)...
	var n atomic.Int64
	env.Dynamo.SetTxFault(func(*dynamodb.TransactWriteItemsInput) error {
		if n.Add(1) > 100 {
			return asynceventtest.Throttle
		}
		return nil
	})
	if _, err := env.Admin.Draw(ctx, "lotto", ""); err == nil {
		t.Fatal("the faulty draw succeeded")
	}
	env.Dynamo.SetTxFault(nil)
	mid, _ := env.Admin.EventStats(ctx, "lotto")
	if ev, _ := env.Admin.GetEvent(ctx, "lotto"); ev.Status != asyncevent.EventDrawing || mid.ByStatus[asyncevent.StatusProcessing] == 0 {
		t.Fatalf("after the crash: event %s, %v", ev.Status, mid.ByStatus)
	}
	// ...is resumed by calling it again.
	res, err := env.Admin.Draw(ctx, "lotto", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Winners) != 50 || res.Entries != 300 || res.SeedCommitment != commitment {
		t.Fatalf("draw %+v", res)
	}
	seed, _ := hex.DecodeString(res.Seed)
	if asyncevent.Commit(seed) != commitment {
		t.Fatal("revealed seed does not match the commitment published at creation")
	}
	if want := independentWinners(res.Seed, ids, 50); !slices.Equal(res.Winners, want) {
		t.Fatalf("winners differ from the independent recomputation:\n got %v\nwant %v", res.Winners, want)
	}
	again, err := env.Admin.Draw(ctx, "lotto", "")
	if err != nil || !slices.Equal(again.Winners, res.Winners) {
		t.Fatalf("re-run: %v %v", again, err)
	}
	winners := map[string]bool{}
	for _, id := range res.Winners {
		winners[id] = true
	}
	count := map[asyncevent.ResultCode]int{}
	for _, id := range ids {
		r := env.Request(t, id)
		count[r.ResultCode]++
		want := asyncevent.CodeRejectedLotteryLose
		if winners[id] {
			want = asyncevent.CodeLotteryWin
		}
		if r.ResultCode != want || r.UIPhase != asyncevent.PhaseAnnounced || r.FinishedAt == 0 || r.LotteryTicket == "" {
			t.Fatalf("request %+v, want %s", r, want)
		}
		checkLogs(t, env, r)
	}
	if count[asyncevent.CodeLotteryWin] != 50 || count[asyncevent.CodeRejectedLotteryLose] != 250 {
		t.Fatalf("results %v", count)
	}
	ev, _ := env.Admin.GetEvent(ctx, "lotto")
	if ev.Status != asyncevent.EventAnnounced || ev.RevealedSeed() != res.Seed || ev.DrawWinners != 50 {
		t.Fatalf("event %+v", ev)
	}

	// A message that reaches a worker after the draw started is rejected
	// with a clear code, not entered.
	late := &asyncevent.Request{RequestID: "late1", EventID: "lotto", UserID: "late", EventType: asyncevent.Lottery, Status: asyncevent.StatusReceived, RequestedAt: time.Now().UnixMilli()}
	if _, _, err := env.Store.CreateRequest(ctx, late, 0); err != nil {
		t.Fatal(err)
	}
	if err := env.Queue.Send(ctx, asyncevent.Message{RequestID: "late1", EventID: "lotto", UserID: "late", EventType: asyncevent.Lottery}.Encode()); err != nil {
		t.Fatal(err)
	}
	lr := waitTerminal(t, env, []string{"late1"}, 20*time.Second)[0]
	if lr.Status != asyncevent.StatusRejected || lr.ResultCode != asyncevent.CodeRejectedLotteryClosed {
		t.Fatalf("late entry %+v", lr)
	}
}

// A creator-held seed: the draw needs the seed that hashes to the
// commitment.
func TestLotteryCommittedSeed(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, Admin: asyncevent.AdminConfig{DrawGrace: time.Second}})
	seed, commitment := asyncevent.NewSeed()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "l2", EventType: asyncevent.Lottery, Winners: 2,
		LotteryCutoffAt: time.Now().Add(time.Minute).UnixMilli(), SeedCommitment: commitment}); err != nil {
		t.Fatal(err)
	}
	env.StartWorkers(t, 1, consumer.Config{})
	var ids []string
	for i := range 5 {
		ids = append(ids, participate(t, env.Ingest, "l2", fmt.Sprintf("p%d", i)).RequestID)
	}
	asynceventtest.Eventually(t, 20*time.Second, "5 entries collecting", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "l2")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] == 5, err
	})
	shift.Store(int64(2 * time.Minute))
	other, _ := asyncevent.NewSeed()
	for _, s := range []string{"", other} {
		if _, err := env.Admin.Draw(ctx, "l2", s); !errors.Is(err, asyncevent.ErrSeed) {
			t.Fatalf("draw with seed %q: %v", s, err)
		}
	}
	res, err := env.Admin.Draw(ctx, "l2", seed)
	if err != nil {
		t.Fatal(err)
	}
	if want := independentWinners(seed, ids, 2); !slices.Equal(res.Winners, want) {
		t.Fatalf("winners %v, want %v", res.Winners, want)
	}
}

// The event index is eventually consistent on DynamoDB: a draw that sees
// fewer entries than were admitted (counted in the admitting transactions)
// waits, then refuses with ErrUnavailable and announces nothing, rather than
// rank an incomplete set. Simulated here by taking one entry out of GSI2.
func TestLotteryDrawWaitsForTheIndex(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, Admin: asyncevent.AdminConfig{DrawGrace: time.Second, DrawIndexWait: 300 * time.Millisecond}})
	cutoff := time.Now().Add(time.Hour)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "lag", EventType: asyncevent.Lottery, Winners: 5,
		LotteryCutoffAt: cutoff.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	env.StartWorkers(t, 1, consumer.Config{})
	ids := make([]string, 20)
	for i := range ids {
		ids[i] = participate(t, env.Ingest, "lag", fmt.Sprintf("u%02d", i)).RequestID
	}
	asynceventtest.Eventually(t, 30*time.Second, "20 entries collecting", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "lag")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] == 20, err
	})
	if ev, _ := env.Admin.GetEvent(ctx, "lag"); ev.EntryCount != 20 {
		t.Fatalf("entryCount = %d, want 20", ev.EntryCount)
	}
	hidden := ids[7]
	setIndexed := func(on bool) {
		t.Helper()
		in := &dynamodb.UpdateItemInput{
			TableName: aws.String(env.DDB.Table.Name()),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: "REQ#" + hidden}, "SK": &types.AttributeValueMemberS{Value: "META"},
			},
			UpdateExpression: aws.String("REMOVE GSI2PK"),
		}
		if on {
			in.UpdateExpression = aws.String("SET GSI2PK = :pk")
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "EVENT#lag"}}
		}
		if _, err := env.DDB.Client.UpdateItem(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	setIndexed(false)
	shift.Store(int64(time.Hour + 2*time.Second))
	if _, err := env.Admin.Draw(ctx, "lag", ""); !errors.Is(err, asyncevent.ErrUnavailable) {
		t.Fatalf("draw over a lagging index: %v, want ErrUnavailable", err)
	}
	if st, _ := env.Admin.EventStats(ctx, "lag"); st.ByStatus[asyncevent.StatusProcessing] != 19 {
		t.Fatalf("the refused draw decided entries: %v", st.ByStatus)
	}
	setIndexed(true) // the index caught up
	res, err := env.Admin.Draw(ctx, "lag", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 20 || len(res.Winners) != 5 {
		t.Fatalf("draw %+v", res)
	}
	if want := independentWinners(res.Seed, ids, 5); !slices.Equal(res.Winners, want) {
		t.Fatalf("winners %v, want %v", res.Winners, want)
	}
}

// An entry admitted before the cutoff whose message never went out (its
// request stayed RECEIVED, in no index) holds the draw back instead of being
// rejected as late; the sweep heals it and the draw then counts it.
func TestLotteryDrawWaitsForStrandedEntries(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, Admin: asyncevent.AdminConfig{DrawGrace: time.Second}})
	cutoff := time.Now().Add(time.Hour)
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "raffle", EventType: asyncevent.Lottery, Winners: 2,
		LotteryCutoffAt: cutoff.UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		participate(t, env.Ingest, "raffle", fmt.Sprintf("u%d", i))
	}
	// The fifth: the send fails, and so does marking it failed.
	env.Strand(t, "raffle", "stranded")
	env.StartWorkers(t, 1, consumer.Config{})
	asynceventtest.Eventually(t, 30*time.Second, "4 entries collecting", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "raffle")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] == 4, err
	})
	shift.Store(int64(time.Hour + 2*time.Second))
	_, err := env.Admin.Draw(ctx, "raffle", "")
	var pe *asyncevent.PendingError
	if !errors.As(err, &pe) || pe.Received != 1 {
		t.Fatalf("draw with a stranded entry: %v, want a PendingError with 1 received", err)
	}
	if res, err := env.Operations.SweepStranded(ctx, asyncevent.SweepOptions{}); err != nil || res.Requeued != 1 {
		t.Fatalf("sweep: %+v %v", res, err)
	}
	asynceventtest.Eventually(t, 30*time.Second, "the healed entry collecting", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "raffle")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] == 5, err
	})
	res, err := env.Admin.Draw(ctx, "raffle", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 5 || len(res.Winners) != 2 {
		t.Fatalf("draw %+v, want 5 entries and 2 winners", res)
	}
}

// A lottery entry whose enqueue failed can be re-queued before the draw,
// not after: then it could only be rejected as late.
func TestLotteryRequeueOnlyBeforeTheDraw(t *testing.T) {
	t.Parallel()
	var shift atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	env := asynceventtest.New(t, asynceventtest.Options{Now: clock, Admin: asyncevent.AdminConfig{DrawGrace: time.Second}})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "raffle", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	participate(t, env.Ingest, "raffle", "in")
	env.SQS.SetSendFault(asynceventtest.Throttle)
	failed := participate(t, env.Ingest, "raffle", "out")
	env.SQS.SetSendFault(nil)
	env.StartWorkers(t, 1, consumer.Config{})
	asynceventtest.Eventually(t, 30*time.Second, "1 entry collecting", func() (bool, error) {
		st, err := env.Admin.EventStats(ctx, "raffle")
		return err == nil && st.ByStatus[asyncevent.StatusProcessing] == 1, err
	})
	shift.Store(int64(time.Hour + 2*time.Second))
	if _, err := env.Admin.Draw(ctx, "raffle", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Operations.RequeueFailed(ctx, failed.RequestID); !errors.Is(err, asyncevent.ErrNotRequeueable) {
		t.Fatalf("re-queue after the draw: %v, want ErrNotRequeueable", err)
	}
	if r := env.Request(t, failed.RequestID); r.Status != asyncevent.StatusFailedFinal || r.ResultCode != asyncevent.CodeFailedIngestEnqueue {
		t.Fatalf("refused re-queue changed the request: %s/%s", r.Status, r.ResultCode)
	}
}

// A draw that starts after RequeueFailed found the lottery OPEN but before
// it reopens the entry wins: the re-queue is ErrNotRequeueable and changes
// nothing, rather than report success for an entry the worker could only
// reject as late.
func TestLotteryRequeueRacingTheDraw(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "raffle", EventType: asyncevent.Lottery, Winners: 1,
		LotteryCutoffAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	env.SQS.SetSendFault(asynceventtest.Throttle)
	failed := participate(t, env.Ingest, "raffle", "out")
	env.SQS.SetSendFault(nil)

	hs := &hookSweep{SweepStore: env.Store, beforeReopen: func(string) {
		// The draw starts: OPEN → DRAWING.
		if err := env.Store.MoveEvent(ctx, asyncevent.EventMove{EventID: "raffle", From: asyncevent.EventOpen, To: asyncevent.EventDrawing}); err != nil {
			t.Errorf("draw start: %v", err)
		}
	}}
	if r, err := operations(env, hs).RequeueFailed(ctx, failed.RequestID); !errors.Is(err, asyncevent.ErrNotRequeueable) {
		t.Fatalf("re-queue racing the draw: %+v, %v; want ErrNotRequeueable", r, err)
	}
	r := env.Request(t, failed.RequestID)
	if r.Status != asyncevent.StatusFailedFinal || r.ResultCode != asyncevent.CodeFailedIngestEnqueue {
		t.Fatalf("refused re-queue changed the request: %s/%s", r.Status, r.ResultCode)
	}
	checkLogs(t, env, r)
	if n, err := env.Queue.Depth(ctx); err != nil || n != 0 {
		t.Fatalf("queue depth %d %v, want 0", n, err)
	}
}
