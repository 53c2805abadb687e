// Package auth verifies the bearer JWTs that Pacer's services accept and
// turns them into a Principal. The user id comes only from the verified
// token's "sub" claim; roles and the organizer id come from the claims
// Config names ("roles" and "org" unless told otherwise).
//
// Two key sources are supported:
//   - HS256 with a shared secret: for development and tests (make run
//     prints tokens minted with Mint).
//   - A JWKS URL (RS256/ES256/EdDSA keys, cached and refreshed): for
//     production identity providers such as Cognito or Auth0. The issuer
//     and the audience are then required: an identity provider signs
//     tokens for every application it serves.
//
// docs/tokens.md shows the claims of Cognito's and Auth0's tokens and the
// Config that reads each. Verification uses github.com/golang-jwt/jwt/v5
// and, for JWKS, github.com/MicahParks/keyfunc/v3 over jwkset.
package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

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

// Default claim names (Config.AudienceClaim, RolesClaim, OrgClaim).
const (
	DefaultAudienceClaim = "aud"
	DefaultRolesClaim    = "roles"
	DefaultOrgClaim      = "org"
)

// Config selects how tokens are verified. Exactly one of HS256Secret and
// JWKSURL must be set.
type Config struct {
	HS256Secret []byte
	JWKSURL     string
	// Issuer is the iss every token must carry, exactly, and Audience the
	// value its audience claim must hold. With JWKSURL both are required:
	// an identity provider signs tokens for every application it serves
	// (one Cognito pool's app clients, one Auth0 tenant's APIs), and
	// without them Pacer would accept all of them. With HS256 each is
	// checked when set.
	Issuer   string
	Audience string
	// AudienceClaim names the claim that holds the audience: a string, or
	// an array of strings one of which is Audience. Default "aud";
	// "client_id" for Cognito's access tokens, which carry no aud.
	AudienceClaim string
	// RolesClaim names the claim that holds the roles, a string or an
	// array of strings. Default "roles"; "cognito:groups" for Cognito's
	// groups, a namespaced claim ("https://pacer.example.com/roles") for
	// Auth0.
	RolesClaim string
	// OrgClaim names the claim that holds the organizer's org id, a
	// string. Default "org".
	OrgClaim string
	// Leeway tolerates clock skew on exp/nbf/iat (default 30 s).
	Leeway time.Duration
}

// claimNames are the claims a Config reads, defaults filled in.
type claimNames struct{ audience, roles, org string }

func (c Config) names() claimNames {
	return claimNames{cmp.Or(c.AudienceClaim, DefaultAudienceClaim), cmp.Or(c.RolesClaim, DefaultRolesClaim), cmp.Or(c.OrgClaim, DefaultOrgClaim)}
}

// check refuses claim names that would read the audience, the roles or
// the org from a registered claim, or two of them from one claim.
func (n claimNames) check() error {
	registered := []string{"iss", "sub", "exp", "nbf", "iat", "jti", "token_use"}
	seen := map[string]string{}
	for _, c := range []struct{ what, name string }{{"audience", n.audience}, {"roles", n.roles}, {"org", n.org}} {
		if slices.Contains(registered, c.name) || (c.what != "audience" && c.name == DefaultAudienceClaim) {
			return fmt.Errorf("auth: the %s claim cannot be %q, which means something else", c.what, c.name)
		}
		if other, dup := seen[c.name]; dup {
			return fmt.Errorf("auth: the %s and %s claims are both %q", other, c.what, c.name)
		}
		seen[c.name] = c.what
	}
	return nil
}

// Verifier verifies tokens. It is safe for concurrent use.
type Verifier struct {
	keyfunc jwt.Keyfunc
	parser  *jwt.Parser
	names   claimNames
	keys    *keySet // a JWKS's fetches (nil for an HS256 secret)
}

// NewVerifier returns a Verifier for cfg. With a JWKS URL it tries once to
// fetch the key set before returning (waiting up to 10 seconds), but a
// failed fetch is not an error: it is logged (slog), and the Verifier
// refuses every token until a refresh succeeds (KeySet reports it).
// Refreshes run every 5 minutes in the background until ctx ends, and
// when a token names a key id the set lacks (at most once every 5
// minutes).
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	v := &Verifier{names: cfg.names()}
	if err := v.names.check(); err != nil {
		return nil, err
	}
	// exp is required; iat, when present, must not be in the future (both
	// within the leeway).
	opts := []jwt.ParserOption{jwt.WithLeeway(cfg.Leeway), jwt.WithExpirationRequired(), jwt.WithIssuedAt()}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		// Checked against the claim AudienceClaim names (tokenClaims.GetAudience).
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
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
		if cfg.Issuer == "" || cfg.Audience == "" {
			return nil, ErrNoAudience
		}
		k, keys, err := newKeySet(ctx, cfg.JWKSURL)
		if err != nil {
			return nil, fmt.Errorf("auth: JWKS %s: %w", cfg.JWKSURL, err)
		}
		v.keyfunc, v.keys = k.Keyfunc, keys
		opts = append(opts, jwt.WithValidMethods([]string{"RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "EdDSA"}))
	default:
		return nil, errors.New("auth: no key source: set an HS256 secret (dev) or a JWKS URL")
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

// ErrNoAudience: a JWKS Config without an Issuer or an Audience, which
// would accept the identity provider's tokens for any application.
var ErrNoAudience = errors.New("auth: a JWKS URL needs an issuer and an audience: without them every token the identity provider signs, for any of its applications, is accepted")

// Verify checks a compact JWT and returns its Principal. Every failure wraps
// ErrUnauthenticated.
func (v *Verifier) Verify(token string) (Principal, error) {
	c := tokenClaims{names: v.names}
	if _, err := v.parser.ParseWithClaims(token, &c, v.keyfunc); err != nil {
		return Principal{}, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	if !ValidSubject(c.Subject) {
		return Principal{}, fmt.Errorf("%w: the token's sub is missing, longer than %d bytes, or holds control characters", ErrUnauthenticated, MaxSubject)
	}
	return Principal{UserID: c.Subject, Roles: c.roles, OrgID: c.org}, nil
}

// Mint signs an HS256 token for p, valid for ttl. It is for development and
// tests; production tokens come from the identity provider.
func Mint(secret []byte, p Principal, ttl time.Duration) (string, error) {
	return Config{HS256Secret: secret}.Mint(p, ttl)
}

// Mint signs an HS256 token for p with c's secret, valid for ttl, that
// c's Verifier accepts: c's issuer and audience when set, p's roles and
// org in c's claims. It is for development, tests and smoke tests of
// HS256 stacks.
func (c Config) Mint(p Principal, ttl time.Duration) (string, error) {
	if len(c.HS256Secret) == 0 {
		return "", errors.New("auth: Mint needs an HS256 secret")
	}
	n := c.names()
	now := time.Now()
	m := jwt.MapClaims{"sub": p.UserID, "iat": now.Unix(), "exp": now.Add(ttl).Unix()}
	if c.Issuer != "" {
		m["iss"] = c.Issuer
	}
	if c.Audience != "" {
		m[n.audience] = c.Audience
	}
	if len(p.Roles) > 0 {
		m[n.roles] = p.Roles
	}
	if p.OrgID != "" {
		m[n.org] = p.OrgID
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, m).SignedString(c.HS256Secret)
}
