package photoapi

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Job is the scrape job of the API, and the service label of its HTTP metrics.
const Job = "photo-api"

// apiMetrics is the API's registry and collectors (docs/metrics.md).
type apiMetrics struct {
	reg     *prometheus.Registry
	http    *metrics.HTTP
	aws     *metrics.AWS
	photo   *PhotoMetrics
	limited *metrics.RateLimited
}

// newMetrics registers the API's metrics, among them v's key set's, and
// instruments the AWS clients made from awsCfg afterwards.
func newMetrics(awsCfg *aws.Config, table string, v *auth.Verifier) *apiMetrics {
	m := &apiMetrics{reg: metrics.NewRegistry()}
	m.http = metrics.NewHTTP(m.reg, Job, problems(nil).Problems()...)
	metrics.NewKeySet(m.reg, server.KeySetState(v))
	m.aws = metrics.NewAWS(m.reg, table)
	m.aws.Attach(awsCfg)
	m.photo = NewPhotoMetrics(m.reg)
	m.limited = metrics.NewRateLimited(m.reg, metrics.Series{Class: nameSearchClass, By: ratelimit.ByAddress},
		metrics.Series{Class: publicSearchClass, By: ratelimit.ByAddress})
	return m
}

// serve mounts GET /metrics on mux (outside the OpenAPI spec: it is not
// part of the API) and returns mux timed.
func (m *apiMetrics) serve(mux *http.ServeMux) http.Handler {
	mux.Handle("GET "+metrics.Path, metrics.Handler(m.reg))
	return m.http.Wrap(mux)
}
