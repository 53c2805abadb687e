package asynceventapi_test

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

// The API never allows a page the domain refuses: every list answers a
// page of server.MaxPageLimit, and the API itself refuses one more (422)
// before the domain sees it.
func TestPageLimitWithinDomain(t *testing.T) {
	t.Parallel()
	if server.MaxPageLimit > asyncevent.MaxLimit {
		t.Fatalf("the API's pages go up to %d, the domain's to %d", server.MaxPageLimit, asyncevent.MaxLimit)
	}
	e := newAPI(t, false)
	if _, err := e.Admin.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
		t.Fatal(err)
	}
	user, admin := token(t, "u1"), token(t, "a", auth.RoleAdmin)
	for _, c := range []struct{ path, token string }{
		{"/me/participations?", user},
		{"/admin/events/ev/requests?", admin},
		{"/admin/events/ev/requests?status=QUEUED&", admin},
	} {
		expect(t, e.api.Get(c.path+fmt.Sprint("limit=", server.MaxPageLimit), c.token), 200)
		expect(t, e.api.Get(c.path+fmt.Sprint("limit=", server.MaxPageLimit+1), c.token), 422)
	}
}

// An event whose index is written over 32 shards is listed to its end
// through the API: the list's cursor holds a position per shard (over
// 4,096 characters here), and the API takes back every cursor it gave.
func TestShardedEventListPagesToItsEnd(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	ev := asyncevent_firstCome("wide")
	ev.IndexShards = 32
	if _, err := e.Admin.CreateEvent(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		if _, err := e.Ingest.Participate(context.Background(), asyncevent.ParticipateInput{EventID: "wide", UserID: fmt.Sprintf("user-%04d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	admin := token(t, "a", auth.RoleAdmin)
	seen, longest, cursor := map[string]bool{}, 0, ""
	for page := 0; ; page++ {
		if page > n {
			t.Fatal("the list does not end")
		}
		resp := e.api.Get("/admin/events/wide/requests?limit=5&cursor="+url.QueryEscape(cursor), admin)
		expect(t, resp, 200)
		p := decode[asynceventapi.RequestPage](t, resp)
		for _, r := range p.Items {
			seen[r.RequestID] = true
		}
		longest = max(longest, len(p.Cursor))
		if cursor = p.Cursor; cursor == "" {
			break
		}
	}
	if len(seen) != n {
		t.Errorf("%d requests listed, want %d", len(seen), n)
	}
	if longest <= server.MaxCursorLen {
		t.Errorf("longest cursor %d characters: the test no longer exceeds server.MaxCursorLen (%d), raise the shards or the requests", longest, server.MaxCursorLen)
	}
	t.Logf("%d requests over 32 shards listed; longest cursor %d characters", len(seen), longest)
}

// EventRequestsQuery's struct tags say what the constants say: server's
// page limits and the SDK's merged-cursor bound.
func TestEventRequestsQueryBounds(t *testing.T) {
	typ := reflect.TypeFor[asynceventapi.EventRequestsQuery]()
	limit, _ := typ.FieldByName("Limit")
	cursor, _ := typ.FieldByName("Cursor")
	for _, c := range []struct{ got, want string }{
		{limit.Tag.Get("maximum"), fmt.Sprint(server.MaxPageLimit)},
		{limit.Tag.Get("default"), fmt.Sprint(server.DefaultPageLimit)},
		{cursor.Tag.Get("maxLength"), fmt.Sprint(ddb.MaxMergeCursorLen)},
	} {
		if c.got != c.want {
			t.Errorf("EventRequestsQuery tag %q, want %q", c.got, c.want)
		}
	}
}
