package photoapi

import (
	"fmt"
	"testing"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

// The API never allows a page the domain refuses: every list answers its
// largest page (server.PageQuery's, or its named exception's), and the API
// itself refuses one more (422) before the domain sees it.
func TestPageLimitWithinDomain(t *testing.T) {
	t.Parallel()
	if server.MaxPageLimit > photo.MaxPageSize {
		t.Fatalf("the API's pages go up to %d, the domain's to %d", server.MaxPageLimit, photo.MaxPageSize)
	}
	e := newEnv(t)
	e.setup("o1", "e1", "p1", true)
	tok := orgToken(t, "o1")
	for _, c := range []struct {
		path string
		max  int
	}{
		{"/events/e1/photos?", server.MaxPageLimit},
		{"/events/e1/bibs/1000/photos?", server.MaxPageLimit},
		{"/public/events/e1/bibs/1000/photos?", server.MaxPageLimit},
		{"/photographers/p1/photos?", photo.MaxPageSize},
		{"/photographers/p1/photos?eventId=e1&", photo.MaxPageSize},
		{"/events/e1/runners?", 1000},                       // RunnersQuery; the domain's ListRunners takes 1..1000
		{"/events/e1/bibs/1000/nearby-photos?", 100},        // NearbyQuery
		{"/public/events/e1/bibs/1000/nearby-photos?", 100}, // NearbyQuery
	} {
		e.do("GET", c.path+fmt.Sprint("limit=", c.max), 200, tok)
		e.do("GET", c.path+fmt.Sprint("limit=", c.max+1), 422, tok)
	}
}
