package asynceventapi_test

import (
	"testing"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/corstest"
)

// The API as Run serves it answers cross-origin calls from its CORS
// origins: a preflight names its methods (GET and POST) and the headers
// it reads (If-None-Match; in dev mode the dev headers), then the call
// itself is readable from that origin. See server.CORS.
func TestCORSOrigins(t *testing.T) {
	t.Parallel()
	const app = "https://organizer.example.com"
	env := asynceventtest.New(t, asynceventtest.Options{})
	base := "http://" + run(t, env, asynceventapi.Config{Dev: true, CORSOrigins: server.Origins{app}})
	corstest.Check(t, base, corstest.Call{Path: "/me/participations", Origin: app, Header: map[string]string{server.DevUserHeader: "u1"}, Status: 200,
		Methods: "GET, POST", Headers: "Authorization, Content-Type, If-None-Match, X-Pacer-Dev-User, X-Pacer-Dev-Roles, X-Pacer-Dev-Org"})
}
