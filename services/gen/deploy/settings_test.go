package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// The AsyncEvent API's container takes the rate budgets and the human
// check from the stack's parameters (each defaulting to the binary's own
// default, which its pattern accepts), the human check's secret from an
// optional secret ARN, and PACER_RATE_REPLICAS from the fewest tasks;
// the budget pattern accepts exactly what the binary parses.
func TestAsyncAPISettingsReachTheContainer(t *testing.T) {
	tpl := committedTemplate(t)
	params := tpl["Parameters"].(map[string]any)
	td := resources(tpl, "AWS::ECS::TaskDefinition")["AsyncEventApiTaskDefinition"]
	if td == nil {
		t.Fatal("no AsyncEventApiTaskDefinition")
	}
	c := td["ContainerDefinitions"].([]any)[0].(map[string]any)
	env := map[string]string{}
	for _, e := range c["Environment"].([]any) {
		e := e.(map[string]any)
		env[e["Name"].(string)] = fmt.Sprint(e["Value"])
	}
	d := decls(declarations())
	for _, s := range asyncAPISettings {
		p, ok := params[s.Param].(map[string]any)
		if !ok {
			t.Errorf("no parameter %s", s.Param)
			continue
		}
		if got, want := env[s.Env], fmt.Sprint(map[string]any{"Fn::Sub": "${" + s.Param + "}"}); got != want {
			t.Errorf("%s = %s, want %s", s.Env, got, want)
		}
		def := p["Default"].(string)
		if want := d.def(AsyncAPI, s.Env); def != want && !(want == "" && def == "off") {
			t.Errorf("%s defaults to %q, the binary to %q", s.Param, def, want)
		}
		if !regexp.MustCompile(p["AllowedPattern"].(string)).MatchString(def) {
			t.Errorf("%s's pattern refuses its default %q", s.Param, def)
		}
	}
	if got := env["PACER_RATE_REPLICAS"]; got != fmt.Sprint(map[string]any{"Fn::Sub": "${AsyncEventApiMinTasks}"}) {
		t.Errorf("PACER_RATE_REPLICAS = %s, want the AsyncEventApiMinTasks parameter", got)
	}
	secret := ""
	for _, s := range c["Secrets"].([]any) {
		secret += fmt.Sprint(s)
	}
	if want := fmt.Sprint(map[string]any{"Name": asynceventapi.HumanCheckSecretEnv, "ValueFrom": map[string]any{"Ref": "HumanCheckSecretArn"}}); !regexp.MustCompile(regexp.QuoteMeta(want)).MatchString(secret) {
		t.Errorf("the container's secrets %s lack %s", secret, want)
	}
	if p, ok := params["HumanCheckSecretArn"].(map[string]any); !ok || p["Default"] != "" {
		t.Errorf("HumanCheckSecretArn %v, want an optional parameter (default empty)", p)
	}

	// The budget pattern accepts only what the binary parses (so a stack
	// never starts tasks that refuse their settings), and every ordinary
	// budget.
	budget := regexp.MustCompile(budgetPattern)
	for _, v := range []string{"off", "1/s", "20/m", "5/s", "999999999/h"} {
		if _, err := ratelimit.ParseRule(v); err != nil || !budget.MatchString(v) {
			t.Errorf("%q: the pattern accepts %v, the binary: %v", v, budget.MatchString(v), err)
		}
	}
	for _, v := range []string{"0/m", "2/d", "2", "", " 2/m", "-1/s", "2/ m", "1.5/s", "2/m/s", "Off"} {
		if budget.MatchString(v) {
			t.Errorf("the pattern accepts %q", v)
		}
	}
}
