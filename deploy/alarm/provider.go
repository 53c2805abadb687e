package alarm

import (
	"fmt"
	"time"
)

// providerSignals are the APIs' view of the providers outside AWS they
// need: the identity provider's key set (the keys each instance holds,
// and whether its last fetch failed) and the human-check provider (the
// share of participations' checks that found it unavailable, or found no
// provider configured).
func providerSignals(c Config) []Signal {
	w := promDuration(c.RateWindow)
	checks := func(id, outcome string) Metric {
		return customMetric(id, "pacer_human_checks_total", "Sum", "Count", map[string]string{"outcome": outcome})
	}
	return []Signal{
		{
			Record: AuthKeys,
			Expr:   "min by (job) (pacer_auth_keys)",
			Help:   "The fewest keys of the identity provider's key set an instance of each API (label job) holds: 0 means that instance refuses every token.",
			CloudWatch: CloudWatch{
				Metrics:    []Metric{customMetric("keys", "pacer_auth_keys", "Minimum", "None", nil)},
				Expression: "keys",
				Period:     time.Minute,
			},
		},
		{
			Record: AuthKeyFailing,
			Expr:   "max by (job) (pacer_auth_key_set_refresh_failed)",
			Help:   "1 while an instance of each API (label job) failed its last fetch of the identity provider's key set, else 0.",
			CloudWatch: CloudWatch{
				Metrics:    []Metric{customMetric("failed", "pacer_auth_key_set_refresh_failed", "Maximum", "None", nil)},
				Expression: "failed",
				Period:     time.Minute,
			},
		},
		{
			Record: HumanCheckRatio,
			Expr: fmt.Sprintf(`sum(rate(pacer_human_checks_total{outcome=~"unavailable_refused|unavailable_admitted"}[%s]))`+
				` / (sum(rate(pacer_human_checks_total{outcome!="missing"}[%s])) > %s)`, w, w, num(c.HTTPMinRate)),
			Help: fmt.Sprintf("Share of the human checks made (a token sent) that found the provider unavailable or none configured; absent below %s checks/s.", num(c.HTTPMinRate)),
			CloudWatch: CloudWatch{
				Metrics: []Metric{checks("passed", "passed"), checks("failed", "failed"), checks("refused", "unavailable_refused"), checks("admitted", "unavailable_admitted")},
				Expression: fmt.Sprintf("IF(passed + failed + refused + admitted > %s, (refused + admitted) / (passed + failed + refused + admitted), 0)",
					num(c.HTTPMinRate*c.RateWindow.Seconds())),
				Period: c.RateWindow,
			},
		},
	}
}

// providerAlerts fire when an API instance cannot verify tokens, when the
// key set cannot be fetched, and when participations' human checks find
// no provider.
func providerAlerts(c Config) []Alert {
	return []Alert{
		{
			Name: "AuthKeySetMissing", Signal: AuthKeys, Op: "<", Threshold: 1, For: c.KeySetMissingFor, Severity: Critical,
			Summary: fmt.Sprintf("{{ $labels.job }}: an instance has held no key of the identity provider's key set for %s", promDuration(c.KeySetMissingFor)),
			Description: fmt.Sprintf("An instance of an API could not fetch the JWKS (PACER_JWKS_URL) since it started, or the identity provider serves an "+
				"empty one: it answers 401 to every token, while /healthz passes and the load balancer keeps sending it requests. "+
				"The instance fetches the set every 5 minutes, so %s is no start-up blip: the tasks cannot reach the identity provider "+
				"(egress: a NAT gateway; VPC endpoints do not reach it) or the URL is wrong. /readyz says which instance.", promDuration(c.KeySetMissingFor)),
		},
		{
			Name: "AuthKeySetRefreshFailing", Signal: AuthKeyFailing, Op: ">", Threshold: 0, For: c.KeySetFailingFor, Severity: Warning,
			Summary: fmt.Sprintf("{{ $labels.job }}: an instance's fetches of the identity provider's key set have failed for %s", promDuration(c.KeySetFailingFor)),
			Description: fmt.Sprintf("The fetches of the JWKS every 5 minutes fail (%s: three in a row): the keys already held still verify tokens, "+
				"but a key the identity provider rotates in is unknown (its tokens get 401), and a task started now holds no key at all. "+
				"The identity provider is down or unreachable from the tasks.", promDuration(c.KeySetFailingFor)),
		},
		{
			Name: "HumanCheckUnavailable", Signal: HumanCheckRatio, Op: ">", Threshold: c.HTTP5xxRatio, For: c.HTTP5xxFor, Severity: Critical,
			Summary: "{{ $value | humanizePercentage }} of participations' human checks find no provider",
			Description: fmt.Sprintf("More than %s of the human checks of participations in events that require one get no answer from the challenge "+
				"provider (unreachable, timing out after 3 s, answering errors) or find none configured (no PACER_HUMAN_CHECK_SECRET): "+
				"each is a participation refused with 503 human-check-unavailable or admitted unchecked, as its event says, "+
				"the human check's own 5xx (the same threshold as HTTP5xxRatioHigh).", pct(c.HTTP5xxRatio)),
		},
	}
}
