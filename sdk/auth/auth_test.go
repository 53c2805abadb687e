package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/pacerhq/pacer/sdk/auth"
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
}

func TestVerifyJWKS(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	jwks := map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := json.NewEncoder(w).Encode(jwks); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := auth.NewVerifier(ctx, auth.Config{JWKSURL: srv.URL, Issuer: "https://idp.example"})
	if err != nil {
		t.Fatal(err)
	}
	sign := func(iss string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"sub": "u7", "iss": iss, "exp": time.Now().Add(time.Minute).Unix()})
		tok.Header["kid"] = "k1"
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	p, err := v.Verify(sign("https://idp.example"))
	if err != nil || p.UserID != "u7" {
		t.Fatalf("verify: %+v %v", p, err)
	}
	if _, err := v.Verify(sign("https://evil.example")); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("wrong issuer accepted: %v", err)
	}
	// An HS256 token signed with the public modulus as secret (alg confusion).
	hs, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u7", "iss": "https://idp.example", "exp": time.Now().Add(time.Minute).Unix()}).SignedString(key.N.Bytes())
	if _, err := v.Verify(hs); !errors.Is(err, auth.ErrUnauthenticated) {
		t.Fatalf("alg confusion accepted: %v", err)
	}
}
