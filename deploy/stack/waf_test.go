package stack_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// AWS WAF's published limits the edge's web ACL must keep, which no
// stand-in and no resource specification checks (the specification has
// EvaluationWindowSec's allowed values, checked by templatelint, but no
// ranges or sizes). From the AWS WAF API Reference (RateBasedStatement,
// CustomResponse, CustomResponseBody, WebACL) and the AWS WAF Developer
// Guide (quotas; rule capacity units).
// The edge's parameter and web ACL in the template.
const (
	paramEdgeRateLimit = "EdgeRateLimit"
	idWebACL           = "EdgeWebAcl"
)

const (
	wafMinRateLimit     = 10            // RateBasedStatement.Limit, minimum
	wafMaxRateLimit     = 2_000_000_000 // and maximum
	wafMaxBodyBytes     = 4096          // a custom response body's content
	wafMaxWebACLWCU     = 1500          // capacity units a web ACL takes at the base price (5,000 at most)
	wafRateRuleWCU      = 2             // a rate-based rule on IP without a scope-down statement
	wafMinResponseCode  = 200           // CustomResponse.ResponseCode
	wafMaxResponseCode  = 599
	wafMaxMetricNameLen = 255 // VisibilityConfig.MetricName
)

var (
	wafWindows    = []int{60, 120, 300, 600}             // EvaluationWindowSec
	wafNameRE     = regexp.MustCompile(`^[\w-]{1,128}$`) // WebACL.Name, Rule.Name, a body's key
	wafMetricRE   = regexp.MustCompile(`^[\w#:.\-/]+$`)  // MetricName (no spaces)
	wafHeaderName = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+\-.^_|~]{1,64}$`)
)

// The edge's web ACL keeps AWS WAF's limits for every EdgeRateLimit the
// template accepts (its least and most, and the default) and the longest
// stage name: the rate within WAF's range, a window WAF offers, a JSON
// body within 4 KB, a response code WAF sends, names and metric names
// WAF takes, and the rules' capacity units within the base quota.
func TestEdgeWebACLKeepsWAFLimits(t *testing.T) {
	tpl := readTemplate(t)
	p := tpl["Parameters"].(map[string]any)[paramEdgeRateLimit].(map[string]any)
	lo, hi := int(p["MinValue"].(float64)), int(p["MaxValue"].(float64))
	if lo < wafMinRateLimit || hi > wafMaxRateLimit {
		t.Errorf("%s allows %d..%d; AWS WAF takes %d..%d", paramEdgeRateLimit, lo, hi, wafMinRateLimit, wafMaxRateLimit)
	}
	for _, limit := range []string{strconv.Itoa(lo), stack.DefaultEdgeRateLimit, strconv.Itoa(hi)} {
		for _, f := range webACLFailures(t, tpl, map[string]string{paramEdgeRateLimit: limit, "Stage": "abcdefghijkl"}) {
			t.Errorf("EdgeRateLimit %s: %s", limit, f)
		}
	}
}

// webACLFailures deploys tpl with params and lists what in its web ACL
// AWS WAF would refuse.
func webACLFailures(t *testing.T, tpl map[string]any, params map[string]string) []string {
	t.Helper()
	d, err := deploy(tpl, params)
	if err != nil {
		t.Fatal(err)
	}
	acl, ok := d.Resources[idWebACL]
	if !ok || acl.Type != "AWS::WAFv2::WebACL" {
		return []string{"no web ACL " + idWebACL}
	}
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	pr := acl.Properties
	if name := fmt.Sprint(pr["Name"]); !wafNameRE.MatchString(name) {
		bad("web ACL name %q", name)
	}
	metric := func(where string, vc any) {
		name := fmt.Sprint(vc.(map[string]any)["MetricName"])
		if len(name) > wafMaxMetricNameLen || !wafMetricRE.MatchString(name) {
			bad("%s: metric name %q", where, name)
		}
	}
	metric("web ACL", pr["VisibilityConfig"])
	bodies := map[string]bool{}
	for key, b := range pr["CustomResponseBodies"].(map[string]any) {
		b := b.(map[string]any)
		content := fmt.Sprint(b["Content"])
		if !wafNameRE.MatchString(key) || len(content) == 0 || len(content) > wafMaxBodyBytes {
			bad("response body %q: %d bytes (1 to %d) or a bad key", key, len(content), wafMaxBodyBytes)
		}
		if b["ContentType"] == "APPLICATION_JSON" && !json.Valid([]byte(content)) {
			bad("response body %q is not JSON", key)
		}
		bodies[key] = true
	}
	wcu, names, priorities := 0, map[string]bool{}, map[string]bool{}
	for _, r := range asList(pr["Rules"]) {
		r := r.(map[string]any)
		name, prio := fmt.Sprint(r["Name"]), fmt.Sprint(r["Priority"])
		if !wafNameRE.MatchString(name) || names[name] || priorities[prio] {
			bad("rule %q (priority %s): a bad or repeated name or priority", name, prio)
		}
		names[name], priorities[prio] = true, true
		metric("rule "+name, r["VisibilityConfig"])
		rb, ok := r["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
		if !ok {
			bad("rule %q: not a rate-based rule, whose capacity this test does not know", name)
			continue
		}
		wcu += wafRateRuleWCU
		if rb["ScopeDownStatement"] != nil || rb["AggregateKeyType"] != "IP" {
			bad("rule %q: a scope-down or other key costs more than %d WCU", name, wafRateRuleWCU)
		}
		limit, err := strconv.Atoi(fmt.Sprint(rb["Limit"]))
		if err != nil || limit < wafMinRateLimit || limit > wafMaxRateLimit {
			bad("rule %q: Limit %v (AWS WAF takes %d..%d)", name, rb["Limit"], wafMinRateLimit, wafMaxRateLimit)
		}
		if w, _ := strconv.Atoi(fmt.Sprint(rb["EvaluationWindowSec"])); !slices.Contains(wafWindows, w) {
			bad("rule %q: EvaluationWindowSec %v (one of %v)", name, rb["EvaluationWindowSec"], wafWindows)
		}
		if cr, ok := r["Action"].(map[string]any)["Block"].(map[string]any)["CustomResponse"].(map[string]any); ok {
			code, _ := strconv.Atoi(fmt.Sprint(cr["ResponseCode"]))
			if code < wafMinResponseCode || code > wafMaxResponseCode {
				bad("rule %q: response code %v", name, cr["ResponseCode"])
			}
			if key := cr["CustomResponseBodyKey"]; key != nil && !bodies[fmt.Sprint(key)] {
				bad("rule %q: response body %v is not defined", name, key)
			}
			for _, h := range asList(cr["ResponseHeaders"]) {
				if n := fmt.Sprint(h.(map[string]any)["Name"]); !wafHeaderName.MatchString(n) {
					bad("rule %q: header name %q", name, n)
				}
			}
		}
	}
	if wcu > wafMaxWebACLWCU {
		bad("the rules take %d WCU, past %d", wcu, wafMaxWebACLWCU)
	}
	return out
}

// Each check above fails on a web ACL that breaks it.
func TestEdgeWebACLChecksCatchMutations(t *testing.T) {
	mutations := map[string]func(acl map[string]any){
		"a rate below WAF's": func(acl map[string]any) { rateRule(acl)["Limit"] = 5 },
		"a window WAF lacks": func(acl map[string]any) { rateRule(acl)["EvaluationWindowSec"] = 90 },
		"a body past 4 KB": func(acl map[string]any) {
			acl["CustomResponseBodies"].(map[string]any)["too-many"].(map[string]any)["Content"] = `"` + string(make([]byte, 4100)) + `"`
		},
		"a body that is not JSON": func(acl map[string]any) {
			acl["CustomResponseBodies"].(map[string]any)["too-many"].(map[string]any)["Content"] = "{"
		},
		"an undefined body": func(acl map[string]any) {
			asList(acl["Rules"])[0].(map[string]any)["Action"].(map[string]any)["Block"].(map[string]any)["CustomResponse"].(map[string]any)["CustomResponseBodyKey"] = "nope"
		},
		"a response code WAF refuses": func(acl map[string]any) {
			asList(acl["Rules"])[0].(map[string]any)["Action"].(map[string]any)["Block"].(map[string]any)["CustomResponse"].(map[string]any)["ResponseCode"] = 999
		},
		"a metric name with a space": func(acl map[string]any) {
			acl["VisibilityConfig"].(map[string]any)["MetricName"] = "pacer prod"
		},
		"a scope-down": func(acl map[string]any) { rateRule(acl)["ScopeDownStatement"] = map[string]any{} },
	}
	for name, mutate := range mutations {
		tpl := readTemplate(t)
		mutate(tpl["Resources"].(map[string]any)[idWebACL].(map[string]any)["Properties"].(map[string]any))
		if len(webACLFailures(t, tpl, map[string]string{"Stage": "dev"})) == 0 {
			t.Errorf("%s: not caught", name)
		}
	}
}

// rateRule is the first rule's rate-based statement of a web ACL's
// properties.
func rateRule(acl map[string]any) map[string]any {
	return asList(acl["Rules"])[0].(map[string]any)["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
}
