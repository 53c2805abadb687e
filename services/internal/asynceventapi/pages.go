package asynceventapi

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/pacerhq/pacer/services/internal/server"
)

//go:embed web
var web embed.FS

// RegisterPages serves AsyncEvent's browser pages on mux under /ui/ (see
// server.Pages): the participation page (/ui/?event=<id>: Participate,
// the requestId, the RECEIVED → QUEUED → PROCESSING → DONE stepper polled
// with backoff, the result, and the caller's participations) and the ops
// view for admins (/ui/ops.html: an event's counts, capacity and
// invariant, queue and DLQ depth, the invariant of all open events and the
// worker outcomes, from the API's GET /metrics where served, else from
// the admin stats; /ui/dlq.html lists the DLQ). They call the API's own
// operations and are not in its spec. dev offers the dev
// sign-in picker; only the service itself and embedOrigins may frame the
// pages. widget, if set, is the challenge provider's widget the
// participation page shows for an event that requires a human check.
func RegisterPages(mux *http.ServeMux, dev bool, embedOrigins server.Origins, widget *server.Widget) error {
	site, err := fs.Sub(web, "web")
	if err != nil {
		return err
	}
	return server.Pages(mux, server.PageConfig{Site: site, Dev: dev, EmbedOrigins: embedOrigins, HumanWidget: widget})
}
