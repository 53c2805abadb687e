package server

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/config"
)

// DevJWTSecret is the documented HS256 secret used in dev mode when
// PACER_JWT_SECRET is unset. Never use it outside dev mode:
// AuthSettings.Verifier refuses to.
const DevJWTSecret = "pacer-dev-secret-do-not-use-in-production"

// DevCursorKey is the documented cursor-sealing key used in dev mode when
// PACER_CURSOR_KEY is unset.
const DevCursorKey = "pacer-dev-cursor-key-do-not-use-in-production"

// AuthSettings say how the APIs verify tokens (docs/tokens.md): with the
// identity provider's keys (JWKSURL, with its Issuer and the Audience
// meant for Pacer), or an HS256 secret, which comes from the environment
// only (PACER_JWT_SECRET). The claim names say where a token holds its
// audience, roles and org.
type AuthSettings struct {
	JWKSURL, Issuer, Audience           string
	AudienceClaim, RolesClaim, OrgClaim string
}

// Declare declares the settings on s.
func (a *AuthSettings) Declare(s *config.Set) {
	s.String(&a.JWKSURL, "jwks-url", "PACER_JWKS_URL", "",
		"JWKS URL of the identity provider whose tokens the API accepts (then PACER_JWT_ISSUER and PACER_JWT_AUDIENCE are required); empty: HS256 with PACER_JWT_SECRET")
	s.String(&a.Issuer, "jwt-issuer", "PACER_JWT_ISSUER", "",
		"the iss tokens must carry, exactly (Cognito: https://cognito-idp.<region>.amazonaws.com/<pool id>; Auth0: https://<tenant>/); required with PACER_JWKS_URL, checked when set with HS256")
	s.String(&a.Audience, "jwt-audience", "PACER_JWT_AUDIENCE", "",
		"the audience tokens must carry in PACER_JWT_AUDIENCE_CLAIM (Cognito: the app client id; Auth0: the API identifier); required with PACER_JWKS_URL, checked when set with HS256")
	s.String(&a.AudienceClaim, "jwt-audience-claim", "PACER_JWT_AUDIENCE_CLAIM", auth.DefaultAudienceClaim,
		"the claim holding the audience (client_id for Cognito access tokens, which carry no aud)")
	s.String(&a.RolesClaim, "jwt-roles-claim", "PACER_JWT_ROLES_CLAIM", auth.DefaultRolesClaim,
		"the claim holding the caller's roles, admin and organizer (cognito:groups for Cognito groups; a namespaced claim for Auth0)")
	s.String(&a.OrgClaim, "jwt-org-claim", "PACER_JWT_ORG_CLAIM", auth.DefaultOrgClaim,
		"the claim holding an organizer's org id")
}

// Config is the verifier's configuration without a secret.
func (a AuthSettings) Config() auth.Config {
	return auth.Config{JWKSURL: a.JWKSURL, Issuer: a.Issuer, Audience: a.Audience,
		AudienceClaim: a.AudienceClaim, RolesClaim: a.RolesClaim, OrgClaim: a.OrgClaim}
}

// Verifier builds the JWT verifier: with JWKSURL, which then needs the
// issuer and the audience; else with PACER_JWT_SECRET (HS256, ≥ 32
// bytes), or in dev mode only, DevJWTSecret.
func (a AuthSettings) Verifier(ctx context.Context, dev bool) (*auth.Verifier, error) {
	cfg := a.Config()
	if cfg.JWKSURL != "" && (cfg.Issuer == "" || cfg.Audience == "") {
		return nil, errors.New("server: PACER_JWKS_URL is set without PACER_JWT_ISSUER or PACER_JWT_AUDIENCE: set both (the identity provider's issuer, and the audience its tokens for Pacer carry), or any token it signs for any application would be accepted (docs/tokens.md)")
	}
	if cfg.JWKSURL == "" {
		secret := os.Getenv("PACER_JWT_SECRET")
		if secret == "" {
			if !dev {
				return nil, errors.New("server: set PACER_JWKS_URL or PACER_JWT_SECRET (the built-in dev secret is only used with PACER_DEV=1)")
			}
			secret = DevJWTSecret
		}
		cfg.HS256Secret = []byte(secret)
	}
	v, err := auth.NewVerifier(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	return v, nil
}

// CursorKeyFromEnv returns PACER_CURSOR_KEY, or in dev mode DevCursorKey.
func CursorKeyFromEnv(dev bool) ([]byte, error) {
	if k := os.Getenv("PACER_CURSOR_KEY"); k != "" {
		if len(k) < 32 {
			return nil, errors.New("server: PACER_CURSOR_KEY must be at least 32 bytes")
		}
		return []byte(k), nil
	}
	if !dev {
		return nil, errors.New("server: set PACER_CURSOR_KEY (≥ 32 bytes, shared by all instances); the built-in dev key is only used with PACER_DEV=1")
	}
	return []byte(DevCursorKey), nil
}
