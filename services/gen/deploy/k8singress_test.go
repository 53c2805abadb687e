package main

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// alb prefixes the AWS Load Balancer Controller's annotations.
const alb = "alb.ingress.kubernetes.io/"

// albBackend is where the ALB sends a request for path under rule, as the
// AWS Load Balancer Controller (2.4.3 or later) orders a rule's paths:
// Exact ones first, then Prefix ones, longest first. Nil when no path
// matches.
func albBackend(rule any, p string) map[string]any {
	paths, _ := path(rule, "http", "paths").([]any)
	paths = append([]any(nil), paths...)
	rank := func(x any) (int, int) {
		if path(x, "pathType") == "Exact" {
			return 0, 0
		}
		return 1, -len(str(path(x, "path")))
	}
	sort.SliceStable(paths, func(i, j int) bool {
		ti, li := rank(paths[i])
		tj, lj := rank(paths[j])
		return ti < tj || ti == tj && li < lj
	})
	for _, x := range paths {
		q := str(path(x, "path"))
		match := p == q
		if path(x, "pathType") == "Prefix" {
			match = match || q == "/" || strings.HasPrefix(p, strings.TrimSuffix(q, "/")+"/")
		}
		if match {
			b, _ := path(x, "backend", "service").(map[string]any)
			return b
		}
	}
	return nil
}

// checkIngress returns a check that the APIs (public) are reached through
// one internet-facing ALB of the AWS Load Balancer Controller, by HTTPS
// on their own host each, with pods as targets, their admin API and
// /metrics answered with a 404 by the ALB itself, the ALB's health check
// on their readiness path, and pods that keep serving while the ALB
// deregisters them.
func checkIngress(public []stack.Service) k8sCheck {
	return func(ms []manifest) []string {
		ings := of(ms, "Ingress")
		if len(ings) != 1 {
			return []string{problemf("%d Ingresses, want one", len(ings))}
		}
		ing := ings[0]
		problems := checkALB(ing)
		rules := map[string]any{}
		for _, r := range path(ing.Doc, "spec", "rules").([]any) {
			if str(path(r, "host")) == "" {
				problems = append(problems, "an Ingress rule without a host")
			}
			rules[str(path(r, "host"))] = r
		}
		tls := map[string]bool{}
		for _, e := range anyList(path(ing.Doc, "spec", "tls")) {
			for _, h := range anyList(path(e, "hosts")) {
				tls[str(h)] = true
			}
		}
		objs := index(ms)
		for _, sv := range public {
			host := stack.HostPlaceholder(sv.Name)
			if !tls[host] {
				problems = append(problems, problemf("%s's host %s is not in the Ingress's tls hosts", sv.Name, host))
			}
			rule, ok := rules[host]
			if !ok {
				problems = append(problems, problemf("no Ingress rule for %s's host %s", sv.Name, host))
				continue
			}
			problems = append(problems, checkRoutes(objs, ing, rule, sv)...)
			problems = append(problems, checkTarget(objs, ing.namespace(), sv)...)
		}
		return problems
	}
}

// checkALB checks the Ingress's class and its ALB: internet-facing, pods
// as targets, HTTPS on 443 with an ACM certificate, HTTP redirected to it.
func checkALB(ing manifest) []string {
	var problems []string
	if c := path(ing.Doc, "spec", "ingressClassName"); c != "alb" {
		problems = append(problems, problemf("ingressClassName %v, want alb (the AWS Load Balancer Controller's)", c))
	}
	ann := func(k string) string { return str(path(ing.Doc, "metadata", "annotations", alb+k)) }
	for k, want := range map[string]string{"scheme": "internet-facing", "target-type": "ip", "ssl-redirect": "443"} {
		if ann(k) != want {
			problems = append(problems, problemf("annotation %s%s is %q, want %q", alb, k, ann(k), want))
		}
	}
	var ports []map[string]int
	if err := json.Unmarshal([]byte(ann("listen-ports")), &ports); err != nil || !containsPort(ports, "HTTPS", 443) || !containsPort(ports, "HTTP", 80) {
		problems = append(problems, problemf("listen-ports %q, want HTTP 80 (redirected) and HTTPS 443", ann("listen-ports")))
	}
	if c := ann("certificate-arn"); !strings.HasPrefix(c, "${") && !strings.HasPrefix(c, "arn:aws:acm:") {
		problems = append(problems, problemf("certificate-arn %q, want an ACM certificate's ARN (a placeholder)", c))
	}
	return problems
}

func containsPort(ports []map[string]int, proto string, port int) bool {
	for _, p := range ports {
		if p[proto] == port {
			return true
		}
	}
	return false
}

// checkRoutes checks where rule sends sv's paths: public ones to sv's
// Service, private ones to a fixed 404 of the ALB.
func checkRoutes(objs objects, ing manifest, rule any, sv stack.Service) []string {
	var problems []string
	for _, p := range []string{"/", sv.HealthPath, "/events/e1", "/administrator"} {
		b := albBackend(rule, p)
		svc := objs.get("Service", ing.namespace(), str(path(b, "name")))
		port := servicePort(svc, path(b, "port"))
		if path(b, "name") != sv.Name || str(path(port, "targetPort")) != str(sv.Port) {
			problems = append(problems, problemf("%s%s goes to %v, want %s's Service port for %d", stack.HostPlaceholder(sv.Name), p, b, sv.Name, sv.Port))
		}
	}
	for _, p := range []string{"/admin", "/admin/dlq/redrive", "/admin/organizers", "/metrics"} {
		b := albBackend(rule, p)
		var action struct {
			Type                string
			FixedResponseConfig struct{ StatusCode string }
		}
		raw := str(path(ing.Doc, "metadata", "annotations", alb+"actions."+str(path(b, "name"))))
		err := json.Unmarshal([]byte(raw), &action)
		if path(b, "port", "name") != "use-annotation" || err != nil || action.Type != "fixed-response" || action.FixedResponseConfig.StatusCode != "404" {
			problems = append(problems, problemf("%s%s goes to %v (%s), want the ALB's fixed 404", stack.HostPlaceholder(sv.Name), p, b, raw))
		}
	}
	return problems
}

// servicePort is the port of svc that an Ingress backend's port (by name
// or number) names.
func servicePort(svc map[string]any, want any) any {
	for _, p := range anyList(path(svc, "spec", "ports")) {
		if n := path(want, "name"); n != nil && path(p, "name") == n || n == nil && str(path(want, "number")) == str(path(p, "port")) {
			return p
		}
	}
	return nil
}

// checkTarget checks sv's pods as the ALB's targets: health checked on
// the readiness path, and still serving for a while after they start
// terminating (a preStop sleep inside the grace period), since the ALB
// stops sending them requests only once they are deregistered.
func checkTarget(objs objects, ns string, sv stack.Service) []string {
	var problems []string
	if hc := path(objs.get("Service", ns, sv.Name), "metadata", "annotations", alb+"healthcheck-path"); hc != sv.ReadyPath {
		problems = append(problems, problemf("%s's Service has the ALB health check on %v, want %s", sv.Name, hc, sv.ReadyPath))
	}
	pod := path(objs.get("Deployment", ns, sv.Name), "spec", "template", "spec")
	sleep, _ := path(pod, "containers", 0, "lifecycle", "preStop", "sleep", "seconds").(int)
	grace, _ := path(pod, "terminationGracePeriodSeconds").(int)
	if sleep < 5 || grace < sleep+10 {
		problems = append(problems, problemf("%s's pods sleep %d s before stopping, within a grace period of %d s: want at least 5 s, and 10 s more grace for the shutdown", sv.Name, sleep, grace))
	}
	return problems
}

// The APIs are public through the ALB, by HTTPS, on their own hosts;
// their admin API and /metrics are not.
func TestK8sIngressExposesTheAPIsOnly(t *testing.T) {
	spec, err := Build(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var public []stack.Service
	for _, sv := range spec.Services {
		if sv.Public {
			public = append(public, sv)
		}
	}
	if len(public) != 2 {
		t.Fatalf("%d public services, want the two APIs", len(public))
	}
	paths := []any{"spec", "rules", 0, "http", "paths"}
	runCheck(t, checkIngress(public),
		mutation{"route /admin to the API", func(t *testing.T, ms []manifest) []manifest {
			ing := find(t, ms, "Ingress", "pacer")
			var kept []any
			for _, p := range path(ing, paths...).([]any) {
				if path(p, "path") != "/admin" {
					kept = append(kept, p)
				}
			}
			set(t, ing, kept, paths...)
			return ms
		}},
		setIn("answer /admin with a 200", "Ingress", "pacer", `{"type":"fixed-response","fixedResponseConfig":{"statusCode":"200"}}`, "metadata", "annotations", alb+"actions.not-found"),
		setIn("send the photo host to asyncevent-api", "Ingress", "pacer", AsyncAPI, "spec", "rules", 1, "http", "paths", 2, "backend", "service", "name"),
		setIn("send the API's host to a port the Service does not have", "Ingress", "pacer", "grpc", "spec", "rules", 0, "http", "paths", 2, "backend", "service", "port", "name"),
		setIn("use another IngressClass", "Ingress", "pacer", "nginx", "spec", "ingressClassName"),
		setIn("leave TLS out", "Ingress", "pacer", nil, "spec", "tls"),
		setIn("listen on HTTP only", "Ingress", "pacer", `[{"HTTP":80}]`, "metadata", "annotations", alb+"listen-ports"),
		setIn("keep the ALB internal", "Ingress", "pacer", "internal", "metadata", "annotations", alb+"scheme"),
		setIn("target instances", "Ingress", "pacer", "instance", "metadata", "annotations", alb+"target-type"),
		setIn("leave the certificate out", "Ingress", "pacer", nil, "metadata", "annotations", alb+"certificate-arn"),
		setIn("serve any host", "Ingress", "pacer", nil, "spec", "rules", 0, "host"),
		setIn("health-check the ALB's default path", "Service", PhotoAPI, nil, "metadata", "annotations", alb+"healthcheck-path"),
		setIn("stop an API pod at once", "Deployment", AsyncAPI, nil, "spec", "template", "spec", "containers", 0, "lifecycle"),
	)
}

// anyList is v as a list, or nil.
func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}
