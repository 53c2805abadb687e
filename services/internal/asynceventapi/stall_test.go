package asynceventapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/consumer"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/stalltest"
)

// The storm: users participating (retrying a 503 after its Retry-After
// until they have their 202), then polling once, while a stand-in stalls
// (stalltest's defaults: deadline 1 s, a 2.5 s pause).
const (
	stallUsers = 100
	stallSeats = 20
)

// Every call answers within its deadline (plus a small margin) while
// DynamoDB or SQS stalls in the middle of a storm of participations and
// polls: each answer is a 202 (or the poll's 200) or a 503 problem+json
// with Retry-After, never a call left hanging. The workers, allocator
// and line keeper wait the stall out and resume; after the resume and the
// documented sweep (POST /admin/requests/sweep) every user holds exactly
// one request, the one every 202 named, and exactly the first N by
// (queuedAt, requestId) win. Each stall pauses a stand-in the test
// started for itself (sdk/standin's Stack.Pause, SIGSTOP), never the
// package's.
func TestEveryCallAnswersWithinItsDeadlineWhileAStandInStalls(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		config standin.Config
	}{{standin.DynamoDB, standin.Config{DynamoDB: true}}, {standin.SQS, standin.Config{SQS: true}}} {
		t.Run(c.name, func(t *testing.T) { // one after the other: each storm's answer times are its own
			stack, err := standin.Start(context.Background(), c.config)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stack.Close() })
			stallStorm(t, stack, c.name)
		})
	}
}

// stallStorm runs the storm over an API whose DynamoDB or SQS (name) is
// stack's.
func stallStorm(t *testing.T, stack *standin.Stack, name string) {
	ctx := context.Background()
	env := asynceventtest.New(t, asynceventtest.Options{DynamoDBEndpoint: stack.DynamoDBEndpoint, SQSEndpoint: stack.SQSEndpoint})
	const requeueAfter = time.Second
	base := "http://" + run(t, env, asynceventapi.Config{Dev: true, Config: asynceventbackend.Config{RequeueAfter: requeueAfter, Log: slog.New(slog.DiscardHandler)},
		Bounds: server.Bounds{Read: stalltest.Deadline, Write: stalltest.Deadline, Admin: 10 * time.Second, Bulk: 10 * time.Second}})
	env.StartWorkers(t, 2, consumer.Config{})
	if _, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{EventID: "stall", EventType: asyncevent.FirstCome, Capacity: stallSeats,
		ClosesAt: time.Now().Add(time.Hour).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	call := func(method, path, user string, roles ...string) *http.Request {
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(server.DevUserHeader, user)
		if len(roles) > 0 {
			req.Header.Set(server.DevRolesHeader, roles[0])
		}
		return req
	}
	c := stalltest.NewClient()
	ids := make([]string, stallUsers)
	var landed atomic.Int64 // participations given up at their deadline that landed
	participate := func(i int) (accepted asynceventapi.Accepted, ok bool) {
		refused := false
		for began := time.Now(); time.Since(began) < time.Minute; refused = true {
			a := c.Do(t, call(http.MethodPost, "/events/stall/participations", fmt.Sprintf("user%03d", i)))
			if a.Status == http.StatusAccepted {
				if err := json.Unmarshal(a.Body, &accepted); err != nil || accepted.RequestID == "" {
					t.Errorf("user %d: 202 %s: %v", i, a.Body, err)
				}
				if refused && accepted.IsDuplicate {
					landed.Add(1)
				}
				return accepted, true
			}
			if !stalltest.Unavailable(a) {
				return accepted, false // Check reports it
			}
			stalltest.Wait(a)
		}
		t.Errorf("user %d: no 202 within a minute", i)
		return accepted, false
	}

	resumed := stalltest.Storm{Users: stallUsers}.Run(t, func() (func() error, error) { return stack.Pause(name) }, func(i int) {
		a, ok := participate(i)
		if !ok {
			return
		}
		ids[i] = a.RequestID
		c.Do(t, call(http.MethodGet, "/requests/"+a.RequestID, fmt.Sprintf("user%03d", i)))
	})
	t.Logf("%d participations answered 503 had landed: their retry got 202 with their requestId", landed.Load())
	// Every user's participation again: the one request it holds.
	var wg sync.WaitGroup
	for i := range stallUsers {
		if ids[i] == "" {
			continue // reported
		}
		wg.Go(func() {
			if a, ok := participate(i); ok && (!a.IsDuplicate || a.RequestID != ids[i]) {
				t.Errorf("user %d participating again: %+v, want its request %s as a duplicate", i, a, ids[i])
			}
		})
	}
	wg.Wait()
	if n := c.Check(t, stalltest.Deadline, stalltest.Margin); n == 0 {
		t.Fatalf("no call was answered 503: the stall of %s did not reach the API, and the test proves nothing", name)
	}
	if t.Failed() {
		return
	}

	// The documented sweep, once the requests stranded RECEIVED (a lock
	// transaction that landed after its call gave up, a send given up)
	// are RequeueAfter old.
	time.Sleep(time.Until(resumed.Add(requeueAfter)))
	admin := stalltest.NewClient()
	if a := admin.Do(t, call(http.MethodPost, "/admin/requests/sweep", "ops", "admin")); a.Status != http.StatusOK {
		t.Fatalf("sweep: %d %s", a.Status, a.Body)
	} else {
		t.Logf("sweep: %s", a.Body)
	}
	var stats asynceventapi.StatsView
	asynceventtest.Eventually(t, time.Minute, "every request decided", func() (bool, error) {
		a := admin.Do(t, call(http.MethodGet, "/admin/events/stall/stats", "ops", "admin"))
		if a.Status != http.StatusOK {
			return false, fmt.Errorf("stats: %d %s", a.Status, a.Body)
		}
		if err := json.Unmarshal(a.Body, &stats); err != nil {
			return false, err
		}
		return stats.ByStatus[string(asyncevent.StatusSucceeded)]+stats.ByStatus[string(asyncevent.StatusRejected)] == stats.Total, nil
	})
	t.Logf("every request decided %s after the resume", time.Since(resumed).Round(time.Millisecond))
	if stats.Total != stallUsers || stats.ByStatus[string(asyncevent.StatusSucceeded)] != stallSeats || !stats.InvariantOK {
		t.Fatalf("stats %+v; want %d requests, %d winners, the invariant holding", stats, stallUsers, stallSeats)
	}
	rs := env.EventRequests(t, "stall")
	held := map[string]string{}
	for _, r := range rs {
		if other, dup := held[r.UserID]; dup {
			t.Errorf("%s holds two requests: %s and %s", r.UserID, other, r.RequestID)
		}
		held[r.UserID] = r.RequestID
	}
	for i, id := range ids {
		if u := fmt.Sprintf("user%03d", i); held[u] != id {
			t.Errorf("%s holds %q, but its 202s named %q", u, held[u], id)
		}
	}
	if f := asynceventtest.MeasureFairness(rs); !f.FirstN() || f.Winners != stallSeats {
		t.Errorf("fairness %v: want exactly the first %d by (queuedAt, requestId) to win", f, stallSeats)
	}
	unsure := metricstest.Scrape(t, base+"/metrics").Value("pacer_queued_at_unsure_total")
	t.Logf("queuedAt writes of unknown outcome (pacer_queued_at_unsure_total): %v", unsure)
}
