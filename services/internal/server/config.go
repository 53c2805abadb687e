package server

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/pacerhq/pacer/sdk/auth"
)

// DevJWTSecret is the documented HS256 secret used in dev mode when
// PACER_JWT_SECRET is unset. Never use it outside dev mode: AuthFromEnv
// refuses to.
const DevJWTSecret = "pacer-dev-secret-do-not-use-in-production"

// DevCursorKey is the documented cursor-sealing key used in dev mode when
// PACER_CURSOR_KEY is unset.
const DevCursorKey = "pacer-dev-cursor-key-do-not-use-in-production"

// AuthFromEnv builds the JWT verifier from the environment:
// PACER_JWKS_URL (production), or PACER_JWT_SECRET (HS256, ≥ 32 bytes), or
// in dev mode only, DevJWTSecret. PACER_JWT_ISSUER and PACER_JWT_AUDIENCE
// are checked when set.
func AuthFromEnv(ctx context.Context, dev bool) (*auth.Verifier, error) {
	cfg := auth.Config{
		JWKSURL:  os.Getenv("PACER_JWKS_URL"),
		Issuer:   os.Getenv("PACER_JWT_ISSUER"),
		Audience: os.Getenv("PACER_JWT_AUDIENCE"),
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
