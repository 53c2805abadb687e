package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
	"github.com/pacerhq/pacer/services/internal/server"
)

// containerEnv is the environment of the task definition td's container.
func containerEnv(tpl map[string]any, td string) map[string]string {
	env := map[string]string{}
	def := resources(tpl, "AWS::ECS::TaskDefinition")[td]
	if def == nil {
		return env
	}
	c := def["ContainerDefinitions"].([]any)[0].(map[string]any)
	for _, e := range c["Environment"].([]any) {
		e := e.(map[string]any)
		env[e["Name"].(string)] = fmt.Sprint(e["Value"])
	}
	return env
}

// settingProblems says which of bin's settings ss do not reach its
// container (task definition td) from their parameter, defaulting to the
// binary's own default, which the parameter's pattern accepts.
func settingProblems(tpl map[string]any, bin, td string, ss []setting) []string {
	params := tpl["Parameters"].(map[string]any)
	env := containerEnv(tpl, td)
	d := decls(declarations())
	var out []string
	for _, s := range ss {
		p, ok := params[s.Param].(map[string]any)
		if !ok {
			out = append(out, "no parameter "+s.Param)
			continue
		}
		if got, want := env[s.Env], fmt.Sprint(map[string]any{"Fn::Sub": "${" + s.Param + "}"}); got != want {
			out = append(out, fmt.Sprintf("%s's %s = %q, want %s", td, s.Env, got, want))
		}
		def, _ := p["Default"].(string)
		if want := d.def(bin, s.Env); def != want && !(want == "" && def == "off") {
			out = append(out, fmt.Sprintf("%s defaults to %q, the binary to %q", s.Param, def, want))
		}
		if !regexp.MustCompile(p["AllowedPattern"].(string)).MatchString(def) {
			out = append(out, fmt.Sprintf("%s's pattern refuses its default %q", s.Param, def))
		}
	}
	return out
}

// Each API's container takes the settings an operator chooses per stack
// from the stack's parameters: both APIs' token issuer, audience and
// claims (auth_test.go), the AsyncEvent API's rate budgets, human
// check and embedding origins, photo-api's embedding origins and image
// base URL (without which its pages show no photo). The human check's
// secret comes from an optional secret ARN, the replicas' count from
// the replicas table; the budget pattern accepts exactly what the binary parses.
func TestAPISettingsReachTheContainer(t *testing.T) {
	tpl := committedTemplate(t)
	params := tpl["Parameters"].(map[string]any)
	for _, c := range []struct {
		bin, td string
		ss      []setting
	}{
		{AsyncAPI, "AsyncEventApiTaskDefinition", slices.Concat(authSettings, asyncAPISettings, asyncAPIPageSettings)},
		{PhotoAPI, "PhotoApiTaskDefinition", slices.Concat(authSettings, photoAPISettings)},
	} {
		for _, p := range settingProblems(tpl, c.bin, c.td, c.ss) {
			t.Error(p)
		}
	}
	// The check itself: a variable the container lost is found.
	td := resources(tpl, "AWS::ECS::TaskDefinition")["PhotoApiTaskDefinition"]
	c := td["ContainerDefinitions"].([]any)[0].(map[string]any)
	c["Environment"] = slices.DeleteFunc(c["Environment"].([]any), func(e any) bool {
		return e.(map[string]any)["Name"] == "PACER_PHOTO_IMAGE_BASE_URL"
	})
	if got := settingProblems(tpl, PhotoAPI, "PhotoApiTaskDefinition", photoAPISettings); len(got) != 1 || !strings.Contains(got[0], "PACER_PHOTO_IMAGE_BASE_URL") {
		t.Errorf("a container without PACER_PHOTO_IMAGE_BASE_URL: found %q", got)
	}
	tpl = committedTemplate(t)
	c = resources(tpl, "AWS::ECS::TaskDefinition")["AsyncEventApiTaskDefinition"]["ContainerDefinitions"].([]any)[0].(map[string]any)
	// Origins in the parameters' form are what the binary accepts.
	origins := regexp.MustCompile(originsPattern)
	for _, v := range []string{"", "https://app.example.com", "https://a.example.com,https://b.example.com:8443"} {
		var o server.Origins
		if err := o.Set(v); err != nil || !origins.MatchString(v) {
			t.Errorf("origins %q: the pattern accepts %v, the binary: %v", v, origins.MatchString(v), err)
		}
	}
	for _, v := range []string{"http://app.example.com", "https://app.example.com/", "https://a.example.com, https://b.example.com", "*", "https://APP.example.com"} {
		if origins.MatchString(v) {
			t.Errorf("the origins pattern accepts %q", v)
		}
	}
	// Both APIs' replicas count each other, each allowing its share of the
	// replicas running (no fixed PACER_RATE_REPLICAS).
	for _, td := range []string{"AsyncEventApiTaskDefinition", "PhotoApiTaskDefinition"} {
		e := containerEnv(tpl, td)
		if got, want := e["PACER_RATE_REPLICAS_TABLE"], fmt.Sprint(map[string]any{"Fn::Sub": ReplicasTable}); got != want {
			t.Errorf("%s: PACER_RATE_REPLICAS_TABLE = %s, want %s", td, got, want)
		}
		if got, set := e["PACER_RATE_REPLICAS"]; set {
			t.Errorf("%s: PACER_RATE_REPLICAS = %s, a fixed count beside the live one", td, got)
		}
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
