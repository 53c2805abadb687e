// Package authtest is an identity provider for tests: an RSA key served
// as a JWKS by a local HTTP server, tokens signed with it, and the bodies
// of Cognito's and Auth0's access tokens (docs/tokens.md shows the same).
//
//	idp := authtest.NewIdP(t)
//	v, _ := auth.NewVerifier(ctx, auth.Config{JWKSURL: idp.URL, Issuer: pool, Audience: client, AudienceClaim: "client_id"})
//	p, err := v.Verify(idp.Sign(t, authtest.CognitoAccessToken(pool, client, "alice", []string{"admin"})))
package authtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// KeyID is the kid of the IdP's key.
const KeyID = "authtest-1"

// IdP serves its key set at URL until the test ends.
type IdP struct {
	URL string
	key *rsa.PrivateKey
}

var (
	keyOnce sync.Once
	key     *rsa.PrivateKey
	keyErr  error
)

// NewIdP serves the key (one per test binary: making an RSA key takes
// tens of milliseconds) as a JWKS.
func NewIdP(t testing.TB) *IdP {
	t.Helper()
	keyOnce.Do(func() { key, keyErr = rsa.GenerateKey(rand.Reader, 2048) })
	if keyErr != nil {
		t.Fatal(keyErr)
	}
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": KeyID, "alg": "RS256", "use": "sig",
		"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks) // the client went away; nothing to do
	}))
	t.Cleanup(srv.Close)
	return &IdP{URL: srv.URL, key: key}
}

// PublicKey is the key tokens are verified with.
func (p *IdP) PublicKey() *rsa.PublicKey { return &p.key.PublicKey }

// Sign signs claims with the IdP's key (RS256, kid KeyID).
func (p *IdP) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims(claims))
	tok.Header["kid"] = KeyID
	s, err := tok.SignedString(p.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// CognitoAccessToken is the body of an access token of the Cognito user
// pool whose issuer is pool (https://cognito-idp.<region>.amazonaws.com/<pool id>),
// for the app client clientID, of user sub in groups, valid for an hour:
// the client in client_id (no aud), the groups in cognito:groups and
// token_use "access".
func CognitoAccessToken(pool, clientID, sub string, groups []string) map[string]any {
	now := time.Now()
	c := map[string]any{
		"sub": sub, "iss": pool, "version": 2, "client_id": clientID, "origin_jti": "0c2f5d9e-1b7a-4c3e-9f60-5a8d2e4b7c11",
		"event_id": "7e3d1a2b-9c4f-4e8a-b6d5-3f2a1c0e9b87", "token_use": "access", "scope": "openid email",
		"auth_time": now.Unix(), "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
		"jti": "5b9e2c71-3d4a-4f8b-a1c6-8e7d0f2a3b94", "username": sub,
	}
	if groups != nil {
		c["cognito:groups"] = groups
	}
	return c
}

// CognitoIDToken is the body of the ID token the same sign-in returns:
// the client in aud, token_use "id".
func CognitoIDToken(pool, clientID, sub string, groups []string) map[string]any {
	c := CognitoAccessToken(pool, clientID, sub, groups)
	delete(c, "client_id")
	delete(c, "scope")
	c["aud"], c["token_use"], c["cognito:username"] = clientID, "id", sub
	return c
}

// Auth0AccessToken is the body of an access token of the Auth0 tenant
// whose issuer is tenant (https://<tenant>.auth0.com/, with its slash),
// for the API whose identifier is api, of user sub, valid for an hour:
// aud holds the API and the tenant's userinfo endpoint (openid was asked
// for); custom holds the tenant's namespaced claims (an Action adds them).
func Auth0AccessToken(tenant, api, sub string, custom map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": tenant, "sub": sub, "aud": []string{api, tenant + "userinfo"},
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(), "scope": "openid profile", "azp": "Xy7exampleSpaClientId0123456789",
	}
	for k, v := range custom {
		c[k] = v
	}
	return c
}
