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
