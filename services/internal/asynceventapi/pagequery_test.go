package asynceventapi_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
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
	if _, err := e.Service.CreateEvent(context.Background(), asyncevent_firstCome("ev")); err != nil {
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
