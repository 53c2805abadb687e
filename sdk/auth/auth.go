// Package auth verifies the bearer JWTs that Pacer's services accept and
// turns them into a Principal. The user id comes only from the verified
// token's "sub" claim; roles and the organizer id come from its "roles" and
// "org" claims.
//
// Two key sources are supported:
//   - HS256 with a shared secret: for development and tests (make run
//     prints tokens minted with Mint).
//   - A JWKS URL (RS256/ES256/EdDSA keys, cached and refreshed): for
//     production identity providers such as Cognito or Auth0.
//
// Verification uses github.com/golang-jwt/jwt/v5 and, for JWKS,
// github.com/MicahParks/keyfunc/v3.
package auth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// Roles a token may carry.
const (
	RoleAdmin     = "admin"     // operators: every event and request
	RoleOrganizer = "organizer" // organizers: their own org's data
)

// ErrUnauthenticated: the token is missing, malformed, forged or expired.
var ErrUnauthenticated = errors.New("auth: unauthenticated")

// Principal is who a verified token says the caller is.
type Principal struct {
	UserID string   // the token's sub
	Roles  []string // the token's roles
	OrgID  string   // the token's org, for organizers
}

// Has reports whether p has role.
func (p Principal) Has(role string) bool { return slices.Contains(p.Roles, role) }

// IsAdmin reports whether p has the admin role.
func (p Principal) IsAdmin() bool { return p.Has(RoleAdmin) }

// MaxSubject bounds a token's sub (the user id) in bytes.
const MaxSubject = 255

// ValidSubject reports whether sub can be a user id: 1 to MaxSubject bytes
// of valid UTF-8 with no control characters and no noncharacters (U+FFFE,
// U+FFFF). Identity providers' formats pass: "auth0|5f7c8ec7…",
// "google-oauth2|123", email addresses, UUIDs. Verify refuses a token whose
// sub does not, so services never see such a user id.
func ValidSubject(sub string) bool {
	if sub == "" || len(sub) > MaxSubject || !utf8.ValidString(sub) {
		return false
	}
	for _, r := range sub {
		if unicode.IsControl(r) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
	}
	return true
}

// Config selects how tokens are verified. Exactly one of HS256Secret and
// JWKSURL must be set.
type Config struct {
	HS256Secret []byte
	JWKSURL     string
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer   string
	Audience string
	// Leeway tolerates clock skew on exp/nbf/iat (default 30 s).
	Leeway time.Duration
}

// Verifier verifies tokens. It is safe for concurrent use.
type Verifier struct {
	keyfunc jwt.Keyfunc
	parser  *jwt.Parser
}

// claims is the JWT body Pacer reads.
type claims struct {
	jwt.RegisteredClaims
	Roles []string `json:"roles,omitempty"`
	Org   string   `json:"org,omitempty"`
}

// NewVerifier returns a Verifier for cfg. With a JWKS URL it fetches the key
// set once before returning and refreshes it in the background until ctx
// ends.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	// exp is required; iat, when present, must not be in the future (both
	// within the leeway).
	opts := []jwt.ParserOption{jwt.WithLeeway(cfg.Leeway), jwt.WithExpirationRequired(), jwt.WithIssuedAt()}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v := &Verifier{}
	switch {
	case len(cfg.HS256Secret) > 0 && cfg.JWKSURL != "":
		return nil, errors.New("auth: set either an HS256 secret or a JWKS URL, not both")
	case len(cfg.HS256Secret) > 0:
		if len(cfg.HS256Secret) < 32 {
			return nil, errors.New("auth: the HS256 secret must be at least 32 bytes")
		}
		secret := cfg.HS256Secret
		v.keyfunc = func(*jwt.Token) (any, error) { return secret, nil }
		opts = append(opts, jwt.WithValidMethods([]string{"HS256"}))
	case cfg.JWKSURL != "":
		k, err := keyfunc.NewDefaultCtx(ctx, []string{cfg.JWKSURL})
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS %s: %w", cfg.JWKSURL, err)
		}
		v.keyfunc = k.Keyfunc
		opts = append(opts, jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"}))
	default:
		return nil, errors.New("auth: no key source: set an HS256 secret (dev) or a JWKS URL")
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// Verify checks a compact JWT and returns its Principal. Every failure wraps
// ErrUnauthenticated.
func (v *Verifier) Verify(token string) (Principal, error) {
	var c claims
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyfunc); err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	if !ValidSubject(c.Subject) {
		return Principal{}, fmt.Errorf("%w: the token's sub is missing, longer than %d bytes, or holds control characters", ErrUnauthenticated, MaxSubject)
	}
	return Principal{UserID: c.Subject, Roles: c.Roles, OrgID: c.Org}, nil
}

// Mint signs an HS256 token for p, valid for ttl. It is for development and
// tests; production tokens come from the identity provider.
func Mint(secret []byte, p Principal, ttl time.Duration) (string, error) {
	now := time.Now()
	c := claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   p.UserID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
		Roles: p.Roles,
		Org:   p.OrgID,
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(secret)
}
