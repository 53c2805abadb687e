package auth

import (
	"encoding/json"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// tokenClaims is the JWT body Pacer reads: the registered claims, and the
// audience, roles and org from the claims names gives. Its audience is
// what jwt.WithAudience checks, so the audience claim may be another than
// aud (Cognito access tokens' client_id).
type tokenClaims struct {
	jwt.RegisteredClaims
	names    claimNames
	audience jwt.ClaimStrings
	roles    jwt.ClaimStrings
	org      string
	tokenUse *string
}

// UnmarshalJSON reads the registered claims and the named ones; a named
// claim of the wrong type makes the token malformed.
func (c *tokenClaims) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &c.RegisteredClaims); err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, f := range []struct {
		name, want string
		into       any
	}{
		{c.names.audience, "a string or an array of strings", &c.audience},
		{c.names.roles, "a string or an array of strings", &c.roles},
		{c.names.org, "a string", &c.org},
		{"token_use", "a string", &c.tokenUse},
	} {
		if v, ok := raw[f.name]; ok {
			if err := json.Unmarshal(v, f.into); err != nil {
				return fmt.Errorf("the %q claim is not %s", f.name, f.want)
			}
		}
	}
	return nil
}

// GetAudience is the claim the Config names (jwt.Claims).
func (c *tokenClaims) GetAudience() (jwt.ClaimStrings, error) { return c.audience, nil }

// Validate refuses a token whose token_use is not "access" (Cognito's ID
// tokens carry token_use "id": they are for the application that signed
// the user in, not for an API); it is called after the registered claims
// are checked (jwt.ClaimsValidator).
func (c *tokenClaims) Validate() error {
	if c.tokenUse != nil && *c.tokenUse != "access" {
		return fmt.Errorf("token_use is %q: only access tokens are accepted", *c.tokenUse)
	}
	return nil
}
