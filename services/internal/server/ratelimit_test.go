package server_test

import (
	"strings"
	"testing"

	"github.com/pacerhq/pacer/services/internal/server"
)

// A bad rate-limit setting is an error naming the variable; the zero
// settings (a Config built without Declare) limit nothing.
func TestLimitSettings(t *testing.T) {
	for env, ls := range map[string]server.LimitSettings{
		"PACER_RATE_PARTICIPATE_USER":    {ParticipateUser: "5"},
		"PACER_RATE_POLL_USER":           {PollUser: "x/s"},
		"PACER_RATE_PARTICIPATE_ADDRESS": {ParticipateAddress: "0/m"},
		"PACER_RATE_POLL_ADDRESS":        {PollAddress: "1/d"},
		"PACER_RATE_REPLICAS":            {LimitSharing: server.LimitSharing{Replicas: -1}},
		"PACER_TRUSTED_PROXIES":          {LimitSharing: server.LimitSharing{TrustedProxies: "10.0.0.0/40"}},
	} {
		if _, err := ls.Limits(nil); err == nil || !strings.HasPrefix(err.Error(), env+": ") {
			t.Errorf("%+v: %v, want an error naming %s", ls, err, env)
		}
	}
	l, err := server.LimitSettings{}.Limits(nil)
	if err != nil || l.Limiter.Limits("participate") || l.Limiter.Limits("poll") {
		t.Errorf("the zero settings: %v, or they limit", err)
	}
	l, err = server.LimitSettings{ParticipateUser: server.DefaultParticipateUser, PollUser: server.DefaultPollUser, LimitSharing: server.LimitSharing{Replicas: 2}}.Limits(nil)
	if err != nil || !l.Limiter.Limits("participate") || !l.Limiter.Limits("poll") {
		t.Errorf("the defaults: %v, or they do not limit", err)
	}
}
