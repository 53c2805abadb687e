package asynceventapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
)

// The DLQ view counts by class; a class redrive moves that class only; a
// class that does not exist is a 422 problem naming query.class and moves
// nothing.
func TestDLQByClass(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	ctx := context.Background()
	adm := token(t, "root", auth.RoleAdmin)
	if _, err := e.Admin.CreateEvent(ctx, asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		expect(t, e.api.Post("/events/ev/participations", token(t, fmt.Sprintf("u%d", i))), http.StatusAccepted)
	}
	// Dead-letter both as a worker would on their last receive.
	ms, err := e.Queue.Receive(ctx, 10, time.Second, time.Minute)
	if err != nil || len(ms) != 2 {
		t.Fatalf("receive %d %v", len(ms), err)
	}
	for i, m := range ms {
		class := []asyncevent.DeadClass{asyncevent.DeadThrottled, asyncevent.DeadTimeout}[i]
		if err := e.Queue.SendDead(ctx, m, class, "CODE"+string(class)); err != nil {
			t.Fatal(err)
		}
		if err := e.Queue.Delete(ctx, []string{m.ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	type view struct {
		DeadDepth int            `json:"deadDepth"`
		ByClass   map[string]int `json:"byClass"`
		Complete  bool           `json:"complete"`
		Messages  []struct {
			Class, ErrorCode, RequestID string
		} `json:"messages"`
	}
	v := decode[view](t, e.api.Get("/admin/dlq?max=5", adm))
	if v.DeadDepth != 2 || len(v.ByClass) != len(asyncevent.DeadClasses) || v.ByClass["THROTTLED"] != 1 || v.ByClass["TIMEOUT"] != 1 || !v.Complete || len(v.Messages) != 2 {
		t.Fatalf("view %+v", v)
	}
	for _, m := range v.Messages {
		if m.ErrorCode != "CODE"+m.Class || m.RequestID == "" {
			t.Fatalf("message %+v", m)
		}
	}

	bad := e.api.Post("/admin/dlq/redrive?class=THROTTLE", adm)
	expect(t, bad, http.StatusUnprocessableEntity)
	if ct := bad.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") || !strings.Contains(bad.Body.String(), `"query.class"`) {
		t.Fatalf("bad class: %s %s", ct, bad.Body.String())
	}
	if _, dead, err := e.Queue.Depths(ctx); err != nil || dead != 2 {
		t.Fatalf("a refused redrive moved messages: DLQ depth %d %v", dead, err)
	}

	r := e.api.Post("/admin/dlq/redrive?class=THROTTLED", adm)
	expect(t, r, http.StatusAccepted)
	if got := r.Body.String(); !strings.Contains(got, `"class":"THROTTLED"`) || !strings.Contains(got, `"moved":1`) || !strings.Contains(got, `"dropped":0`) {
		t.Fatalf("redrive THROTTLED: %s", got)
	}
	v = decode[view](t, e.api.Get("/admin/dlq?max=5", adm))
	if v.ByClass["THROTTLED"] != 0 || v.ByClass["TIMEOUT"] != 1 || len(v.Messages) != 1 || v.Messages[0].Class != "TIMEOUT" {
		t.Fatalf("after redriving THROTTLED: %+v", v)
	}
	if n, err := e.Queue.Depth(ctx); err != nil || n != 1 {
		t.Fatalf("main depth %d %v, want the 1 redriven", n, err)
	}
}
