package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/auth/authtest"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/server"
)

// authSettings are the settings a binary parses from env.
func authSettings(t *testing.T, env map[string]string) server.AuthSettings {
	t.Helper()
	var a server.AuthSettings
	s := config.NewSet("test")
	a.Declare(s)
	if err := s.Parse(nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	return a
}

// With the identity provider's keys, the binaries refuse to start
// without the issuer or the audience, dev mode or not, saying which
// variables to set; given both and the claims Cognito's access tokens
// use, they accept the pool's tokens for Pacer's app client only.
func TestAuthSettingsWithJWKS(t *testing.T) {
	const (
		pool   = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"
		client = "5r8p1exampleclient0pacer01"
	)
	idp := authtest.NewIdP(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for name, env := range map[string]map[string]string{
		"no audience": {"PACER_JWKS_URL": idp.URL, "PACER_JWT_ISSUER": pool},
		"no issuer":   {"PACER_JWKS_URL": idp.URL, "PACER_JWT_AUDIENCE": client},
		"neither":     {"PACER_JWKS_URL": idp.URL},
	} {
		for _, dev := range []bool{false, true} {
			_, err := authSettings(t, env).Verifier(ctx, dev)
			if err == nil || !strings.Contains(err.Error(), "PACER_JWT_ISSUER or PACER_JWT_AUDIENCE") {
				t.Errorf("%s (dev %v): %v, want a refusal naming the variables", name, dev, err)
			}
		}
	}

	v, err := authSettings(t, map[string]string{"PACER_JWKS_URL": idp.URL, "PACER_JWT_ISSUER": pool, "PACER_JWT_AUDIENCE": client,
		"PACER_JWT_AUDIENCE_CLAIM": "client_id", "PACER_JWT_ROLES_CLAIM": "cognito:groups"}).Verifier(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(idp.Sign(t, authtest.CognitoAccessToken(pool, client, "alice", []string{auth.RoleAdmin})))
	if err != nil || p.UserID != "alice" || !p.IsAdmin() {
		t.Errorf("the pool's token for Pacer: %+v, %v", p, err)
	}
	if p, err := v.Verify(idp.Sign(t, authtest.CognitoAccessToken(pool, "7other0app0client0id00000", "alice", []string{auth.RoleAdmin}))); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("the pool's token for another app client: accepted as %+v (%v)", p, err)
	}
}

// With HS256 the issuer and audience are checked when set; without a
// key source the binaries refuse to start outside dev mode.
func TestAuthSettingsWithHS256(t *testing.T) {
	ctx := context.Background()
	secret := "server-test-secret-at-least-32-bytes!"
	t.Setenv("PACER_JWT_SECRET", secret)
	v, err := authSettings(t, map[string]string{"PACER_JWT_AUDIENCE": "pacer-prod"}).Verifier(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := auth.Mint([]byte(secret), auth.Principal{UserID: "u1"}, 5*time.Minute)
	if _, err := v.Verify(plain); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("a token without the audience: %v", err)
	}
	ok, _ := auth.Config{HS256Secret: []byte(secret), Audience: "pacer-prod"}.Mint(auth.Principal{UserID: "u1"}, 5*time.Minute)
	if _, err := v.Verify(ok); err != nil {
		t.Errorf("a token with the audience: %v", err)
	}
	t.Setenv("PACER_JWT_SECRET", "")
	if _, err := authSettings(t, nil).Verifier(ctx, false); err == nil || !strings.Contains(err.Error(), "PACER_JWKS_URL or PACER_JWT_SECRET") {
		t.Errorf("no key source outside dev: %v", err)
	}
	if _, err := authSettings(t, nil).Verifier(ctx, true); err != nil {
		t.Errorf("dev mode's built-in secret: %v", err)
	}
}
