package main

import (
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
// and a user's.
type Tokens struct {
	Admin, Organizer, User string
}

// MintTokens mints the three for a stack that verifies HS256 tokens with
// secret (JwtSecretArn's value), valid for ttl: sub pacer-smoke-admin,
// pacer-smoke-organizer of organization pacer-smoke, and
// pacer-smoke-user.
func MintTokens(secret []byte, ttl time.Duration) (Tokens, error) {
	var t Tokens
	for _, m := range []struct {
		to *string
		p  auth.Principal
	}{
		{&t.Admin, auth.Principal{UserID: "pacer-smoke-admin", Roles: []string{auth.RoleAdmin}}},
		{&t.Organizer, auth.Principal{UserID: "pacer-smoke-organizer", Roles: []string{auth.RoleOrganizer}, OrgID: "pacer-smoke"}},
		{&t.User, auth.Principal{UserID: "pacer-smoke-user"}},
	} {
		s, err := auth.Mint(secret, m.p, ttl)
		if err != nil {
			return t, err
		}
		*m.to = s
	}
	return t, nil
}

// Org is the organization the organizer's token names (its org claim),
// read without verifying the token: the APIs verify it.
func (t Tokens) Org() (string, error) {
	parts := strings.Split(t.Organizer, ".")
	if len(parts) != 3 {
		return "", errors.New("the organizer's token is not a JWT")
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", fmt.Errorf("the organizer's token: %w", err)
	}
	var c struct {
		Org string `json:"org"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.Org == "" {
		return "", errors.New("the organizer's token has no org claim: the organizer routes need one")
	}
	return c.Org, nil
}
