package photoapi

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/pacerhq/pacer/services/internal/server"
)

//go:embed web
var web embed.FS

// RegisterPages serves PhotoService's browser pages on mux under /ui/ (see
// server.Pages): the runners' page (/ui/?event=<id>: a bib's photos in a
// published event, newest first, page by page; no sign-in) and the
// organizers' page (/ui/organizer.html: by bib or by photographer,
// optionally in one event, or an event's gallery). Photos load from
// imageBaseURL + "/" + processedKey. They call the API's own operations
// and are not in its spec. Only the service itself and embedOrigins may
// frame them.
func RegisterPages(mux *http.ServeMux, dev bool, imageBaseURL string, embedOrigins server.Origins) error {
	site, err := fs.Sub(web, "web")
	if err != nil {
		return err
	}
	return server.Pages(mux, server.PageConfig{Site: site, Dev: dev, ImageBaseURL: imageBaseURL, EmbedOrigins: embedOrigins})
}
