package server

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
)

// HealthOutput is the body of GET /healthz.
type HealthOutput struct {
	Body struct {
		Status string `json:"status" example:"ok" doc:"ok while the process serves"`
	}
}

// RegisterHealth adds GET /healthz, an unauthenticated liveness probe for
// load balancers and orchestrators: 200 {"status":"ok"} while the process
// serves. It checks no dependency (a dependency outage answers 503 on the
// calls that need it, and must not make an orchestrator restart every
// replica). Register it before authentication middleware.
func RegisterHealth(api huma.API) {
	huma.Register(api, Op("healthz", http.MethodGet, "/healthz", "Liveness", TagHealth, NoToken()), func(context.Context, *struct{}) (*HealthOutput, error) {
		out := &HealthOutput{}
		out.Body.Status = "ok"
		return out, nil
	})
}
