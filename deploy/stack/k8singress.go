package stack

import "encoding/json"

// IngressClass is the IngressClass of the AWS Load Balancer Controller,
// the one its Helm chart creates: the Ingress becomes an internet-facing
// ALB in the subnets tagged kubernetes.io/role/elb.
const IngressClass = "alb"

// PrivatePaths are the path prefixes the Ingress answers with a 404
// instead of passing them on: the admin API (operators reach it inside
// the cluster, e.g. with kubectl port-forward) and /metrics (for the
// scraper inside the cluster), as the ECS stack's load balancer keeps
// /metrics from the internet.
var PrivatePaths = []string{"/admin", "/metrics"}

// notFound is the ALB fixed-response action PrivatePaths lead to.
const notFound = "not-found"

// alb prefixes the AWS Load Balancer Controller's annotations.
const alb = "alb.ingress.kubernetes.io/"

// HostPlaceholder is the envsubst placeholder of an API's public host
// name: asyncevent-api → ${ASYNCEVENT_API_HOST}.
func HostPlaceholder(binary string) string { return "${" + EnvName(binary) + "_HOST}" }

// kubeService is an API's Service: port 80 to the container's, with its
// ALB target group's health check (on the readiness path) and
// deregistration delay (as the ECS stack's target groups).
func (s *Spec) kubeService(sv Service) map[string]any {
	m := s.meta(sv.Name)
	m["annotations"] = map[string]any{
		alb + "healthcheck-path":        sv.ReadyPath,
		alb + "target-group-attributes": "deregistration_delay.timeout_seconds=30",
	}
	return map[string]any{
		"apiVersion": "v1", "kind": "Service", "metadata": m,
		"spec": map[string]any{
			"selector": map[string]any{"app": sv.Name},
			"ports":    []any{map[string]any{"name": "http", "port": 80, "targetPort": sv.Port}},
		},
	}
}

// ingress puts the public services behind one ALB (AWS Load Balancer
// Controller 2.4.3 or later, which orders a host's rules longest prefix
// first, so PrivatePaths win over /): one host each, HTTPS on 443 with
// the ACM certificate ${TLS_CERTIFICATE_ARN} (the controller takes the
// certificate from ACM, not from a Secret named in spec.tls), HTTP on 80
// redirected to it, and pods as targets (target type ip: the Services are
// ClusterIP).
func (s *Spec) ingress(public []Service) map[string]any {
	// A map of strings always marshals.
	action, _ := json.Marshal(map[string]any{"type": "fixed-response", "fixedResponseConfig": map[string]any{
		"contentType": "text/plain", "statusCode": "404", "messageBody": "not found"}})
	m := s.meta("pacer")
	m["annotations"] = map[string]any{
		alb + "scheme":              "internet-facing",
		alb + "target-type":         "ip",
		alb + "listen-ports":        `[{"HTTP":80},{"HTTPS":443}]`,
		alb + "ssl-redirect":        "443",
		alb + "certificate-arn":     "${TLS_CERTIFICATE_ARN}",
		alb + "ssl-policy":          "ELBSecurityPolicy-TLS13-1-2-2021-06",
		alb + "actions." + notFound: string(action),
	}
	var hosts, rules []any
	for _, sv := range public {
		var paths []any
		for _, p := range PrivatePaths {
			paths = append(paths, ingressPath(p, notFound, map[string]any{"name": "use-annotation"}))
		}
		paths = append(paths, ingressPath("/", sv.Name, map[string]any{"name": "http"}))
		hosts = append(hosts, HostPlaceholder(sv.Name))
		rules = append(rules, map[string]any{"host": HostPlaceholder(sv.Name), "http": map[string]any{"paths": paths}})
	}
	return map[string]any{
		"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": m,
		"spec": map[string]any{
			"ingressClassName": IngressClass,
			"tls":              []any{map[string]any{"hosts": hosts}},
			"rules":            rules,
		},
	}
}

func ingressPath(prefix, service string, port map[string]any) map[string]any {
	return map[string]any{"path": prefix, "pathType": "Prefix",
		"backend": map[string]any{"service": map[string]any{"name": service, "port": port}}}
}
