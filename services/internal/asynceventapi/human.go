package asynceventapi

import (
	"cmp"
	"context"
	"os"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/humancheck"
	"github.com/pacerhq/pacer/services/internal/server"
)

// HumanCheckSecretEnv holds the challenge provider's secret key: from the
// environment only, as every secret (docs/settings.md). Unset: the API has
// no verifier, and refuses the participations of events that require a
// human check (503 human-check-unavailable).
const HumanCheckSecretEnv = "PACER_HUMAN_CHECK_SECRET"

// TurnstileScript is Cloudflare Turnstile's widget script, rendered
// explicitly by the participation page (hCaptcha's
// https://js.hcaptcha.com/1/api.js?render=explicit and reCAPTCHA's
// https://www.google.com/recaptcha/api.js?render=explicit work the same way).
const TurnstileScript = "https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit"

// HumanCheckSettings configure the human check of the events that require
// one (docs/ratelimit.md, Human check): the provider's siteverify endpoint
// and, for the participation page, its site key. The secret is
// HumanCheckSecretEnv's.
type HumanCheckSettings struct {
	// URL is the siteverify endpoint (default humancheck.TurnstileURL).
	URL string
	// SiteKey is the provider's site key, which the page's widget shows.
	SiteKey string
	// Script is the provider's widget script, which the page loads (default
	// TurnstileScript).
	Script string
	// Secret is the provider's secret key ("" : no verifier). Run reads it
	// from HumanCheckSecretEnv when it is unset.
	Secret string
}

// Declare declares the settings on s (the secret is not one: it comes from
// the environment only).
func (hs *HumanCheckSettings) Declare(s *config.Set) {
	s.String(&hs.URL, "human-check-url", "PACER_HUMAN_CHECK_URL", humancheck.TurnstileURL,
		"the challenge provider's siteverify endpoint (Turnstile's by default; hCaptcha's and reCAPTCHA's take the same form), for events that require a human check; its secret is "+HumanCheckSecretEnv)
	s.String(&hs.SiteKey, "human-check-site-key", "PACER_HUMAN_CHECK_SITE_KEY", "", "the challenge provider's site key, which the participation page's widget shows (empty: the page shows no widget)")
	s.String(&hs.Script, "human-check-script", "PACER_HUMAN_CHECK_SCRIPT", TurnstileScript, "the challenge provider's widget script, which the participation page loads (its origin is allowed by the pages' Content-Security-Policy)")
}

// Widget is the page's challenge widget: nil without a site key.
func (hs HumanCheckSettings) Widget() *server.Widget {
	if hs.SiteKey == "" {
		return nil
	}
	return &server.Widget{Script: cmp.Or(hs.Script, TurnstileScript), SiteKey: hs.SiteKey}
}

// provider is the challenge provider's client over the settings: nil
// when there is no secret (from hs, else the environment).
func (hs HumanCheckSettings) provider() (*humancheck.Verifier, error) {
	if hs.Secret == "" {
		hs.Secret = os.Getenv(HumanCheckSecretEnv)
	}
	if hs.Secret == "" {
		return nil, nil
	}
	return humancheck.New(humancheck.Config{URL: hs.URL, Secret: hs.Secret})
}

// HumanVerifier is the domain's HumanVerifier over the provider's client
// p: nil without one.
func HumanVerifier(p *humancheck.Verifier) asyncevent.HumanVerifier {
	if p == nil {
		return nil
	}
	return humans{p}
}

// HumanCheckReady is the readiness report's check of the challenge
// provider p (nil: none configured), as the participations that needed it
// found it (humancheck.Verifier.Status; it makes no call): fail while the
// last call got no answer (participations in events requiring a check
// are refused 503 human-check-unavailable, or admitted unchecked, as each
// event says), else pass.
func HumanCheckReady(p *humancheck.Verifier) server.Checker {
	return func() server.ReadyCheck {
		c := server.ReadyCheck{Name: "human-check", Status: server.Pass}
		if p == nil {
			c.Output = "no provider secret (" + HumanCheckSecretEnv + "): participations in events that require a human check are refused (503)"
			return c
		}
		s := p.Status()
		c.LastSuccessAt, c.LastFailureAt = server.EpochMillis(s.AnsweredAt), server.EpochMillis(s.FailedAt)
		switch {
		case s.Failing():
			c.Status, c.Output = server.Fail, "the provider did not answer the last check: participations in events that require one are refused (503) or admitted unchecked, as each event says"
		case s.AnsweredAt.IsZero():
			c.Output = "no check made yet"
		}
		return c
	}
}

// humans adapts a humancheck.Verifier to the domain's HumanVerifier.
type humans struct{ v *humancheck.Verifier }

// Verify asks the provider: passed when it answers success.
func (h humans) Verify(ctx context.Context, token, remoteIP string) (asyncevent.HumanVerdict, error) {
	a, err := h.v.Verify(ctx, token, remoteIP)
	switch {
	case err != nil:
		return "", err
	case a.Success:
		return asyncevent.HumanPassed, nil
	}
	return asyncevent.HumanFailed, nil
}

// NewHumanVerifier is the domain's HumanVerifier over a siteverify
// endpoint with secret (for tests and tools wiring an Ingest themselves).
func NewHumanVerifier(url, secret string) (asyncevent.HumanVerifier, error) {
	p, err := HumanCheckSettings{URL: url, Secret: secret}.provider()
	return HumanVerifier(p), err
}
