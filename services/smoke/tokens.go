package main

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pacerhq/pacer/sdk/auth"
)

// Tokens are the bearer tokens a run acts with: an operator's (role
// admin, on both APIs), an organizer's (role organizer and an org claim)
// and a user's. OrgClaim names the organizer's org claim, as the APIs
// read it (PACER_JWT_ORG_CLAIM; default "org").
type Tokens struct {
	Admin, Organizer, User string
	OrgClaim               string
}

// MintTokens mints the three for a stack that verifies HS256 tokens as
// cfg says (its secret is JwtSecretArn's value; its issuer, audience and
// claims the stack's), valid for ttl: sub pacer-smoke-admin,
// pacer-smoke-organizer of organization pacer-smoke, and
// pacer-smoke-user.
func MintTokens(cfg auth.Config, ttl time.Duration) (Tokens, error) {
	t := Tokens{OrgClaim: cfg.OrgClaim}
	for _, m := range []struct {
		to *string
		p  auth.Principal
	}{
		{&t.Admin, auth.Principal{UserID: "pacer-smoke-admin", Roles: []string{auth.RoleAdmin}}},
		{&t.Organizer, auth.Principal{UserID: "pacer-smoke-organizer", Roles: []string{auth.RoleOrganizer}, OrgID: "pacer-smoke"}},
		{&t.User, auth.Principal{UserID: "pacer-smoke-user"}},
	} {
		s, err := cfg.Mint(m.p, ttl)
		if err != nil {
			return t, err
		}
		*m.to = s
	}
	return t, nil
}

// Org is the organization the organizer's token names (its OrgClaim),
// read without verifying the token: the APIs verify it.
func (t Tokens) Org() (string, error) {
	claim := cmp.Or(t.OrgClaim, auth.DefaultOrgClaim)
	parts := strings.Split(t.Organizer, ".")
	if len(parts) != 3 {
		return "", errors.New("the organizer's token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("the organizer's token: %w", err)
	}
	var c map[string]any
	if err := json.Unmarshal(b, &c); err != nil {
		return "", fmt.Errorf("the organizer's token: %w", err)
	}
	if org, _ := c[claim].(string); org != "" {
		return org, nil
	}
	return "", fmt.Errorf("the organizer's token has no %s claim: the organizer routes need one (PACER_JWT_ORG_CLAIM names it)", claim)
}
