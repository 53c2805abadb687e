package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

func TestMain(m *testing.M) {
	standin.RunTests(m, standin.Config{DynamoDB: true, SQS: true, Postgres: true})
}

// A JPEG's first bytes: the image server below serves them as image/jpeg.
var jpeg = []byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}

// The smoke test passes against a stack deployed as the template runs
// it (not dev mode: HS256 tokens with the stack's secret, the tables and
// queue made beforehand), proving a decided participation and a photo
// whose preview loads; and fails, saying why, when the preview does not
// load or the pages have no image base URL.
func TestSmokeAgainstTheLocalStack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	secret := "smoke-test-secret-of-at-least-32-bytes"
	t.Setenv("PACER_JWT_SECRET", secret)
	// The stack's issuer and audience, which HS256 checks when set.
	tokens := server.AuthSettings{Issuer: "https://pacer.example.com", Audience: "pacer-smoke-test"}
	mint := tokens.Config()
	mint.HS256Secret = []byte(secret)
	t.Setenv("PACER_CURSOR_KEY", "smoke-test-cursor-key-of-32-bytes-or-more")
	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("smoke-%d", time.Now().UnixNano())
	backend := asynceventbackend.Config{Table: name, Queue: name, Setup: true, AWS: &awsCfg}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	images := httptest.NewServer(http.StripPrefix("/previews/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "smoke/pacer-smoke.jpg" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(jpeg)
	})))
	defer images.Close()
	dbURL := pgtest.NewDatabase(t)
	photo := func(imageBase string) string {
		return start(ctx, t, "photo-api", func(ctx context.Context, l net.Listener, ready func()) error {
			return photoapi.Run(ctx, photoapi.Config{Listener: l, Stage: name[len(name)-9:], DatabaseURL: dbURL, Setup: true, AWS: &awsCfg, Auth: tokens,
				ImageBaseURL: imageBase, Log: quiet, Ready: func(context.Context, string, photoapi.Deps) error { ready(); return nil }})
		})
	}
	cfg := Config{
		AsyncEventURL: start(ctx, t, "asyncevent-api", func(ctx context.Context, l net.Listener, ready func()) error {
			return asynceventapi.Run(ctx, asynceventapi.Config{Config: backend, Listener: l, Auth: tokens,
				Ready: func(context.Context, string, asynceventapi.Deps) error { ready(); return nil }})
		}),
		PhotoURL:   photo(images.URL + "/previews"),
		PreviewKey: "smoke/pacer-smoke.jpg",
		Timeout:    time.Minute,
	}
	start(ctx, t, "asyncevent-worker", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventworker.Run(ctx, asynceventworker.Config{Config: backend, Concurrency: 2, Batch: 10, Wait: time.Second,
			Visibility: time.Minute, OpsListener: l, Ready: ready})
	})
	if cfg.Tokens, err = MintTokens(mint, time.Minute); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	if err := Run(ctx, cfg, &out); err != nil {
		t.Fatalf("smoke: %v\n%s", err, out.String())
	}
	for _, want := range []string{"participation accepted: 202", "decided: SUCCEEDED", "the public bib search finds it",
		"the preview loads: " + images.URL + "/previews/smoke/pacer-smoke.jpg (image/jpeg", "smoke: passed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, out.String())
		}
	}

	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"a preview not uploaded", func(c *Config) { c.PreviewKey = "smoke/missing.jpg" }, "does not load as an image: 404"},
		{"no image base URL", func(c *Config) { c.PhotoURL = photo("") }, "set PhotoImageBaseUrl"},
		{"a token without its secret", func(c *Config) {
			other := mint
			other.HS256Secret = []byte("another-secret-of-at-least-32-bytes!")
			c.Tokens.User, _ = other.Mint(auth.Principal{UserID: "u"}, time.Minute)
		}, "401"},
		{"a token for another audience", func(c *Config) {
			other := mint
			other.Audience = "pacer-other"
			c.Tokens.User, _ = other.Mint(auth.Principal{UserID: "u"}, time.Minute)
		}, "401"},
	} {
		bad := cfg
		c.edit(&bad)
		out.Reset()
		if err := Run(ctx, bad, &out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q\n%s", c.name, err, c.want, out.String())
		}
	}
}

// start runs a service until the test ends and returns its base URL once
// it is ready.
func start(ctx context.Context, t *testing.T, name string, run func(context.Context, net.Listener, func()) error) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- run(ctx, l, func() { close(ready) }) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
	select {
	case <-ready:
		return "http://" + l.Addr().String()
	case err := <-done:
		t.Fatalf("%s stopped before it was ready: %v", name, err)
	case <-ctx.Done():
		t.Fatalf("%s not ready in time", name)
	}
	return ""
}

func TestOrgComesFromTheOrganizersToken(t *testing.T) {
	cfg := auth.Config{HS256Secret: []byte("smoke-test-secret-of-at-least-32-bytes")}
	tokens, err := MintTokens(cfg, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if org, err := tokens.Org(); err != nil || org != "pacer-smoke" {
		t.Errorf("Org() = %q, %v; want pacer-smoke", org, err)
	}
	for _, bad := range []string{tokens.User, "not-a-jwt", "a.!!.c"} {
		if org, err := (Tokens{Organizer: bad}).Org(); err == nil {
			t.Errorf("Org() of %q = %q, want an error", bad, org)
		}
	}
	// With the stack's own org claim (PACER_JWT_ORG_CLAIM), the tokens
	// carry it there and Org reads it there.
	cfg.OrgClaim = "https://pacer.example.com/org"
	if tokens, err = MintTokens(cfg, time.Minute); err != nil {
		t.Fatal(err)
	}
	if org, err := tokens.Org(); err != nil || org != "pacer-smoke" {
		t.Errorf("Org() from %s = %q, %v; want pacer-smoke", cfg.OrgClaim, org, err)
	}
	if org, err := (Tokens{Organizer: tokens.Organizer}).Org(); err == nil {
		t.Errorf("Org() from the default claim of a token with %s = %q, want an error", cfg.OrgClaim, org)
	}
}
