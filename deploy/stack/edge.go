package stack

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The edge: how the internet reaches the public services through the
// stack's one load balancer.
//
// With a certificate (the CertificateArn parameter) one HTTPS listener on
// 443 routes by host name, a <ID>HostName parameter per public service,
// since the APIs' paths overlap (/healthz, /admin/*, /events/{eventId});
// port 80 only redirects to it. Without one, for a first try without a
// domain, each service keeps a plain HTTP listener on its ListenerPort.
// In both, the admin paths (/admin/*, /metrics) answer only requests from
// the AdminCidrs parameter's networks: nobody's by default.

// Logical ids, parameters and conditions of the edge.
const (
	idHTTPSListener    = "HttpsListener"
	idRedirectListener = "HttpRedirectListener"
	paramCertificate   = "CertificateArn"
	paramAdminCidrs    = "AdminCidrs"
	condTLS            = "HasCertificate"
	condPlain          = "NoCertificate"
)

// TLSPolicy is the HTTPS listener's security policy: TLS 1.3 and 1.2 only.
const TLSPolicy = "ELBSecurityPolicy-TLS13-1-2-2021-06"

// HSTS is the Strict-Transport-Security header the HTTPS listener puts
// on every answer it sends, the tasks' and its own (RFC 6797): browsers
// that saw it use HTTPS only, for a year, for the API host and the names
// under it. The load balancer adds it, replacing any the task sent
// (routing.http.response.strict_transport_security.header_value). The
// plain listeners send none: a browser ignores it over HTTP (§8.1), and
// without a certificate there is no HTTPS to hold it to.
const (
	HSTS          = "max-age=31536000; includeSubDomains"
	hstsAttribute = "routing.http.response.strict_transport_security.header_value"
)

// maxAdminCidrs is how many networks AdminCidrs may name. A listener rule
// matches at most five values in all: an admin rule spends one on the
// host, two on the admin paths and the rest, cidrsPerRule, on networks,
// so the networks are spread over maxAdminCidrs/cidrsPerRule rules.
const (
	maxAdminCidrs = 6
	cidrsPerRule  = 2
)

// lbAttributes harden the load balancer: header fields whose names are
// not valid HTTP are removed before a request is passed on, and requests
// that desync mitigation does not find plainly compliant (the stuff of
// request smuggling) are refused.
var lbAttributes = []any{
	map[string]any{"Key": "routing.http.drop_invalid_header_fields.enabled", "Value": "true"},
	map[string]any{"Key": "routing.http.desync_mitigation_mode", "Value": "strictest"},
}

// The target groups' health checks: a new task takes requests once
// healthyThreshold checks, healthCheckInterval apart, have passed.
const (
	healthCheckInterval = 10 * time.Second
	healthyThreshold    = 2
)

func hostParam(sv Service) string { return sv.ID + "HostName" }

func condAdminCidr(n int) string { return "HasAdminCidr" + strconv.Itoa(n) }

// cidrPattern is one IPv4 network in CIDR notation (the load balancer is
// IPv4 only).
const cidrPattern = `((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])/(3[0-2]|[12]?[0-9])`

// AdminCidrsPattern is AdminCidrs' AllowedPattern: empty, or up to
// maxAdminCidrs comma-separated IPv4 networks.
var AdminCidrsPattern = fmt.Sprintf("^(%s(,%s){0,%d})?$", cidrPattern, cidrPattern, maxAdminCidrs-1)

// edgeParameters adds the certificate, the admin networks and each public
// service's host name.
func (s *Spec) edgeParameters(p map[string]Parameter) {
	p[paramCertificate] = Parameter{Type: "String", Default: str(""),
		Description: "ARN of the ACM certificate (in the stack's region) covering every API host name: HTTPS on 443 routed by host name, " +
			"port 80 redirecting to it. Empty: plain HTTP on each API's own port, for trying the stack only",
		AllowedPattern:        `^(arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[0-9a-f-]+)?$`,
		ConstraintDescription: "an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>), or empty"}
	p[paramAdminCidrs] = Parameter{Type: "String", Default: str(""),
		Description: fmt.Sprintf("IPv4 networks (CIDR, comma-separated, at most %d) allowed to reach the APIs' /admin/* and /metrics "+
			"through the load balancer; empty: nobody (403)", maxAdminCidrs),
		AllowedPattern:        AdminCidrsPattern,
		ConstraintDescription: fmt.Sprintf("empty, or 1 to %d IPv4 networks such as 203.0.113.0/24,198.51.100.7/32 (no spaces)", maxAdminCidrs)}
	for _, sv := range s.Services {
		if sv.Public {
			p[hostParam(sv)] = Parameter{Type: "String", Default: str(""),
				Description: "Host name of " + sv.Name + " (e.g. api.example.com), covered by CertificateArn; " +
					"required with a certificate, empty without one",
				AllowedPattern:        `^(([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)?$`,
				ConstraintDescription: "a lower-case DNS name, or empty"}
		}
	}
}

// edgeConditions adds the conditions the edge's resources are created
// on, and the template rules that refuse parameters contradicting each
// other before anything is created.
func (s *Spec) edgeConditions(t *Template) {
	noCert := map[string]any{"Fn::Equals": []any{Ref(paramCertificate), ""}}
	t.Conditions[condPlain] = noCert
	t.Conditions[condTLS] = map[string]any{"Fn::Not": []any{noCert}}
	for n := 1; n <= maxAdminCidrs; n++ {
		t.Conditions[condAdminCidr(n)] = map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{adminCidr(n), ""}}}}
	}
	var withCert, withoutCert []any
	var hosts []any
	for _, sv := range s.Services {
		if !sv.Public {
			continue
		}
		empty := map[string]any{"Fn::Equals": []any{Ref(hostParam(sv)), ""}}
		withCert = append(withCert, map[string]any{"Assert": map[string]any{"Fn::Not": []any{empty}},
			"AssertDescription": "With CertificateArn, " + hostParam(sv) + " is required: HTTPS routes by host name"})
		withoutCert = append(withoutCert, map[string]any{"Assert": empty,
			"AssertDescription": hostParam(sv) + " routes only on the HTTPS listener: set CertificateArn too, or leave it empty"})
		hosts = append(hosts, Ref(hostParam(sv)))
	}
	for i := 1; i < len(hosts); i++ {
		withCert = append(withCert, map[string]any{"Assert": map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{hosts[i-1], hosts[i]}}}},
			"AssertDescription": "Each API needs its own host name"})
	}
	t.Rules["HostNamesWithCertificate"] = map[string]any{"RuleCondition": map[string]any{"Fn::Not": []any{noCert}}, "Assertions": withCert}
	t.Rules["NoHostNamesWithoutCertificate"] = map[string]any{"RuleCondition": noCert, "Assertions": withoutCert}
}

// adminCidr is the n-th (from 1) network of AdminCidrs, or "" past its
// end: the list is padded with maxAdminCidrs empty entries, so the index
// is always in range.
func adminCidr(n int) any {
	padded := Join("", Ref(paramAdminCidrs), strings.Repeat(",", maxAdminCidrs))
	return map[string]any{"Fn::Select": []any{n - 1, map[string]any{"Fn::Split": []any{",", padded}}}}
}

// edgeIngress is the load balancer's security group ingress: 443 and 80
// with a certificate, each public service's plain port without one.
func (s *Spec) edgeIngress() []any {
	in := func(port int, what string) map[string]any {
		return map[string]any{"IpProtocol": "tcp", "FromPort": port, "ToPort": port, "CidrIp": "0.0.0.0/0", "Description": what}
	}
	ingress := []any{
		If(condTLS, in(443, "HTTPS"), NoValue),
		If(condTLS, in(80, "HTTP, redirected to HTTPS"), NoValue),
	}
	for _, sv := range s.Services {
		if sv.Public {
			ingress = append(ingress, If(condPlain, in(sv.ListenerPort, sv.Name+", plain HTTP (no certificate)"), NoValue))
		}
	}
	return ingress
}

// edgeListeners adds, with a certificate, the HTTPS listener (its default
// answer, for a host name no service has, is 404; every answer carries
// HSTS) and the port 80 listener that only redirects to it.
func edgeListeners(t *Template) {
	t.add(idHTTPSListener, Resource{Type: "AWS::ElasticLoadBalancingV2::Listener", Condition: condTLS, Properties: map[string]any{
		"LoadBalancerArn": Ref(idALB), "Port": 443, "Protocol": "HTTPS", "SslPolicy": TLSPolicy,
		"Certificates":       []any{map[string]any{"CertificateArn": Ref(paramCertificate)}},
		"DefaultActions":     []any{fixed("404", "no such host")},
		"ListenerAttributes": []any{map[string]any{"Key": hstsAttribute, "Value": HSTS}},
	}})
	t.add(idRedirectListener, Resource{Type: "AWS::ElasticLoadBalancingV2::Listener", Condition: condTLS, Properties: map[string]any{
		"LoadBalancerArn": Ref(idALB), "Port": 80, "Protocol": "HTTP",
		"DefaultActions": []any{map[string]any{"Type": "redirect", "RedirectConfig": map[string]any{
			"Protocol": "HTTPS", "Port": "443", "StatusCode": "HTTP_301"}}},
	}})
}

// publicRoutes adds a public service's target group, its plain listener
// (without a certificate) and its listener rules, in priority order:
// admin paths forwarded from AdminCidrs, admin paths refused (403) from
// anywhere else, and everything else of its host (of its port, without a
// certificate) forwarded. It returns the target group's id and the route
// rule's, which exists in both cases: the service depends on it, so that
// its target group has a load balancer before the service starts.
func (s *Spec) publicRoutes(t *Template, sv Service) (tg, route string) {
	tg, listener := sv.ID+"TargetGroup", sv.ID+"Listener"
	t.add(tg, Resource{Type: "AWS::ElasticLoadBalancingV2::TargetGroup", Properties: map[string]any{
		"Name": Sub("pacer-${Stage}-" + sv.ID), "Port": sv.Port, "Protocol": "HTTP", "TargetType": "ip", "VpcId": Ref("VpcId"),
		"HealthCheckPath": sv.HealthPath, "HealthCheckIntervalSeconds": int(healthCheckInterval / time.Second),
		"HealthyThresholdCount": healthyThreshold, "UnhealthyThresholdCount": 3,
		"Matcher":               map[string]any{"HttpCode": "200"},
		"TargetGroupAttributes": []any{map[string]any{"Key": "deregistration_delay.timeout_seconds", "Value": "30"}},
		"Tags":                  tags(sv.Name),
	}})
	t.add(listener, Resource{Type: "AWS::ElasticLoadBalancingV2::Listener", Condition: condPlain, Properties: map[string]any{
		"LoadBalancerArn": Ref(idALB), "Port": sv.ListenerPort, "Protocol": "HTTP",
		"DefaultActions": []any{forward(tg)},
	}})
	base := 10 * s.publicIndex(sv)
	adminPaths := []string{"/admin/*", "/metrics"}
	for c := 0; c < maxAdminCidrs/cidrsPerRule; c++ {
		first := c*cidrsPerRule + 1
		cidrs := []any{adminCidr(first)} // the rule exists only when it is set
		for n := first + 1; n < first+cidrsPerRule; n++ {
			cidrs = append(cidrs, If(condAdminCidr(n), adminCidr(n), NoValue))
		}
		s.rule(t, sv, fmt.Sprintf("%sAdminAllowRule%d", sv.ID, c+1), condAdminCidr(first), base+2+c,
			forward(tg), pathIs(adminPaths...), map[string]any{"Field": "source-ip", "SourceIpConfig": map[string]any{"Values": cidrs}})
	}
	s.rule(t, sv, sv.ID+"AdminDenyRule", "", base+5, fixed("403", "forbidden"), pathIs("/admin/*"))
	// /metrics is for the scraper inside the VPC and AdminCidrs only.
	s.rule(t, sv, sv.ID+"MetricsRule", "", base+6, fixed("403", "forbidden"), pathIs("/metrics", "/metrics/*"))
	route = sv.ID + "RouteRule"
	s.rule(t, sv, route, "", base+9, forward(tg), pathIs("/*"))
	return tg, route
}

// rule adds a listener rule of sv's: on the HTTPS listener, for sv's host
// name, with a certificate; on sv's plain listener without one. cond,
// if set, is the condition it is created on.
func (s *Spec) rule(t *Template, sv Service, id, cond string, priority int, action any, conds ...any) {
	host := map[string]any{"Field": "host-header", "HostHeaderConfig": map[string]any{"Values": []any{Ref(hostParam(sv))}}}
	all := append([]any{If(condTLS, host, NoValue)}, conds...)
	t.add(id, Resource{Type: "AWS::ElasticLoadBalancingV2::ListenerRule", Condition: cond, Properties: map[string]any{
		"ListenerArn": If(condTLS, Ref(idHTTPSListener), Ref(sv.ID+"Listener")), "Priority": priority,
		"Conditions": all, "Actions": []any{action},
	}})
}

// publicIndex is sv's place among the public services: its listener
// rules' priorities are 10×index + 1…9.
func (s *Spec) publicIndex(sv Service) int {
	i := 0
	for _, o := range s.Services {
		if o.ID == sv.ID {
			return i
		}
		if o.Public {
			i++
		}
	}
	panic("stack: " + sv.ID + " is not a service of the spec")
}

func pathIs(paths ...string) map[string]any {
	return map[string]any{"Field": "path-pattern", "PathPatternConfig": map[string]any{"Values": paths}}
}

func forward(tg string) map[string]any {
	return map[string]any{"Type": "forward", "TargetGroupArn": Ref(tg)}
}

func fixed(status, body string) map[string]any {
	return map[string]any{"Type": "fixed-response", "FixedResponseConfig": map[string]any{
		"StatusCode": status, "ContentType": "text/plain", "MessageBody": body}}
}

// apiURL is a public service's base URL: https://<its host name> with a
// certificate, the load balancer's name and its plain port without.
func apiURL(sv Service) any {
	return If(condTLS, Sub("https://${"+hostParam(sv)+"}"),
		Join("", "http://", GetAtt(idALB, "DNSName"), fmt.Sprintf(":%d", sv.ListenerPort)))
}
