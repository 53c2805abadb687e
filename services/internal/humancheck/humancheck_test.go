package humancheck_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/internal/humancheck"
)

// A local siteverify on loopback: it passes the token "good" sent with
// the secret "s3cret" as a form, and records the remote address sent
// (under a lock: a "slow" call the client gave up on is still answering
// when the next one comes).
func siteverify(t *testing.T, remote *lastRemote) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
			http.Error(w, "want a form POST", http.StatusBadRequest)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		remote.set(r.PostForm.Get("remoteip"))
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.PostForm.Get("secret") != "s3cret":
			_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-secret"]}`))
		case r.PostForm.Get("response") == "good":
			_, _ = w.Write([]byte(`{"success":true,"error-codes":[]}`))
		case r.PostForm.Get("response") == "slow":
			time.Sleep(500 * time.Millisecond)
		case r.PostForm.Get("response") == "garbled":
			_, _ = w.Write([]byte(`<html>`))
		default:
			_, _ = w.Write([]byte(`{"success":false,"error-codes":["invalid-input-response"]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// lastRemote is the remote address a siteverify call sent last.
type lastRemote struct {
	mu sync.Mutex
	v  string
}

func (l *lastRemote) set(v string) { l.mu.Lock(); l.v = v; l.mu.Unlock() }

func (l *lastRemote) get() string { l.mu.Lock(); defer l.mu.Unlock(); return l.v }

// newVerifier is a Verifier of the local siteverify, with the secret it
// takes and a timeout shorter than its "slow" answer.
func newVerifier(t *testing.T) (*humancheck.Verifier, *httptest.Server, *lastRemote) {
	t.Helper()
	var remote lastRemote
	srv := siteverify(t, &remote)
	v, err := humancheck.New(humancheck.Config{URL: srv.URL, Secret: "s3cret", Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return v, srv, &remote
}

func TestVerify(t *testing.T) {
	v, srv, remote := newVerifier(t)
	ctx := context.Background()
	if a, err := v.Verify(ctx, "good", "192.0.2.1"); err != nil || !a.Success || remote.get() != "192.0.2.1" {
		t.Fatalf("good: %+v %v (remoteip %q)", a, err, remote.get())
	}
	a, err := v.Verify(ctx, "bad", "")
	if err != nil || a.Success || len(a.ErrorCodes) != 1 || a.ErrorCodes[0] != "invalid-input-response" || remote.get() != "" {
		t.Fatalf("bad: %+v %v (remoteip %q)", a, err, remote.get())
	}
	for _, tok := range []string{"slow", "garbled"} {
		if _, err := v.Verify(ctx, tok, ""); err == nil {
			t.Errorf("%s: no error", tok)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the secret: %v", tok, err)
		}
	}
	srv.Close()
	if _, err := v.Verify(ctx, "good", ""); err == nil {
		t.Fatal("closed server: no error")
	}
	if _, err := humancheck.New(humancheck.Config{}); err == nil {
		t.Fatal("no secret: no error")
	}
}

// Status follows the calls: none at first, answered after a token passed
// or failed, failing after a call got no answer (a timeout, a garbled
// answer), answered again after the next answer; a call its caller
// cancelled says nothing of the provider.
func TestStatus(t *testing.T) {
	v, _, _ := newVerifier(t)
	ctx := context.Background()
	if s := v.Status(); s.Failing() || !s.AnsweredAt.IsZero() || !s.FailedAt.IsZero() {
		t.Fatalf("before any call: %+v", s)
	}
	for _, c := range []struct {
		token   string
		failing bool
	}{{"bad", false}, {"slow", true}, {"good", false}, {"garbled", true}} {
		_, _ = v.Verify(ctx, c.token, "")
		if s := v.Status(); s.Failing() != c.failing {
			t.Errorf("after %q: failing %v, want %v (%+v)", c.token, s.Failing(), c.failing, s)
		}
	}
	_, _ = v.Verify(ctx, "good", "")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := v.Verify(cancelled, "good", ""); err == nil {
		t.Fatal("a cancelled call answered")
	}
	if s := v.Status(); s.Failing() {
		t.Errorf("a cancelled call counts as the provider failing: %+v", s)
	}
}
