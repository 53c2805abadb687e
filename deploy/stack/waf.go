package stack

// The edge's rate limit: an AWS WAF web ACL on the load balancer with one
// rate-based rule. A client address (the connection's, as the load
// balancer sees it) past EdgeRateLimit requests in a minute is answered
// 429 (JSON problem, Retry-After 60) at the edge, before any task sees
// it. The APIs' own limits, per user and per address (docs/ratelimit.md),
// work behind it; this one stops a flood from one address that does not
// even authenticate.

// Logical ids and parameters of the edge's rate limit.
const (
	idWebACL            = "EdgeWebAcl"
	idWebACLAssociation = "EdgeWebAclAssociation"
	paramEdgeRateLimit  = "EdgeRateLimit"
	// edgeRateWindow is the rule's evaluation window, in seconds.
	edgeRateWindow = 60
	// DefaultEdgeRateLimit is EdgeRateLimit's default: 50 requests a
	// second from one address, a few dozen people behind one NAT polling
	// as the participation page does.
	DefaultEdgeRateLimit = "3000"
)

// edgeRateBody is the body of the edge's 429: the APIs' problem shape
// (AWS WAF sends it as application/json).
const edgeRateBody = `{"title":"Too Many Requests","status":429,"detail":"too many requests from this address: retry after the Retry-After seconds"}`

func (s *Spec) wafParameters(p map[string]Parameter) {
	p[paramEdgeRateLimit] = Parameter{Type: "Number", Default: str(DefaultEdgeRateLimit), MinValue: num(100), MaxValue: num(2_000_000_000),
		Description: "Requests one client address may make in a minute before the load balancer's AWS WAF rule answers 429 (docs/ratelimit.md)"}
}

// waf adds the web ACL and its association with the load balancer.
func (s *Spec) waf(t *Template) {
	visibility := func(metric string) map[string]any {
		return map[string]any{"SampledRequestsEnabled": true, "CloudWatchMetricsEnabled": true, "MetricName": Sub(metric)}
	}
	t.add(idWebACL, Resource{Type: "AWS::WAFv2::WebACL", Properties: map[string]any{
		"Name": Sub("pacer-${Stage}"), "Scope": "REGIONAL", "DefaultAction": map[string]any{"Allow": map[string]any{}},
		"VisibilityConfig":     visibility("pacer-${Stage}"),
		"CustomResponseBodies": map[string]any{"too-many": map[string]any{"ContentType": "APPLICATION_JSON", "Content": edgeRateBody}},
		"Rules": []any{map[string]any{
			"Name": "rate-per-address", "Priority": 0,
			"Statement": map[string]any{"RateBasedStatement": map[string]any{
				"Limit": Ref(paramEdgeRateLimit), "AggregateKeyType": "IP", "EvaluationWindowSec": edgeRateWindow}},
			"Action": map[string]any{"Block": map[string]any{"CustomResponse": map[string]any{
				"ResponseCode": 429, "CustomResponseBodyKey": "too-many",
				"ResponseHeaders": []any{map[string]any{"Name": "Retry-After", "Value": "60"}}}}},
			"VisibilityConfig": visibility("pacer-${Stage}-rate-per-address"),
		}},
		"Tags": tags("network"),
	}})
	t.add(idWebACLAssociation, Resource{Type: "AWS::WAFv2::WebACLAssociation", Properties: map[string]any{
		"ResourceArn": Ref(idALB), "WebACLArn": GetAtt(idWebACL, "Arn"),
	}})
}
