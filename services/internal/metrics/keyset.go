package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// NewKeySet registers the gauges of an API's token verification on reg,
// read from state at each scrape (or EMF flush; server.KeySetState reads
// an auth.Verifier's): pacer_auth_keys, the keys the verifier holds (0:
// the identity provider's key set was never loaded, or is empty, and every
// token is refused; 1 for an HS256 secret), and
// pacer_auth_key_set_refresh_failed, 1 while its last fetch of the key
// set failed. Without a state (nil) it registers nothing. (The kit takes
// a function, not the verifier: the worker links it and no JWT code.)
func NewKeySet(reg prometheus.Registerer, state func() (keys int, failing bool)) {
	if state == nil {
		return
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pacer_auth_keys",
			Help: "Keys the token verifier holds: 0 means the identity provider's key set was never loaded (or is empty) and every token is refused; 1 for an HS256 secret.",
		}, func() float64 {
			keys, _ := state()
			return float64(keys)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "pacer_auth_key_set_refresh_failed",
			Help: "1 while the last fetch of the identity provider's key set (JWKS) failed, else 0.",
		}, func() float64 {
			if _, failing := state(); failing {
				return 1
			}
			return 0
		}),
	)
}
