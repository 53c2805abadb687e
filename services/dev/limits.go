package main

import "github.com/pacerhq/pacer/services/internal/server"

// devLimits are make run's rate-limit settings for both APIs where the
// environment sets none: one process each (PACER_RATE_REPLICAS 1, so
// each budget is the process's whole), and X-Forwarded-For believed from
// loopback (PACER_TRUSTED_PROXIES), where only the developer's own tools
// connect from: the load tool's scripted-client scenario gives each
// simulated person an address of its own with it (docs/ratelimit.md).
func devLimits(ls *server.LimitSharing, getenv func(string) string) {
	if getenv("PACER_RATE_REPLICAS") == "" {
		ls.Replicas = 1
	}
	if getenv("PACER_TRUSTED_PROXIES") == "" {
		ls.TrustedProxies = "127.0.0.1/32,::1/128"
	}
}
