package stack

import "fmt"

// How the APIs verify tokens: with the identity provider's keys
// (ParamJwksURL, PACER_JWKS_URL) or an HS256 secret (ParamJwtSecret,
// PACER_JWT_SECRET). The binaries refuse to start with neither, which a
// stack would only learn after its tasks failed and the deployment
// circuit breaker rolled it back; with both, the keys win and the secret
// is silently unused. With the keys, the binaries also need the issuer
// (ParamJwtIssuer, PACER_JWT_ISSUER) and the audience meant for Pacer
// (ParamJwtAudience, PACER_JWT_AUDIENCE): an identity provider signs
// tokens for every application it serves, and without them Pacer would
// accept all of those (docs/tokens.md). The Rules refuse these mistakes
// before anything is created.
//
// The spec declares ParamJwtIssuer and ParamJwtAudience (Spec.Params,
// from the binaries' settings); the template refuses a spec without them.
const (
	ParamJwksURL     = "JwksUrl"
	ParamJwtSecret   = "JwtSecretArn"
	ParamJwtIssuer   = "JwtIssuer"
	ParamJwtAudience = "JwtAudience"
)

func (s *Spec) authRules(t *Template) {
	for _, p := range []string{ParamJwtIssuer, ParamJwtAudience} {
		if _, ok := t.Parameters[p]; !ok {
			panic(fmt.Sprintf("the spec has no %s parameter, which the TokenVerification rule requires with %s", p, ParamJwksURL))
		}
	}
	empty := func(p string) map[string]any { return map[string]any{"Fn::Equals": []any{Ref(p), ""}} }
	noKeys, noSecret := empty(ParamJwksURL), empty(ParamJwtSecret)
	// With the keys, p must be set.
	keysNeed := func(p string) map[string]any {
		return map[string]any{"Fn::Or": []any{noKeys, map[string]any{"Fn::Not": []any{empty(p)}}}}
	}
	t.Rules["TokenVerification"] = map[string]any{"Assertions": []any{
		map[string]any{"Assert": map[string]any{"Fn::Not": []any{map[string]any{"Fn::And": []any{noKeys, noSecret}}}},
			"AssertDescription": "Set JwksUrl (your identity provider's keys) or JwtSecretArn (an HS256 secret): the APIs verify tokens with one of them"},
		map[string]any{"Assert": map[string]any{"Fn::Or": []any{noKeys, noSecret}},
			"AssertDescription": "Set JwksUrl or JwtSecretArn, not both"},
		map[string]any{"Assert": keysNeed(ParamJwtAudience),
			"AssertDescription": "JwksUrl needs JwtAudience, the audience your identity provider's tokens for Pacer carry (a Cognito app client id, an Auth0 API identifier): without it the APIs would accept its tokens for any application, and they refuse to start"},
		map[string]any{"Assert": keysNeed(ParamJwtIssuer),
			"AssertDescription": "JwksUrl needs JwtIssuer, your identity provider's issuer (https://cognito-idp.<region>.amazonaws.com/<pool id>, https://<tenant>.auth0.com/): the APIs refuse to start without it"},
	}}
}
