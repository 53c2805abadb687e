package asynceventapi_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/services/internal/testkit/browsertest"
)

// oneBatch lets its allocator write one batch: the next one's context
// is cancelled.
type oneBatch struct {
	asyncevent.AllocStore
	cancel  context.CancelFunc
	batches int
}

func (o *oneBatch) Allocate(ctx context.Context, a *asyncevent.Allocation) error {
	if o.batches++; o.batches > 1 {
		o.cancel()
	}
	return o.AllocStore.Allocate(ctx, a)
}

// The participation page shows a waiting request's place in line: about
// how many are ahead, the places left and the wait, and the place moves
// when the allocator decides the requests ahead and the line is measured
// again.
func TestParticipationPagePlace(t *testing.T) {
	lateness := asyncevent.Lateness{WriteTimeout: 500 * time.Millisecond, ClockSkew: -1, IndexLag: -1}
	env := asynceventtest.New(t, asynceventtest.Options{Lateness: lateness})
	srv := httptest.NewServer(pagesMux(t, env, true, nil))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "line", EventType: asyncevent.FirstCome, Capacity: 5,
		Ordering: asyncevent.OrderArrival, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	for i := range 60 { // the line ahead: queued, no worker runs
		if _, err := env.Ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: "line", UserID: fmt.Sprintf("early-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	keeper := asyncevent.NewLineKeeper(asyncevent.LineKeeperConfig{Store: env.Store, Events: env.Store, Lateness: lateness, LineEvery: time.Nanosecond})

	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/?event=line")
	b.WaitFor(10*time.Second, "the dev sign-in", `!!document.querySelector("#dev-user")`)
	signIn(b, "late-user")
	b.WaitFor(10*time.Second, "the event", `!document.querySelector("#event").hidden`)
	b.Click("#participate")
	b.WaitFor(10*time.Second, "a place", `!document.querySelector("#place").hidden`)
	if _, err := keeper.Measure(ctx, "line"); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(15*time.Second, "the place measured", `document.querySelector("#place").dataset.ahead !== ""`)
	first, _ := strconv.Atoi(browsertest.Eval[string](b, `document.querySelector("#place").dataset.ahead`))
	if text := b.Text("#place"); first < 50 || first > 70 || !strings.Contains(text, "ahead of you") || !strings.Contains(text, "5 places left") {
		t.Fatalf("place %d: %q; want about 60 ahead of 5 places", first, text)
	}

	// The allocator decides one batch (49) of the line ahead.
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	al := asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: &oneBatch{AllocStore: env.Store, cancel: cancel}, Lateness: lateness})
	if res, _ := al.Allocate(actx, "line"); res.Decided != asyncevent.MaxAllocBatch {
		t.Fatalf("the allocator decided %d, want one batch of %d", res.Decided, asyncevent.MaxAllocBatch)
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := keeper.Measure(ctx, "line"); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(20*time.Second, "the place to move", fmt.Sprintf(`+document.querySelector("#place").dataset.ahead < %d`, first-40))
	if text := b.Text("#place"); !strings.Contains(text, "0 places left") {
		t.Errorf("after the batch: %q; want no places left", text)
	}
	b.NoErrors()
}
