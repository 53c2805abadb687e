package stack

// How the APIs verify tokens: with the identity provider's keys
// (ParamJwksURL, PACER_JWKS_URL) or an HS256 secret (ParamJwtSecret,
// PACER_JWT_SECRET). The binaries refuse to start with neither, which a
// stack would only learn after its tasks failed and the deployment
// circuit breaker rolled it back; with both, the keys win and the secret
// is silently unused. The Rules refuse both mistakes before anything is
// created.
const (
	ParamJwksURL   = "JwksUrl"
	ParamJwtSecret = "JwtSecretArn"
)

func (s *Spec) authRules(t *Template) {
	noKeys := map[string]any{"Fn::Equals": []any{Ref(ParamJwksURL), ""}}
	noSecret := map[string]any{"Fn::Equals": []any{Ref(ParamJwtSecret), ""}}
	t.Rules["TokenVerification"] = map[string]any{"Assertions": []any{
		map[string]any{"Assert": map[string]any{"Fn::Not": []any{map[string]any{"Fn::And": []any{noKeys, noSecret}}}},
			"AssertDescription": "Set JwksUrl (your identity provider's keys) or JwtSecretArn (an HS256 secret): the APIs verify tokens with one of them"},
		map[string]any{"Assert": map[string]any{"Fn::Or": []any{noKeys, noSecret}},
			"AssertDescription": "Set JwksUrl or JwtSecretArn, not both"},
	}}
}
