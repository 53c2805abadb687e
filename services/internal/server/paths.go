package server

import (
	"encoding/json"
	"net/http"
	"strings"
)

// cleanPaths answers a request whose path is not clean (an empty segment
// as in /events//participations, or . and .. segments) with a 404
// problem+json. Without it, http.ServeMux answers those with a 307
// redirect and an HTML body, outside the API's error format.
func cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") ||
			strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{
				"title": http.StatusText(http.StatusNotFound), "status": http.StatusNotFound,
				"detail": "no such path: it has an empty, '.' or '..' segment (is an id missing?)",
			})
			return
		}
		next.ServeHTTP(w, r)
	})
}
