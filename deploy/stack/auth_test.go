package stack_test

import (
	"fmt"
	"strings"
	"testing"
)

// The committed template, deployed on paper (cfneval_test.go): the
// TokenVerification rule refuses a stack whose APIs would refuse to start
// or would accept tokens meant for other applications (JwksUrl without
// JwtAudience or JwtIssuer), and the issuer, audience and claim names an
// operator gives reach both APIs' containers.
func TestTokenVerificationRule(t *testing.T) {
	const (
		jwks     = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123/.well-known/jwks.json"
		issuer   = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123"
		client   = "5r8p1exampleclient0pacer01"
		secretID = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pacer/test/jwt-secret-AbCdEf"
	)
	tpl := readTemplate(t)
	for name, c := range map[string]struct {
		values map[string]string
		refuse string // what the refusal says; "" when the stack deploys
	}{
		"HS256":                          {values: map[string]string{"JwtSecretArn": secretID}},
		"HS256 with issuer and audience": {values: map[string]string{"JwtSecretArn": secretID, "JwtIssuer": "https://pacer.example.com", "JwtAudience": "pacer-prod"}},
		"Cognito": {values: map[string]string{"JwksUrl": jwks, "JwtIssuer": issuer, "JwtAudience": client,
			"JwtAudienceClaim": "client_id", "JwtRolesClaim": "cognito:groups"}},
		"Auth0": {values: map[string]string{"JwksUrl": "https://pacer.eu.auth0.com/.well-known/jwks.json", "JwtIssuer": "https://pacer.eu.auth0.com/",
			"JwtAudience": "https://api.pacer.example.com", "JwtRolesClaim": "https://pacer.example.com/roles", "JwtOrgClaim": "https://pacer.example.com/org"}},
		"JwksUrl without an audience": {values: map[string]string{"JwksUrl": jwks, "JwtIssuer": issuer}, refuse: "JwksUrl needs JwtAudience"},
		"JwksUrl without an issuer":   {values: map[string]string{"JwksUrl": jwks, "JwtAudience": client}, refuse: "JwksUrl needs JwtIssuer"},
		"JwksUrl alone":               {values: map[string]string{"JwksUrl": jwks}, refuse: "JwksUrl needs"},
		"both key sources": {values: map[string]string{"JwksUrl": jwks, "JwtIssuer": issuer, "JwtAudience": client, "JwtSecretArn": secretID},
			refuse: "not both"},
		"neither key source":       {values: map[string]string{"JwtSecretArn": "", "JwtAudience": client}, refuse: "Set JwksUrl (your identity provider's keys) or JwtSecretArn"},
		"an issuer without https":  {values: map[string]string{"JwksUrl": jwks, "JwtIssuer": "cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbCdEf123", "JwtAudience": client}, refuse: "AllowedPattern"},
		"two audiences":            {values: map[string]string{"JwksUrl": jwks, "JwtIssuer": issuer, "JwtAudience": client + ",other"}, refuse: "AllowedPattern"},
		"a claim name with spaces": {values: map[string]string{"JwksUrl": jwks, "JwtIssuer": issuer, "JwtAudience": client, "JwtRolesClaim": "cognito groups"}, refuse: "AllowedPattern"},
	} {
		d, err := deploy(tpl, c.values)
		if c.refuse != "" {
			if err == nil || !strings.Contains(err.Error(), c.refuse) {
				t.Errorf("%s: %v, want a refusal saying %q", name, err, c.refuse)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, td := range []string{"AsyncEventApiTaskDefinition", "PhotoApiTaskDefinition"} {
			env := deployedEnv(d, td)
			for param, v := range map[string]string{"PACER_JWKS_URL": "JwksUrl", "PACER_JWT_ISSUER": "JwtIssuer", "PACER_JWT_AUDIENCE": "JwtAudience",
				"PACER_JWT_AUDIENCE_CLAIM": "JwtAudienceClaim", "PACER_JWT_ROLES_CLAIM": "JwtRolesClaim", "PACER_JWT_ORG_CLAIM": "JwtOrgClaim"} {
				if want, given := c.values[v]; given && env[param] != want {
					t.Errorf("%s: %s's %s = %q, want %q", name, td, param, env[param], want)
				}
			}
			if _, given := c.values["JwtAudienceClaim"]; !given && env["PACER_JWT_AUDIENCE_CLAIM"] != "aud" {
				t.Errorf("%s: %s's PACER_JWT_AUDIENCE_CLAIM = %q, want the default aud", name, td, env["PACER_JWT_AUDIENCE_CLAIM"])
			}
		}
	}
}

// deployedEnv is the environment of task definition td's container.
func deployedEnv(d *deployed, td string) map[string]string {
	env := map[string]string{}
	r, ok := d.Resources[td]
	if !ok {
		return env
	}
	c := r.Properties["ContainerDefinitions"].([]any)[0].(map[string]any)
	for _, e := range c["Environment"].([]any) {
		e := e.(map[string]any)
		env[e["Name"].(string)] = fmt.Sprint(e["Value"])
	}
	return env
}
