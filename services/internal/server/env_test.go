package server_test

import (
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/internal/server"
)

func TestEnv(t *testing.T) {
	t.Setenv("PACER_T_STR", "x")
	t.Setenv("PACER_T_INT", "7")
	t.Setenv("PACER_T_BAD", "seven")
	t.Setenv("PACER_T_BOOL", "true")
	t.Setenv("PACER_T_DUR", "1500ms")
	t.Setenv("PACER_T_SECS", "30")
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"set", server.Env("PACER_T_STR", "d"), "x"},
		{"unset", server.Env("PACER_T_NONE", "d"), "d"},
		{"int", server.EnvInt("PACER_T_INT", 1), 7},
		{"bad int", server.EnvInt("PACER_T_BAD", 1), 1},
		{"bool", server.EnvBool("PACER_T_BOOL", false), true},
		{"bad bool", server.EnvBool("PACER_T_BAD", true), true},
		{"duration", server.EnvDuration("PACER_T_DUR", time.Second), 1500 * time.Millisecond},
		{"seconds", server.EnvDuration("PACER_T_SECS", time.Second), 30 * time.Second},
		{"bad duration", server.EnvDuration("PACER_T_BAD", time.Second), time.Second},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}
