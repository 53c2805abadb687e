// Package humancheck verifies a challenge provider's token server-side:
// Cloudflare Turnstile, hCaptcha and reCAPTCHA share one siteverify shape
// (an application/x-www-form-urlencoded POST of secret, response and
// remoteip, answered with JSON {"success": bool, "error-codes": [...]}).
// It is a generic kit: the AsyncEvent API adapts it to the domain's
// HumanVerifier (docs/ratelimit.md, Human check).
package humancheck

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// TurnstileURL is Cloudflare Turnstile's siteverify endpoint, the default.
const TurnstileURL = "https://challenges.cloudflare.com/turnstile/v0/siteverify"

// DefaultTimeout bounds one siteverify call.
const DefaultTimeout = 3 * time.Second

// maxAnswer bounds the answer read (a siteverify answer is a few hundred
// bytes).
const maxAnswer = 64 << 10

// Config configures a Verifier.
type Config struct {
	// URL is the siteverify endpoint (default TurnstileURL).
	URL string
	// Secret is the site's secret key, sent with every token (required).
	Secret string
	// Timeout bounds each call (default DefaultTimeout).
	Timeout time.Duration
	// Client makes the calls (default: a client of its own).
	Client *http.Client
}

// Verifier calls a siteverify endpoint. It is safe for concurrent use.
type Verifier struct {
	cfg Config

	mu     sync.Mutex
	status Status
}

// Status is what the calls so far say of the provider.
type Status struct {
	// AnsweredAt is when the provider last answered a token (passed or
	// not), FailedAt when a call last got no answer (zero: never).
	AnsweredAt, FailedAt time.Time
}

// Failing reports whether the last call got no answer.
func (s Status) Failing() bool { return !s.FailedAt.IsZero() && s.FailedAt.After(s.AnsweredAt) }

// Status reports how the last calls went: the provider's reachability as
// the participations that needed it saw it (Verify makes no call of its
// own to find out).
func (v *Verifier) Status() Status {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.status
}

// New returns a Verifier over cfg; an error if it has no secret.
func New(cfg Config) (*Verifier, error) {
	if cfg.Secret == "" {
		return nil, errors.New("humancheck: no secret")
	}
	if cfg.URL == "" {
		cfg.URL = TurnstileURL
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &Verifier{cfg: cfg}, nil
}

// Answer is the provider's answer on a token.
type Answer struct {
	// Success says whether the token passed.
	Success bool `json:"success"`
	// ErrorCodes say why not ("invalid-input-response", "timeout-or-
	// duplicate", ...).
	ErrorCodes []string `json:"error-codes"`
}

// Verify asks the provider about token from the client at remoteIP (""
// to send none). An error means no answer: the provider could not be
// reached, answered with a status other than 200, or not in JSON; the
// error names no secret. Status records the outcome (a call the caller
// cancelled is none).
func (v *Verifier) Verify(ctx context.Context, token, remoteIP string) (Answer, error) {
	a, err := v.verify(ctx, token, remoteIP)
	if ctx.Err() == nil || err == nil {
		v.mu.Lock()
		if err != nil {
			v.status.FailedAt = time.Now()
		} else {
			v.status.AnsweredAt = time.Now()
		}
		v.mu.Unlock()
	}
	return a, err
}

func (v *Verifier) verify(ctx context.Context, token, remoteIP string) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, v.cfg.Timeout)
	defer cancel()
	form := url.Values{"secret": {v.cfg.Secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.cfg.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return Answer{}, fmt.Errorf("humancheck: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	res, err := v.cfg.Client.Do(req)
	if err != nil {
		return Answer{}, fmt.Errorf("humancheck: siteverify: %w", err)
	}
	defer func() { _ = res.Body.Close() }() // read in full below; nothing to report
	body, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return Answer{}, fmt.Errorf("humancheck: siteverify: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return Answer{}, fmt.Errorf("humancheck: siteverify answered %s", res.Status)
	}
	var a Answer
	if err := json.Unmarshal(body, &a); err != nil {
		return Answer{}, fmt.Errorf("humancheck: siteverify answer: %w", err)
	}
	return a, nil
}
