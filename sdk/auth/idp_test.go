package auth_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/auth/authtest"
)

// jwksVerifier is a Verifier of cfg with idp's key set.
func jwksVerifier(t *testing.T, idp *authtest.IdP, cfg auth.Config) *auth.Verifier {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cfg.JWKSURL = idp.URL
	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// shape is one identity provider's token shape: the Config that reads
// it, a token Pacer must accept and whom it names, and tokens of the
// same provider it must refuse (each a change to the accepted token's
// claims: nil deletes a claim).
type shape struct {
	cfg    auth.Config
	token  map[string]any
	want   auth.Principal
	refuse map[string]map[string]any
}

func (s shape) check(t *testing.T) {
	idp := authtest.NewIdP(t)
	v := jwksVerifier(t, idp, s.cfg)
	got, err := v.Verify(idp.Sign(t, s.token))
	if err != nil || got.UserID != s.want.UserID || got.OrgID != s.want.OrgID || !slices.Equal(got.Roles, s.want.Roles) {
		t.Fatalf("the token: %+v, %v; want %+v", got, err, s.want)
	}
	for name, change := range s.refuse {
		c := maps.Clone(s.token)
		for k, x := range change {
			if x == nil {
				delete(c, k)
			} else {
				c[k] = x
			}
		}
		if got, err := v.Verify(idp.Sign(t, c)); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: accepted as %+v (%v)", name, got, err)
		}
	}
}

// Cognito's access tokens carry the app client in client_id (no aud),
// the groups in cognito:groups and token_use "access"; org is a claim a
// pre-token-generation trigger (V2_0) adds. Pacer reads them with
// AudienceClaim client_id and RolesClaim cognito:groups, and refuses the
// pool's tokens for its other app clients, its ID tokens and another
// pool's tokens. docs/tokens.md shows the same token.
func TestVerifyCognitoAccessToken(t *testing.T) {
	const (
		pool   = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"
		client = "5r8p1exampleclient0pacer01"
		sub    = "3f1c6b2e-8d7a-4e0b-9c55-0a1b2c3d4e5f"
	)
	token := authtest.CognitoAccessToken(pool, client, sub, []string{"organizer"})
	token["org"] = "org-42"
	shape{
		cfg:   auth.Config{Issuer: pool, Audience: client, AudienceClaim: "client_id", RolesClaim: "cognito:groups"},
		token: token,
		want:  auth.Principal{UserID: sub, Roles: []string{"organizer"}, OrgID: "org-42"},
		refuse: map[string]map[string]any{
			"another app client of the pool": {"client_id": "7other0app0client0id00000", "cognito:groups": []string{"admin"}},
			"no client_id":                   {"client_id": nil},
			"the client id in aud only":      {"client_id": nil, "aud": client},
			// The ID token for Pacer's own client: aud, not client_id, and
			// token_use id.
			"an ID token":                 {"client_id": nil, "scope": nil, "aud": client, "token_use": "id"},
			"token_use id with client_id": {"token_use": "id"},
			"another pool":                {"iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other9999"},
			"no iss":                      {"iss": nil},
			"groups not strings":          {"cognito:groups": []int{1}},
		},
	}.check(t)

	// With aud as the audience claim (the default), the pool's ID tokens
	// for Pacer's client would match: token_use refuses them.
	id := authtest.CognitoIDToken(pool, client, sub, []string{"admin"})
	idp := authtest.NewIdP(t)
	v := jwksVerifier(t, idp, auth.Config{Issuer: pool, Audience: client, RolesClaim: "cognito:groups"})
	if got, err := v.Verify(idp.Sign(t, id)); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Errorf("an ID token with the audience in aud: accepted as %+v (%v)", got, err)
	}
}

// Auth0's access tokens carry the API identifier in aud (with the
// userinfo endpoint when openid was asked for) and custom claims under a
// namespace. Pacer reads the namespaced roles and org, and refuses the
// tenant's tokens for its other APIs, another tenant's tokens, and roles
// in a claim it was not told to read.
func TestVerifyAuth0AccessToken(t *testing.T) {
	const (
		tenant = "https://pacer.eu.auth0.com/"
		api    = "https://api.pacer.example.com"
		sub    = "auth0|5f7c8ec7c33c6c004bbafe82"
	)
	shape{
		cfg: auth.Config{Issuer: tenant, Audience: api,
			RolesClaim: "https://pacer.example.com/roles", OrgClaim: "https://pacer.example.com/org"},
		token: authtest.Auth0AccessToken(tenant, api, sub, map[string]any{
			"https://pacer.example.com/roles": []string{"admin"}, "https://pacer.example.com/org": "org-7"}),
		want: auth.Principal{UserID: sub, Roles: []string{"admin"}, OrgID: "org-7"},
		refuse: map[string]map[string]any{
			"another API of the tenant":  {"aud": "https://billing.example.com"},
			"the userinfo audience only": {"aud": []string{tenant + "userinfo"}},
			"no aud":                     {"aud": nil},
			"another tenant":             {"iss": "https://other-tenant.us.auth0.com/"},
			"the tenant without its /":   {"iss": "https://pacer.eu.auth0.com"},
			"org not a string":           {"https://pacer.example.com/org": []string{"org-7"}},
		},
	}.check(t)

	// Only the configured claims count: a plain roles claim makes no admin.
	idp := authtest.NewIdP(t)
	v := jwksVerifier(t, idp, auth.Config{Issuer: tenant, Audience: api, RolesClaim: "https://pacer.example.com/roles"})
	got, err := v.Verify(idp.Sign(t, authtest.Auth0AccessToken(tenant, api, sub, map[string]any{"roles": []string{"admin"}, "org": "org-7"})))
	if err != nil || got.IsAdmin() || got.OrgID != "org-7" {
		t.Errorf("roles outside the configured claim: %+v, %v; want no roles, org from the default claim", got, err)
	}
}

// With HS256 the issuer and audience are optional, and checked when set;
// Config.Mint mints what its Verifier accepts, custom claims included.
func TestVerifyHS256IssuerAndAudience(t *testing.T) {
	ctx := context.Background()
	cfg := auth.Config{HS256Secret: secret, Issuer: "https://pacer.example.com", Audience: "pacer-prod",
		AudienceClaim: "client_id", RolesClaim: "groups", OrgClaim: "tenant"}
	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := auth.Principal{UserID: "u1", Roles: []string{auth.RoleOrganizer}, OrgID: "o1"}
	tok, err := cfg.Mint(want, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := v.Verify(tok); err != nil || got.OrgID != "o1" || !got.Has(auth.RoleOrganizer) {
		t.Fatalf("a token minted by the Config: %+v, %v", got, err)
	}
	plain, _ := auth.Mint(secret, want, time.Minute)
	staging := cfg
	staging.Audience = "pacer-staging"
	other, _ := staging.Mint(want, time.Minute)
	for name, tok := range map[string]string{"no iss or audience": plain, "another audience": other} {
		if _, err := v.Verify(tok); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	// Unset, neither is checked.
	if _, err := hsVerifier(t).Verify(other); err != nil {
		t.Errorf("an HS256 verifier without issuer or audience: %v", err)
	}
	if _, err := (auth.Config{}).Mint(want, time.Minute); err == nil {
		t.Error("Mint without a secret")
	}
}
