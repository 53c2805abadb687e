package main

import "github.com/pacerhq/pacer/deploy/stack"

// setting is a binary's setting an operator chooses per stack: the
// template parameter Param (Fn::Sub ${Param} in the container's
// variable) and the manifests' envsubst placeholder Placeholder, both
// defaulting to the binary's own default (an empty placeholder leaves
// it: an empty variable is the default).
type setting struct {
	Env, Param, Placeholder string
	Description             string
	Pattern, Constraint     string
}

// The AsyncEvent API's settings chosen per stack: the rate budgets and
// the human check's provider (docs/ratelimit.md). The human check's
// secret is a secret (HumanCheckSecretArn), not a parameter.
var asyncAPISettings = []setting{
	{Env: "PACER_RATE_PARTICIPATE_USER", Param: "RateParticipateUser", Placeholder: "RATE_PARTICIPATE_USER",
		Description: "Participations one user may make, deployment-wide (PACER_RATE_PARTICIPATE_USER)", Pattern: budgetPattern, Constraint: budgetConstraint},
	{Env: "PACER_RATE_POLL_USER", Param: "RatePollUser", Placeholder: "RATE_POLL_USER",
		Description: "Status polls one user may make (PACER_RATE_POLL_USER)", Pattern: budgetPattern, Constraint: budgetConstraint},
	{Env: "PACER_RATE_PARTICIPATE_ADDRESS", Param: "RateParticipateAddress", Placeholder: "RATE_PARTICIPATE_ADDRESS",
		Description: "Participations from one client address (PACER_RATE_PARTICIPATE_ADDRESS)", Pattern: budgetPattern, Constraint: budgetConstraint},
	{Env: "PACER_RATE_POLL_ADDRESS", Param: "RatePollAddress", Placeholder: "RATE_POLL_ADDRESS",
		Description: "Status polls from one client address (PACER_RATE_POLL_ADDRESS)", Pattern: budgetPattern, Constraint: budgetConstraint},
	{Env: "PACER_HUMAN_CHECK_SITE_KEY", Param: "HumanCheckSiteKey", Placeholder: "HUMAN_CHECK_SITE_KEY",
		Description: "The challenge provider's site key, for the participation page's widget (PACER_HUMAN_CHECK_SITE_KEY; empty: no widget); its secret is HumanCheckSecretArn",
		Pattern:     `^[A-Za-z0-9_.-]{0,128}$`, Constraint: "empty, or a site key (letters, digits, _ . -)"},
	{Env: "PACER_HUMAN_CHECK_URL", Param: "HumanCheckUrl", Placeholder: "HUMAN_CHECK_URL",
		Description: "The challenge provider's siteverify endpoint (PACER_HUMAN_CHECK_URL: Turnstile's, hCaptcha's or reCAPTCHA's)",
		Pattern:     `^https://\S+$`, Constraint: "an https URL"},
	{Env: "PACER_HUMAN_CHECK_SCRIPT", Param: "HumanCheckScript", Placeholder: "HUMAN_CHECK_SCRIPT",
		Description: "The challenge provider's widget script, which the participation page loads (PACER_HUMAN_CHECK_SCRIPT)",
		Pattern:     `^https://\S+$`, Constraint: "an https URL"},
}

// The pages' and browsers' settings, per API: the origins of the
// applications that may frame the pages and hand them a token
// (PACER_EMBED_ORIGINS; https only, since a token crosses into the
// frame), the origins of front ends that call the API themselves
// (PACER_CORS_ORIGINS), and photo-api's image base URL, the CDN
// or bucket URL the pages load previews from (PACER_PHOTO_IMAGE_BASE_URL):
// without it the runner page shows no photo.
var (
	asyncAPIPageSettings = originSettings("AsyncEventApi", "ASYNCEVENT_API", "the AsyncEvent API", "participation and operator pages")
	photoAPISettings     = append(originSettings("PhotoApi", "PHOTO_API", "photo-api", "runner and organizer pages"), setting{
		Env: "PACER_PHOTO_IMAGE_BASE_URL", Param: "PhotoImageBaseUrl", Placeholder: "PHOTO_IMAGE_BASE_URL",
		Description: "Base URL of the photo previews (PACER_PHOTO_IMAGE_BASE_URL): the CDN or bucket URL a photo's processedKey is appended to, which the pages load images from; empty: the pages show no photo",
		Pattern:     `^(https://[^\s/,]+(/[^\s,]*)?)?$`, Constraint: "empty, or an https URL"})
)

// originSettings are an API's two lists of origins: the applications that
// may frame its pages (PACER_EMBED_ORIGINS, parameter <id>EmbedOrigins,
// placeholder <placeholder>_EMBED_ORIGINS) and the front ends that call it
// (PACER_CORS_ORIGINS, <id>CorsOrigins, <placeholder>_CORS_ORIGINS).
func originSettings(id, placeholder, api, pages string) []setting {
	const list = "comma-separated https://host[:port]; empty: none"
	return []setting{
		{Env: "PACER_EMBED_ORIGINS", Param: id + "EmbedOrigins", Placeholder: placeholder + "_EMBED_ORIGINS",
			Description: "Origins of the applications that may frame the " + pages + " and hand them a token (PACER_EMBED_ORIGINS; " + list + ")",
			Pattern:     originsPattern, Constraint: originsConstraint},
		{Env: "PACER_CORS_ORIGINS", Param: id + "CorsOrigins", Placeholder: placeholder + "_CORS_ORIGINS",
			Description: "Origins of the front ends that call " + api + " from a browser with a bearer token (PACER_CORS_ORIGINS, CORS; " + list + ")",
			Pattern:     originsPattern, Constraint: originsConstraint},
	}
}

// authSettings are how both APIs verify tokens, beyond the key source
// (JwksUrl or JwtSecretArn, stack.authRules): the issuer and audience
// (required with JwksUrl, checked when set with HS256) and the claims
// that hold the audience, roles and org (docs/tokens.md).
var authSettings = []setting{
	{Env: "PACER_JWT_ISSUER", Param: stack.ParamJwtIssuer, Placeholder: "JWT_ISSUER",
		Description: "The iss tokens must carry, exactly (PACER_JWT_ISSUER): https://cognito-idp.<region>.amazonaws.com/<pool id> for Cognito, https://<tenant>.auth0.com/ for Auth0; required with JwksUrl, checked when set with JwtSecretArn",
		Pattern:     `^(https://\S+)?$`, Constraint: "empty, or the identity provider's issuer, an https URL"},
	{Env: "PACER_JWT_AUDIENCE", Param: stack.ParamJwtAudience, Placeholder: "JWT_AUDIENCE",
		Description: "The audience tokens must carry in JwtAudienceClaim (PACER_JWT_AUDIENCE): the Cognito app client id, or the Auth0 API identifier; required with JwksUrl, checked when set with JwtSecretArn",
		Pattern:     `^[^\s,]*$`, Constraint: "empty, or one audience without spaces or commas"},
	claimSetting("AUDIENCE", "Audience", "the audience: aud, or client_id for Cognito access tokens"),
	claimSetting("ROLES", "Roles", "the caller's roles, admin and organizer: cognito:groups for Cognito groups, a namespaced claim for Auth0"),
	claimSetting("ORG", "Org", "an organizer's org id"),
}

// claimPattern is a claim name: printable ASCII without spaces, as
// cognito:groups and https://pacer.example.com/roles are.
const claimPattern = `^[!-~]{1,256}$`

// claimSetting is the setting PACER_JWT_<what>_CLAIM, parameter
// Jwt<What>Claim, placeholder JWT_<what>_CLAIM: the claim holding holds.
func claimSetting(what, What, holds string) setting {
	env := "PACER_JWT_" + what + "_CLAIM"
	return setting{Env: env, Param: "Jwt" + What + "Claim", Placeholder: "JWT_" + what + "_CLAIM",
		Description: "The claim holding " + holds + " (" + env + ")",
		Pattern:     claimPattern, Constraint: "a claim name: 1 to 256 printable ASCII characters without spaces"}
}

// originsPattern is a comma-separated list of https origins, or empty.
const (
	originsPattern    = `^(https://[a-z0-9.-]+(:[0-9]{1,5})?(,https://[a-z0-9.-]+(:[0-9]{1,5})?)*)?$`
	originsConstraint = "empty, or comma-separated https origins in lower case without a path or spaces (https://app.example.com,https://www.example.com)"
)

// budgetPattern is a rate budget as ratelimit.ParseRule reads it.
const (
	budgetPattern    = `^(off|[1-9][0-9]{0,8}/[smh])$`
	budgetConstraint = "off, or N/s, N/m or N/h"
)

// params are ss's template parameters, each defaulting to bin's default.
func (d decls) params(bin string, ss []setting) map[string]stack.Parameter {
	p := map[string]stack.Parameter{}
	for _, s := range ss {
		def := d.def(bin, s.Env)
		if def == "" && s.Pattern == budgetPattern {
			def = "off"
		}
		p[s.Param] = stack.Parameter{Type: "String", Default: &def, Description: s.Description,
			AllowedPattern: s.Pattern, ConstraintDescription: s.Constraint}
	}
	return p
}

// vars are ss's container variables: the parameter in the template, the
// placeholder in the manifests.
func vars(ss []setting) []stack.EnvVar {
	var out []stack.EnvVar
	for _, s := range ss {
		out = append(out, stack.EnvVar{Name: s.Env, CFN: "${" + s.Param + "}", K8s: "${" + s.Placeholder + "}"})
	}
	return out
}
