package auth_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/auth/authtest"
)

var secret = []byte("test-secret-that-is-at-least-32-bytes!!")

func hsVerifier(t *testing.T) *auth.Verifier {
	t.Helper()
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifyHS256(t *testing.T) {
	v := hsVerifier(t)
	tok, err := auth.Mint(secret, auth.Principal{UserID: "u1", Roles: []string{auth.RoleAdmin}, OrgID: "o1"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if p.UserID != "u1" || !p.IsAdmin() || p.OrgID != "o1" {
		t.Fatalf("principal = %+v", p)
	}
}

func TestVerifyRejects(t *testing.T) {
	v := hsVerifier(t)
	good, _ := auth.Mint(secret, auth.Principal{UserID: "u1"}, time.Minute)
	expired, _ := auth.Mint(secret, auth.Principal{UserID: "u1"}, -time.Hour)
	forged, _ := auth.Mint([]byte("another-secret-that-is-32-bytes-long!!"), auth.Principal{UserID: "u1"}, time.Minute)
	noSub, _ := auth.Mint(secret, auth.Principal{}, time.Minute)
	parts := strings.Split(good, ".")
	// alg=none with the same claims.
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."
	// Claims changed, signature kept.
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tamperedBody := strings.Replace(string(body), `"u1"`, `"admin"`, 1)
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(tamperedBody)) + "." + parts[2]
	noExp := func() string {
		s, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u1"}).SignedString(secret)
		return s
	}()
	for name, tok := range map[string]string{
		"empty": "", "garbage": "abc", "expired": expired, "forged": forged, "no sub": noSub,
		"alg none": none, "tampered": tampered, "no exp": noExp,
	} {
		if _, err := v.Verify(tok); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: want ErrUnauthenticated, got %v", name, err)
		}
	}
}

// Subjects in identity providers' formats are user ids; empty, overlong
// or control-character subjects are refused.
func TestVerifySubjects(t *testing.T) {
	v := hsVerifier(t)
	for sub, ok := range map[string]bool{
		"auth0|5f7c8ec7c33c6c004bbafe82": true, "google-oauth2|123": true, "user@example.com": true, "a#b%c": true,
		"Zoë": true, strings.Repeat("a", 255): true,
		"": false, strings.Repeat("a", 256): false, "a\nb": false, "a\x00b": false, "a\tb": false, "a\u0085b": false, "a\uffffb": false,
	} {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "exp": time.Now().Add(time.Minute).Unix()}).SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		p, err := v.Verify(tok)
		if ok && (err != nil || p.UserID != sub) {
			t.Errorf("sub %q: %+v, %v", sub, p, err)
		}
		if !ok && !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("sub %q accepted: %+v, %v", sub, p, err)
		}
		if got := auth.ValidSubject(sub); got != ok {
			t.Errorf("ValidSubject(%q) = %v", sub, got)
		}
	}
}

// A token issued in the future is refused; clock skew within the leeway
// is not. exp is required.
func TestVerifyIssuedAt(t *testing.T) {
	v := hsVerifier(t)
	now := time.Now()
	for name, c := range map[string]struct {
		claims jwt.MapClaims
		ok     bool
	}{
		"iat an hour ahead":     {jwt.MapClaims{"sub": "u1", "iat": now.Add(time.Hour).Unix(), "exp": now.Add(2 * time.Hour).Unix()}, false},
		"iat a minute ahead":    {jwt.MapClaims{"sub": "u1", "iat": now.Add(time.Minute).Unix(), "exp": now.Add(time.Hour).Unix()}, false},
		"iat 10 s ahead (skew)": {jwt.MapClaims{"sub": "u1", "iat": now.Add(10 * time.Second).Unix(), "exp": now.Add(time.Hour).Unix()}, true},
		"iat now":               {jwt.MapClaims{"sub": "u1", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}, true},
		"no iat":                {jwt.MapClaims{"sub": "u1", "exp": now.Add(time.Hour).Unix()}, true},
		"no exp":                {jwt.MapClaims{"sub": "u1", "iat": now.Unix()}, false},
	} {
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c.claims).SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(tok); (err == nil) != c.ok || (err != nil && !errors.Is(err, auth.ErrUnauthenticated)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := auth.NewVerifier(ctx, auth.Config{}); err == nil {
		t.Error("no key source accepted")
	}
	if _, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: []byte("short")}); err == nil {
		t.Error("short secret accepted")
	}
	// A JWKS verifier needs both the issuer and the audience; the check
	// comes before any fetch.
	for name, cfg := range map[string]auth.Config{
		"no audience": {JWKSURL: "https://idp.invalid/jwks.json", Issuer: "https://idp.invalid/"},
		"no issuer":   {JWKSURL: "https://idp.invalid/jwks.json", Audience: "pacer"},
		"neither":     {JWKSURL: "https://idp.invalid/jwks.json"},
	} {
		if _, err := auth.NewVerifier(ctx, cfg); !errors.Is(err, auth.ErrNoAudience) {
			t.Errorf("%s: %v, want ErrNoAudience", name, err)
		}
	}
	// Claims that would read the audience, the roles or the org from a
	// claim that means something else, or two of them from one claim.
	for name, cfg := range map[string]auth.Config{
		"audience from sub":  {AudienceClaim: "sub"},
		"roles from aud":     {RolesClaim: "aud"},
		"org from iss":       {OrgClaim: "iss"},
		"roles and org":      {RolesClaim: "groups", OrgClaim: "groups"},
		"audience and roles": {AudienceClaim: "client_id", RolesClaim: "client_id"},
	} {
		cfg.HS256Secret = secret
		if _, err := auth.NewVerifier(ctx, cfg); err == nil || !strings.Contains(err.Error(), "claim") {
			t.Errorf("%s: %v, want an error naming the claims", name, err)
		}
	}
}

// A JWKS verifier checks the issuer, refuses a token signed with HS256
// (algorithm confusion: the key's public modulus as the HMAC secret).
func TestVerifyJWKS(t *testing.T) {
	idp := authtest.NewIdP(t)
	v := jwksVerifier(t, idp, auth.Config{Issuer: "https://idp.example", Audience: "pacer"})
	claims := func(iss string) jwt.MapClaims {
		return jwt.MapClaims{"sub": "u7", "iss": iss, "aud": "pacer", "exp": time.Now().Add(time.Minute).Unix()}
	}
	p, err := v.Verify(idp.Sign(t, claims("https://idp.example")))
	if err != nil || p.UserID != "u7" {
		t.Fatalf("verify: %+v %v", p, err)
	}
	if _, err := v.Verify(idp.Sign(t, claims("https://evil.example"))); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("wrong issuer accepted: %v", err)
	}
	hs, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims("https://idp.example")).SignedString(idp.PublicKey().N.Bytes())
	if _, err := v.Verify(hs); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("alg confusion accepted: %v", err)
	}
}
