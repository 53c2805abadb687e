package main

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/auth/authtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

// Kubernetes has no rule to refuse JWKS_URL without JWT_AUDIENCE: the
// binaries do. Each API, given its manifest's variables with the
// placeholders filled as an operator who forgot the audience would,
// refuses to start, naming the variable; given the audience and
// Cognito's claims, the same variables make a verifier that accepts the
// pool's tokens for Pacer's app client and refuses its others.
func TestAPIsRefuseJwksWithoutAnAudience(t *testing.T) {
	const (
		pool   = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"
		client = "5r8p1exampleclient0pacer01"
	)
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	idp := authtest.NewIdP(t)
	t.Setenv("PACER_CURSOR_KEY", "auth-test-cursor-key-of-at-least-32-bytes")
	// A binary that wrongly starts stops after 10 s, and the test fails.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The manifest's variables of bin, its placeholders filled from
	// values (unset: empty, as envsubst leaves them), with its secrets.
	environ := func(bin string, values map[string]string) func(string) string {
		env := map[string]string{"DATABASE_URL": "postgres://pacer@db.invalid:5432/pacer"}
		for _, sv := range spec.Services {
			if sv.Name == bin {
				for _, e := range sv.Env {
					env[e.Name] = os.Expand(e.K8s, func(k string) string { return values[k] })
				}
			}
		}
		return func(k string) string { return env[k] }
	}
	forgot := map[string]string{"JWKS_URL": idp.URL, "JWT_ISSUER": pool, "STAGE": "test", "PHOTO_BUCKET": "photos"}
	cognito := map[string]string{"JWKS_URL": idp.URL, "JWT_ISSUER": pool, "JWT_AUDIENCE": client,
		"JWT_AUDIENCE_CLAIM": "client_id", "JWT_ROLES_CLAIM": "cognito:groups", "STAGE": "test", "PHOTO_BUCKET": "photos"}
	for _, c := range []struct {
		bin string
		// load parses bin's settings from getenv: its token settings, and
		// its start.
		load func(getenv func(string) string) (server.AuthSettings, func() error, error)
	}{
		{AsyncAPI, func(getenv func(string) string) (server.AuthSettings, func() error, error) {
			var cfg asynceventapi.Config
			err := parse(AsyncAPI, cfg.Declare, getenv)
			return cfg.Auth, func() error { return asynceventapi.Run(ctx, cfg) }, err
		}},
		{PhotoAPI, func(getenv func(string) string) (server.AuthSettings, func() error, error) {
			var cfg photoapi.Config
			err := parse(PhotoAPI, cfg.Declare, getenv)
			return cfg.Auth, func() error { return photoapi.Run(ctx, cfg) }, err
		}},
	} {
		_, run, err := c.load(environ(c.bin, forgot))
		if err != nil {
			t.Fatal(err)
		}
		if err := run(); err == nil || !strings.Contains(err.Error(), "PACER_JWT_AUDIENCE") {
			t.Errorf("%s without JWT_AUDIENCE: %v, want a refusal to start naming PACER_JWT_AUDIENCE", c.bin, err)
		}
		a, _, err := c.load(environ(c.bin, cognito)) // not run: it would start
		if err != nil {
			t.Fatal(err)
		}
		v, err := a.Verifier(ctx, false)
		if err != nil {
			t.Fatalf("%s with Cognito's settings: %v", c.bin, err)
		}
		if p, err := v.Verify(idp.Sign(t, authtest.CognitoAccessToken(pool, client, "alice", []string{auth.RoleOrganizer}))); err != nil || !p.Has(auth.RoleOrganizer) {
			t.Errorf("%s: the pool's token for Pacer: %+v, %v", c.bin, p, err)
		}
		if p, err := v.Verify(idp.Sign(t, authtest.CognitoAccessToken(pool, "7other0app0client0id00000", "alice", []string{auth.RoleAdmin}))); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: the pool's token for another app client: accepted as %+v (%v)", c.bin, p, err)
		}
	}
}

func parse(bin string, declare func(*config.Set), getenv func(string) string) error {
	s := config.NewSet(bin)
	declare(s)
	return s.Parse(nil, getenv)
}

// The parameters' patterns take Cognito's and Auth0's values and the
// binaries' defaults, and refuse what would only fail later.
func TestAuthParameterPatterns(t *testing.T) {
	pattern := map[string]*regexp.Regexp{}
	for _, s := range authSettings {
		pattern[s.Param] = regexp.MustCompile(s.Pattern)
	}
	for param, c := range map[string]struct{ ok, bad []string }{
		"JwtIssuer": {ok: []string{"", "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123", "https://pacer.eu.auth0.com/"},
			bad: []string{"cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123", "http://pacer.eu.auth0.com/", "https://a b"}},
		"JwtAudience": {ok: []string{"", "5r8p1exampleclient0pacer01", "https://api.pacer.example.com"},
			bad: []string{"a,b", "a b"}},
		"JwtAudienceClaim": {ok: []string{auth.DefaultAudienceClaim, "client_id"}, bad: []string{"", "client id"}},
		"JwtRolesClaim":    {ok: []string{auth.DefaultRolesClaim, "cognito:groups", "https://pacer.example.com/roles"}, bad: []string{"", "my roles"}},
		"JwtOrgClaim":      {ok: []string{auth.DefaultOrgClaim, "https://pacer.example.com/org"}, bad: []string{""}},
	} {
		re := pattern[param]
		if re == nil {
			t.Errorf("no setting for %s", param)
			continue
		}
		for _, v := range c.ok {
			if !re.MatchString(v) {
				t.Errorf("%s refuses %q", param, v)
			}
		}
		for _, v := range c.bad {
			if re.MatchString(v) {
				t.Errorf("%s accepts %q", param, v)
			}
		}
	}
}
