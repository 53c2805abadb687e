package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/deploy/stack"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/photoapi"
)

// The load balancer's rules match a request's path as sent, while the
// APIs route on the decoded path: /%6detrics passes a rule refusing
// /metrics and, decoded, is /metrics. So every path a rule restricts must
// be refused by the API in each form that the rule's pattern does not
// match as sent, or the rule and the app disagree. The restricted paths
// are read from what is deployed: the template's 403 rules (/admin/*,
// /metrics, /metrics/*) and the Ingress's private paths; each is expanded
// into the API's own routes (every operation under /admin/, with its path
// parameters filled in) and sent to the API as its binary serves it
// (Run), without a token. As sent, it reaches its route (401, or
// /metrics' 200). With the part the pattern matches literally (/admin/,
// /metrics) disguised (disguisedForms: escaped, escaped twice, in another
// case, behind a dot segment), it is refused before any route: 400, or
// the 404 of a path no route has. What follows that part (the pattern's
// *) may be written any way: the rule matches it still.
func TestEscapedRestrictedPathsAreRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	restricted := restrictedPatterns(t, committedTemplate(t))
	for _, p := range stack.PrivatePaths {
		for id := range restricted {
			restricted[id] = append(restricted[id], p, p+"/*")
		}
	}
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf("esc%d", time.Now().UnixNano()%1e9)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	runCtx, stop := context.WithCancel(ctx)
	type served struct {
		base string
		api  huma.API // its spec: the routes under the restricted prefixes
	}
	apis := map[string]served{}
	done := make(chan error, 2)
	start := func(name string, api huma.API, run func(net.Listener, func()) error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		go func() { done <- run(l, func() { close(ready) }) }()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("%s did not start: %v", name, err)
		case <-ctx.Done():
			t.Fatalf("%s did not start", name)
		}
		apis[name] = served{base: "http://" + l.Addr().String(), api: api}
	}
	defer func() {
		stop()
		for range apis {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()
	start(AsyncAPI, asynceventapi.NewAPI(http.NewServeMux(), asynceventapi.Deps{}, nil, false), func(l net.Listener, ready func()) error {
		return asynceventapi.Run(runCtx, asynceventapi.Config{Listener: l, Dev: true,
			Config: asynceventbackend.Config{Table: "AsyncEventTable-" + suffix, Queue: "participations-" + suffix, Setup: true, Log: quiet},
			Ready:  func(context.Context, string, asynceventapi.Deps) error { ready(); return nil }})
	})
	dbURL := pgtest.NewDatabase(t)
	start(PhotoAPI, photoapi.NewAPI(http.NewServeMux(), photoapi.Deps{}, nil, false), func(l net.Listener, ready func()) error {
		return photoapi.Run(runCtx, photoapi.Config{Listener: l, Stage: suffix, DatabaseURL: dbURL, Dev: true, Setup: true, Log: quiet,
			Ready: func(context.Context, string, photoapi.Deps) error { ready(); return nil }})
	})

	client := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	checked := 0
	for _, sv := range spec.Services {
		if !sv.Public {
			continue
		}
		a, ok := apis[sv.Name]
		if !ok || len(restricted[sv.ID]) == 0 {
			t.Fatalf("%s: served %v, restricted paths %v: want both", sv.Name, ok, restricted[sv.ID])
		}
		for _, r := range routesUnder(t, a.api, restricted[sv.ID]) {
			send := func(path string) (int, string) {
				req, err := http.NewRequestWithContext(ctx, r.method, a.base+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s %s %s: %v", sv.Name, r.method, path, err)
				}
				defer resp.Body.Close()
				var p struct{ Detail string }
				_ = json.NewDecoder(resp.Body).Decode(&p)
				return resp.StatusCode, p.Detail
			}
			if r.routed {
				if status, detail := send(r.literal + r.rest); refusedBeforeRouting(status, detail) {
					t.Errorf("%s: %s %s as sent: %d %q, want it to reach its route (else this test shows nothing)", sv.Name, r.method, r.literal+r.rest, status, detail)
				}
			}
			for _, d := range disguisedForms(r.literal) {
				checked++
				if status, detail := send(d + r.rest); !refusedBeforeRouting(status, detail) {
					t.Errorf("%s: %s %s (%s disguised): %d %q, want it refused before any route", sv.Name, r.method, d+r.rest, r.literal+r.rest, status, detail)
				}
			}
		}
	}
	t.Logf("%d disguised forms of restricted paths refused", checked)
}

// refusedBeforeRouting reports whether an answer is the APIs' refusal of
// a path no route takes: the 400 of a needless escape, or the 404 of no
// such path (an escaped slash makes one segment of two, a double escape
// decodes to a literal %, routes are case-sensitive, and a path with a
// dot or empty segment is refused).
func refusedBeforeRouting(status int, detail string) bool {
	return status == http.StatusBadRequest && strings.Contains(detail, "needs no escape") ||
		status == http.StatusNotFound && strings.HasPrefix(detail, "no such path")
}

// restrictedPatterns are the path patterns of the template's listener
// rules answering 403, by public service ID (the one whose host name or
// listener the rule is on).
func restrictedPatterns(t *testing.T, tpl map[string]any) map[string][]string {
	t.Helper()
	owner := regexp.MustCompile(`"Ref":"([A-Za-z0-9]+)HostName"`)
	out := map[string][]string{}
	for id, r := range resources(tpl, "AWS::ElasticLoadBalancingV2::ListenerRule") {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var rule struct {
			Actions []struct {
				Type                string
				FixedResponseConfig struct{ StatusCode string }
			}
		}
		if err := json.Unmarshal(b, &rule); err != nil {
			t.Fatal(err)
		}
		if len(rule.Actions) != 1 || rule.Actions[0].Type != "fixed-response" || rule.Actions[0].FixedResponseConfig.StatusCode != "403" {
			continue
		}
		m := owner.FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no host name says whose rule it is", id)
		}
		for _, c := range r["Conditions"].([]any) {
			if c, ok := c.(map[string]any); ok && c["Field"] == "path-pattern" {
				for _, v := range c["PathPatternConfig"].(map[string]any)["Values"].([]any) {
					out[string(m[1])] = append(out[string(m[1])], v.(string))
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("the template has no listener rule answering 403")
	}
	return out
}

// route is a request to send: a method and a path, the part a rule's
// pattern matches literally then the rest; routed when the API has a
// route for it.
type route struct {
	method, literal, rest string
	routed                bool
}

// routesUnder expands path patterns (a path, or a prefix and "*") into
// requests: the path itself, or every operation of api under the prefix
// (its parameters filled in) and one path no operation has.
func routesUnder(t *testing.T, api huma.API, patterns []string) []route {
	t.Helper()
	param := regexp.MustCompile(`\{[^}]+\}`)
	var out []route
	for _, p := range patterns {
		prefix, wild := strings.CutSuffix(p, "*")
		if strings.ContainsAny(prefix, "*?") {
			t.Fatalf("pattern %q: only a trailing * is expanded here", p)
		}
		if !wild {
			out = append(out, route{method: http.MethodGet, literal: p, routed: p == "/metrics"})
			continue
		}
		out = append(out, route{method: http.MethodGet, literal: prefix, rest: "x0"})
		for path, item := range api.OpenAPI().Paths {
			if !strings.HasPrefix(path, prefix) {
				continue
			}
			for method, op := range map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPost: item.Post,
				http.MethodPut: item.Put, http.MethodPatch: item.Patch, http.MethodDelete: item.Delete} {
				if op != nil {
					out = append(out, route{method: method, literal: prefix, rest: param.ReplaceAllString(path[len(prefix):], "x0"), routed: true})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b route) int {
		return strings.Compare(a.method+" "+a.literal+a.rest, b.method+" "+b.literal+b.rest)
	})
	return slices.Compact(out)
}

// disguisedForms are forms of path that a rule matching it as sent does
// not match, and that decode, or clean, to it: each unreserved character
// (RFC 3986 §2.3: letters, digits, "-._~") percent-encoded alone, then
// all of them, in upper- and lower-case hex; each slash but the first
// encoded (%2F, %2f), then all of them; each of these single escapes
// encoded twice (%25 for its %); the path in upper case and capitalized;
// and behind a dot segment, a dot-dot segment or an empty one.
func disguisedForms(path string) []string {
	unreserved := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0
	}
	seen := map[string]bool{path: true}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, hex := range []string{"%%%02X", "%%%02x"} {
		var all, allSlashes strings.Builder
		for i := 0; i < len(path); i++ {
			c := path[i]
			if !unreserved(c) && (c != '/' || i == 0) {
				all.WriteByte(c)
				allSlashes.WriteByte(c)
				continue
			}
			esc := fmt.Sprintf(hex, c)
			add(path[:i] + esc + path[i+1:])
			add(path[:i] + "%25" + esc[1:] + path[i+1:])
			if c == '/' {
				all.WriteByte(c)
				allSlashes.WriteString(esc)
			} else {
				all.WriteString(esc)
				allSlashes.WriteByte(c)
			}
		}
		add(all.String())
		add(allSlashes.String())
	}
	add(strings.ToUpper(path))
	if len(path) > 1 {
		add(path[:1] + strings.ToUpper(path[1:2]) + path[2:])
	}
	add("/." + path)
	add("/x0/.." + path)
	add("/" + path)
	return out
}

// The disguised forms are the ones the test claims.
func TestDisguisedForms(t *testing.T) {
	forms := disguisedForms("/admin/dlq")
	for _, want := range []string{"/%61dmin/dlq", "/adm%69n/dlq", "/admin/dl%71", "/admin%2Fdlq", "/admin%2fdlq", "/%2561dmin/dlq",
		"/admin%252Fdlq", "/%61%64%6D%69%6E/%64%6C%71", "/%61%64%6d%69%6e/%64%6c%71", "/ADMIN/DLQ", "/Admin/dlq",
		"/./admin/dlq", "/x0/../admin/dlq", "//admin/dlq"} {
		if !slices.Contains(forms, want) {
			t.Errorf("disguisedForms(/admin/dlq) lacks %s: %q", want, forms)
		}
	}
	if slices.Contains(forms, "/admin/dlq") || slices.Contains(forms, "%2Fadmin/dlq") {
		t.Errorf("disguisedForms(/admin/dlq) holds the path itself or an escaped first slash: %q", forms)
	}
	if got := disguisedForms("/metrics"); !slices.Contains(got, "/%6detrics") || !slices.Contains(got, "/%6Detrics") || !slices.Contains(got, "/%256detrics") {
		t.Errorf("disguisedForms(/metrics) = %q", got)
	}
}
