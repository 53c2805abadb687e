package server

import (
	"os"
	"strconv"
	"time"
)

// Env returns the environment variable key, or def when it is unset or
// empty.
func Env(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// EnvInt is Env for integers (def when unset or malformed).
func EnvInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil {
		return n
	}
	return def
}

// EnvBool is Env for booleans ("1", "true", "0", "false"; def otherwise).
func EnvBool(key string, def bool) bool {
	if b, err := strconv.ParseBool(os.Getenv(key)); err == nil {
		return b
	}
	return def
}

// EnvDuration is Env for durations: Go durations ("30s") or whole seconds
// ("30"); def when unset or malformed.
func EnvDuration(key string, def time.Duration) time.Duration {
	v := os.Getenv(key)
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second
	}
	return def
}
