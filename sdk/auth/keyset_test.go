package auth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/auth/authtest"
)

// flakyIdP serves idp's key set while up, and answers 503 otherwise.
func flakyIdP(t *testing.T, idp *authtest.IdP) (url string, up *atomic.Bool) {
	t.Helper()
	up = &atomic.Bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		res, err := http.Get(idp.URL)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		_, _ = io.Copy(w, res.Body) // the client went away; nothing to do
	}))
	t.Cleanup(srv.Close)
	return srv.URL, up
}

// unknownKey is a token naming a key id no set holds (a key rotated in):
// verifying it makes the Verifier fetch its set (its signature is never
// checked: there is no key to check it with).
func unknownKey() string {
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"RS256","kid":"rotated-in"}`)) + "." + enc([]byte(`{"sub":"u7"}`)) + "." + enc([]byte("sig"))
}

// An identity provider that does not serve the key set at start-up does
// not fail NewVerifier, and KeySet says so: no key, the last fetch
// failed. Once it serves the set, a token naming its key fetches it, and
// KeySet says the set is loaded. A Verifier whose fetch fails later (a
// token naming a key its set lacks) keeps its keys, which verify, and
// KeySet says the last fetch failed.
func TestKeySetStatus(t *testing.T) {
	idp := authtest.NewIdP(t)
	url, up := flakyIdP(t, idp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := auth.Config{JWKSURL: url, Issuer: "https://idp.example", Audience: "pacer"}
	token := idp.Sign(t, map[string]any{"sub": "u7", "iss": cfg.Issuer, "aud": cfg.Audience, "exp": time.Now().Add(time.Minute).Unix()})

	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		t.Fatalf("an unreachable key set failed NewVerifier: %v", err)
	}
	s := v.KeySet()
	if !s.Remote || s.Keys != 0 || !s.LoadedAt.IsZero() || !s.Failing() || s.Err == nil {
		t.Fatalf("never loaded: %+v (failing %v)", s, s.Failing())
	}

	up.Store(true)
	// The failed fetch at start did not spend the unknown-key refresh
	// (one at once, then one per 5 minutes; a token sent while the IdP was
	// down would have spent it, and the set would wait for the next
	// periodic fetch): this token's unknown kid fetches the set now.
	if p, err := v.Verify(token); err != nil || p.UserID != "u7" {
		t.Fatalf("after the IdP came back: %+v %v", p, err)
	}
	s = v.KeySet()
	if s.Keys != 1 || s.LoadedAt.IsZero() || s.Failing() {
		t.Fatalf("loaded: %+v (failing %v)", s, s.Failing())
	}

	v2, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := v2.KeySet(); s.Keys != 1 || s.Failing() {
		t.Fatalf("loaded at start: %+v", s)
	}
	up.Store(false)
	if _, err := v2.Verify(unknownKey()); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("an unknown key verified: %v", err)
	}
	s = v2.KeySet()
	if s.Keys != 1 || !s.Failing() || s.Err == nil {
		t.Fatalf("a failed refresh: %+v (failing %v)", s, s.Failing())
	}
	if _, err := v2.Verify(token); err != nil {
		t.Fatalf("the key held no longer verifies after a failed refresh: %v", err)
	}
}

// An HS256 verifier's key is always there.
func TestKeySetOfASecret(t *testing.T) {
	if s := hsVerifier(t).KeySet(); s.Remote || s.Keys != 1 || s.Failing() {
		t.Fatalf("HS256: %+v", s)
	}
}
