package stack_test

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// The edge of the committed template, deployed on paper (cfneval_test.go)
// with and without a certificate: which listeners and ports are open, and
// where the load balancer sends a request, by port, host, path and
// source address, following the listener rules as the load balancer
// does (lowest priority first, then the listener's default action).

const (
	certARN   = "arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
	apiHost   = "api.example.com"
	photoHost = "photos.example.com"
	internet  = "198.18.7.7"
	asyncTG   = "forward AsyncEventApiTargetGroup"
	photoTG   = "forward PhotoApiTargetGroup"
	forbidden = "fixed 403"
	closed    = "closed"
)

// request is what reaches the load balancer.
type request struct {
	port             int
	host, path, from string
}

func (r request) String() string {
	return fmt.Sprintf("%s:%d%s from %s", r.host, r.port, r.path, r.from)
}

// edgeCase is one set of parameter values and what the deployed edge
// must then be.
type edgeCase struct {
	params    map[string]string
	listeners map[int]string // port → protocol
	routes    map[request]string
	urls      map[string]string // output → value
}

var withTLS = edgeCase{
	params: map[string]string{
		"CertificateArn": certARN, "AsyncEventApiHostName": apiHost, "PhotoApiHostName": photoHost,
		"AdminCidrs": "203.0.113.0/24,198.51.100.7/32,192.0.2.0/28,10.1.0.0/16,10.2.0.0/16,172.16.0.0/12",
	},
	listeners: map[int]string{443: "HTTPS", 80: "HTTP"},
	routes: map[request]string{
		{443, apiHost, "/events/e1", internet}:                                    asyncTG,
		{443, "API.Example.com", "/healthz", internet}:                            asyncTG,
		{443, apiHost, "/", internet}:                                             asyncTG,
		{443, photoHost, "/events/e1", internet}:                                  photoTG,
		{443, photoHost, "/healthz", internet}:                                    photoTG,
		{443, apiHost, "/admin/dlq", internet}:                                    forbidden,
		{443, apiHost, "/admin/events/e1/draw", internet}:                         forbidden,
		{443, apiHost, "/metrics", internet}:                                      forbidden,
		{443, apiHost, "/metrics/x", internet}:                                    forbidden,
		{443, photoHost, "/admin/organizers", internet}:                           forbidden,
		{443, photoHost, "/metrics", internet}:                                    forbidden,
		{443, photoHost, "/metrics", "198.51.100.8"}:                              forbidden,
		{443, apiHost, "/admin/dlq", "203.0.113.9"}:                               asyncTG,
		{443, photoHost, "/admin/organizers", "203.0.113.9"}:                      photoTG,
		{443, photoHost, "/metrics", "198.51.100.7"}:                              photoTG,
		{443, apiHost, "/metrics", "192.0.2.15"}:                                  asyncTG,
		{443, apiHost, "/admin/dlq", "192.0.2.16"}:                                forbidden,
		{443, apiHost, "/admin/dlq", "10.1.2.3"}:                                  asyncTG,
		{443, photoHost, "/admin/organizers", "10.2.2.3"}:                         photoTG,
		{443, apiHost, "/admin/dlq", "172.31.0.1"}:                                asyncTG,
		{443, "pacer-test-1.eu-west-1.elb.amazonaws.com", "/events/e1", internet}: "fixed 404",
		{443, "203.0.113.1", "/admin/dlq", "203.0.113.9"}:                         "fixed 404",
		{80, apiHost, "/events/e1", internet}:                                     "redirect HTTP_301 HTTPS:443",
		{80, photoHost, "/admin/organizers", "203.0.113.9"}:                       "redirect HTTP_301 HTTPS:443",
		{8081, apiHost, "/events/e1", internet}:                                   closed,
		{8082, photoHost, "/events/e1", internet}:                                 closed,
	},
	urls: map[string]string{"AsyncEventApiURL": "https://" + apiHost, "PhotoApiURL": "https://" + photoHost},
}

var plain = edgeCase{
	params:    map[string]string{},
	listeners: map[int]string{8081: "HTTP", 8082: "HTTP"},
	routes: map[request]string{
		{8081, "anything", "/events/e1", internet}:        asyncTG,
		{8082, "anything", "/events/e1", internet}:        photoTG,
		{8081, "anything", "/healthz", internet}:          asyncTG,
		{8081, "anything", "/admin/dlq", internet}:        forbidden,
		{8081, "anything", "/admin/dlq", "10.0.0.1"}:      forbidden,
		{8081, "anything", "/metrics", internet}:          forbidden,
		{8082, "anything", "/admin/organizers", internet}: forbidden,
		{8082, "anything", "/metrics", internet}:          forbidden,
		{443, apiHost, "/events/e1", internet}:            closed,
		{80, apiHost, "/events/e1", internet}:             closed,
	},
	urls: map[string]string{"AsyncEventApiURL": "http://att:LoadBalancer.DNSName:8081", "PhotoApiURL": "http://att:LoadBalancer.DNSName:8082"},
}

var plainWithAdmin = edgeCase{
	params:    map[string]string{"AdminCidrs": "203.0.113.0/24"},
	listeners: plain.listeners,
	routes: map[request]string{
		{8081, "anything", "/admin/dlq", "203.0.113.9"}:        asyncTG,
		{8082, "anything", "/metrics", "203.0.113.9"}:          photoTG,
		{8082, "anything", "/admin/organizers", internet}:      forbidden,
		{8081, "anything", "/events/e1", internet}:             asyncTG,
		{8082, "anything", "/admin/organizers", "203.0.114.1"}: forbidden,
	},
	urls: plain.urls,
}

func TestEdge(t *testing.T) {
	for name, c := range map[string]edgeCase{"with a certificate": withTLS, "without": plain, "without, with admin networks": plainWithAdmin} {
		t.Run(name, func(t *testing.T) {
			for _, f := range c.failures(readTemplate(t)) {
				t.Error(f)
			}
		})
	}
}

// failures are what is wrong with tpl's edge deployed with c's
// parameters.
func (c edgeCase) failures(tpl map[string]any) []string {
	d, err := deploy(tpl, c.params)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	lb := d.Resources["LoadBalancer"].Properties
	attrs := map[string]any{}
	for _, a := range asList(lb["LoadBalancerAttributes"]) {
		a := a.(map[string]any)
		attrs[a["Key"].(string)] = a["Value"]
	}
	for k, v := range map[string]string{"routing.http.drop_invalid_header_fields.enabled": "true", "routing.http.desync_mitigation_mode": "strictest"} {
		if attrs[k] != v {
			fail("load balancer attribute %s = %v, want %s", k, attrs[k], v)
		}
	}
	listeners := map[int]string{}
	for id, r := range d.listeners() {
		p := r.Properties
		port, proto := int(p["Port"].(float64)), p["Protocol"].(string)
		listeners[port] = proto
		if proto != "HTTPS" {
			continue
		}
		if pol, _ := p["SslPolicy"].(string); pol != stack.TLSPolicy || !strings.HasPrefix(pol, "ELBSecurityPolicy-TLS13-1-2-") {
			fail("%s: SslPolicy %q, want a TLS 1.3/1.2 policy", id, pol)
		}
		if certs := fmt.Sprint(p["Certificates"]); certs != fmt.Sprint([]any{map[string]any{"CertificateArn": c.params["CertificateArn"]}}) {
			fail("%s: Certificates %s, want %s", id, certs, c.params["CertificateArn"])
		}
	}
	if fmt.Sprint(listeners) != fmt.Sprint(c.listeners) {
		fail("listeners %v, want %v", listeners, c.listeners)
	}
	if open := fmt.Sprint(d.openPorts()); open != fmt.Sprint(sortedPorts(c.listeners)) {
		fail("the load balancer's security group opens %s, want %v (its listeners')", open, sortedPorts(c.listeners))
	}
	out = append(out, d.ruleLimits()...)
	for _, r := range sortedRequests(c.routes) {
		if got, err := d.route(r); err != nil {
			fail("%s: %v", r, err)
		} else if got != c.routes[r] {
			fail("%s: %s, want %s", r, got, c.routes[r])
		}
	}
	for name, want := range c.urls {
		if d.Outputs[name] != want {
			fail("output %s = %v, want %s", name, d.Outputs[name], want)
		}
	}
	return out
}

func (d *deployed) listeners() map[string]deployedResource {
	out := map[string]deployedResource{}
	for id, r := range d.Resources {
		if r.Type == "AWS::ElasticLoadBalancingV2::Listener" {
			out[id] = r
		}
	}
	return out
}

func (d *deployed) openPorts() []int {
	var out []int
	for _, in := range asList(d.Resources["LoadBalancerSecurityGroup"].Properties["SecurityGroupIngress"]) {
		in := in.(map[string]any)
		from, to := int(in["FromPort"].(float64)), int(in["ToPort"].(float64))
		if in["CidrIp"] != "0.0.0.0/0" {
			continue
		}
		for p := from; p <= to; p++ {
			out = append(out, p)
		}
	}
	sort.Ints(out)
	return out
}

// listenerRules are the listener rules of the listener id, by priority.
func (d *deployed) listenerRules(listener string) []deployedResource {
	var out []deployedResource
	for _, r := range d.Resources {
		if r.Type == "AWS::ElasticLoadBalancingV2::ListenerRule" && r.Properties["ListenerArn"] == "ref:"+listener {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Properties["Priority"].(float64) < out[j].Properties["Priority"].(float64)
	})
	return out
}

// route is what the load balancer does with r: "closed" (its security
// group or no listener), or its action.
func (d *deployed) route(r request) (string, error) {
	open := false
	for _, p := range d.openPorts() {
		open = open || p == r.port
	}
	if !open {
		return closed, nil
	}
	for id, l := range d.listeners() {
		if int(l.Properties["Port"].(float64)) != r.port {
			continue
		}
		for _, rule := range d.listenerRules(id) {
			match := true
			for _, c := range asList(rule.Properties["Conditions"]) {
				ok, err := matches(c.(map[string]any), r)
				if err != nil {
					return "", err
				}
				match = match && ok
			}
			if match {
				return action(asList(rule.Properties["Actions"]))
			}
		}
		return action(asList(l.Properties["DefaultActions"]))
	}
	return closed, nil
}

func matches(c map[string]any, r request) (bool, error) {
	values := func(config string) []any { return asList(c[config].(map[string]any)["Values"]) }
	switch c["Field"] {
	case "host-header":
		for _, v := range values("HostHeaderConfig") {
			if glob(strings.ToLower(v.(string)), strings.ToLower(r.host)) {
				return true, nil
			}
		}
	case "path-pattern":
		for _, v := range values("PathPatternConfig") {
			if glob(v.(string), r.path) {
				return true, nil
			}
		}
	case "source-ip":
		addr := netip.MustParseAddr(r.from)
		for _, v := range values("SourceIpConfig") {
			p, err := netip.ParsePrefix(v.(string))
			if err != nil {
				return false, fmt.Errorf("source-ip %q: %w", v, err)
			}
			if p.Contains(addr) {
				return true, nil
			}
		}
	default:
		return false, fmt.Errorf("condition %v is not supported here", c)
	}
	return false, nil
}

// glob matches the load balancer's patterns: * is any run of characters,
// ? one character.
func glob(pattern, s string) bool {
	re := regexp.QuoteMeta(pattern)
	re = strings.ReplaceAll(strings.ReplaceAll(re, `\*`, ".*"), `\?`, ".")
	return regexp.MustCompile("^" + re + "$").MatchString(s)
}

func action(actions []any) (string, error) {
	if len(actions) != 1 {
		return "", fmt.Errorf("%d actions, want 1", len(actions))
	}
	a := actions[0].(map[string]any)
	switch a["Type"] {
	case "forward":
		return "forward " + strings.TrimPrefix(a["TargetGroupArn"].(string), "ref:"), nil
	case "fixed-response":
		return "fixed " + a["FixedResponseConfig"].(map[string]any)["StatusCode"].(string), nil
	case "redirect":
		rc := a["RedirectConfig"].(map[string]any)
		return fmt.Sprintf("redirect %s %s:%s", rc["StatusCode"], rc["Protocol"], rc["Port"]), nil
	}
	return "", fmt.Errorf("action %v is not supported here", a)
}

// ruleLimits are the load balancer's limits on rules that the deployed
// rules break: at most five condition values a rule, three a condition
// (five for source-ip), each of these fields once, and one rule per
// priority on a listener.
func (d *deployed) ruleLimits() []string {
	var out []string
	seen := map[string]string{}
	for _, id := range sortedKeys(resourceMap(d.Resources)) {
		r := d.Resources[id]
		if r.Type != "AWS::ElasticLoadBalancingV2::ListenerRule" {
			continue
		}
		key := fmt.Sprint(r.Properties["ListenerArn"], " priority ", r.Properties["Priority"])
		if other, dup := seen[key]; dup {
			out = append(out, fmt.Sprintf("%s and %s: both on %s", other, id, key))
		}
		seen[key] = id
		total, fields := 0, map[string]bool{}
		for _, c := range asList(r.Properties["Conditions"]) {
			c := c.(map[string]any)
			field := c["Field"].(string)
			n, limit := 0, 3
			for k, v := range c {
				if strings.HasSuffix(k, "Config") {
					n = len(asList(v.(map[string]any)["Values"]))
				}
			}
			if field == "source-ip" {
				limit = 5
			}
			if n == 0 || n > limit {
				out = append(out, fmt.Sprintf("%s: its %s condition has %d values (1 to %d)", id, field, n, limit))
			}
			if fields[field] {
				out = append(out, fmt.Sprintf("%s: two %s conditions", id, field))
			}
			fields[field] = true
			total += n
		}
		if total > 5 {
			out = append(out, fmt.Sprintf("%s: %d condition values, at most 5 a rule", id, total))
		}
	}
	return out
}

func resourceMap(m map[string]deployedResource) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sortedPorts(m map[int]string) []int {
	var out []int
	for p := range m {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}

func sortedRequests(m map[request]string) []request {
	var out []request
	for r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Parameter values that contradict each other, or that the load balancer
// would refuse mid-deploy, are refused before anything is created.
func TestEdgeRefusesBadParameters(t *testing.T) {
	tls := func(kv ...string) map[string]string {
		p := map[string]string{"CertificateArn": certARN, "AsyncEventApiHostName": apiHost, "PhotoApiHostName": photoHost}
		for i := 0; i < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	six := "10.0.0.0/16,10.1.0.0/16,10.2.0.0/16,10.3.0.0/16,10.4.0.0/16,10.5.0.0/16"
	for name, c := range map[string]struct {
		params map[string]string
		want   string // "" when accepted
	}{
		"certificate and host names":            {tls(), ""},
		"six admin networks":                    {tls("AdminCidrs", six), ""},
		"certificate without host names":        {tls("AsyncEventApiHostName", ""), "AsyncEventApiHostName is required"},
		"certificate without photo host":        {tls("PhotoApiHostName", ""), "PhotoApiHostName is required"},
		"one host name for both":                {tls("PhotoApiHostName", apiHost), "its own host name"},
		"host name without certificate":         {map[string]string{"AsyncEventApiHostName": apiHost}, "set CertificateArn too"},
		"not an ACM ARN":                        {tls("CertificateArn", "arn:aws:iam::123456789012:server-certificate/x"), "CertificateArn"},
		"upper-case host":                       {tls("AsyncEventApiHostName", "API.example.com"), "AsyncEventApiHostName"},
		"host with a scheme":                    {tls("AsyncEventApiHostName", "https://api.example.com"), "AsyncEventApiHostName"},
		"seven admin networks":                  {tls("AdminCidrs", six+",10.6.0.0/16"), "AdminCidrs"},
		"admin network without a prefix length": {tls("AdminCidrs", "203.0.113.7"), "AdminCidrs"},
		"admin network /33":                     {tls("AdminCidrs", "203.0.113.0/33"), "AdminCidrs"},
		"admin networks with a space":           {tls("AdminCidrs", "10.0.0.0/16, 10.1.0.0/16"), "AdminCidrs"},
		"admin network 256":                     {tls("AdminCidrs", "256.0.0.0/8"), "AdminCidrs"},
		"empty admin network in the list":       {tls("AdminCidrs", "10.0.0.0/16,,10.1.0.0/16"), "AdminCidrs"},
	} {
		_, err := deploy(readTemplate(t), c.params)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused: %v", name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one naming %q", name, err, c.want)
		}
	}
	if !regexp.MustCompile(stack.AdminCidrsPattern).MatchString("") {
		t.Error("AdminCidrs' pattern refuses its default, empty")
	}
}

// The checks above catch a template whose edge is wrong: each mutation
// of the committed template breaks at least one of them.
func TestEdgeChecksCatchMutations(t *testing.T) {
	props := func(tpl map[string]any, id string) map[string]any {
		return resourceOf(tpl, id)["Properties"].(map[string]any)
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		edge   edgeCase
		want   string
	}{
		"admin open to the internet": {func(m map[string]any) { delete(m["Resources"].(map[string]any), "AsyncEventApiAdminDenyRule") },
			withTLS, "api.example.com:443/admin/dlq from " + internet + ": " + asyncTG},
		"metrics refused after the route": {func(m map[string]any) { props(m, "PhotoApiMetricsRule")["Priority"] = 99.0 },
			plain, "anything:8082/metrics from " + internet + ": " + photoTG},
		"allow rule without source-ip": {func(m map[string]any) {
			p := props(m, "AsyncEventApiAdminAllowRule1")
			p["Conditions"] = asList(p["Conditions"])[:2]
		}, withTLS, "api.example.com:443/admin/dlq from " + internet + ": " + asyncTG},
		"allow rule ignoring its second network": {func(m map[string]any) {
			v := asList(props(m, "PhotoApiAdminAllowRule1")["Conditions"])[2].(map[string]any)["SourceIpConfig"].(map[string]any)
			v["Values"] = asList(v["Values"])[:1]
		}, withTLS, "photos.example.com:443/metrics from 198.51.100.7: fixed 403"},
		"third allow rule missing": {func(m map[string]any) { delete(m["Resources"].(map[string]any), "AsyncEventApiAdminAllowRule3") },
			withTLS, "api.example.com:443/admin/dlq from 172.31.0.1: fixed 403"},
		"redirect serving": {func(m map[string]any) {
			props(m, "HttpRedirectListener")["DefaultActions"] = []any{map[string]any{"Type": "forward", "TargetGroupArn": map[string]any{"Ref": "AsyncEventApiTargetGroup"}}}
		}, withTLS, "api.example.com:80/events/e1 from " + internet + ": " + asyncTG},
		"old TLS policy": {func(m map[string]any) { props(m, "HttpsListener")["SslPolicy"] = "ELBSecurityPolicy-2016-08" },
			withTLS, "SslPolicy"},
		"plain listener kept with TLS": {func(m map[string]any) { delete(resourceOf(m, "PhotoApiListener"), "Condition") },
			withTLS, "listeners"},
		"raw port open with TLS": {func(m map[string]any) {
			sg := props(m, "LoadBalancerSecurityGroup")
			sg["SecurityGroupIngress"] = append(asList(sg["SecurityGroupIngress"]), map[string]any{"IpProtocol": "tcp", "FromPort": 8081.0, "ToPort": 8081.0, "CidrIp": "0.0.0.0/0"})
		}, withTLS, "security group opens"},
		"no desync mitigation": {func(m map[string]any) {
			lb := props(m, "LoadBalancer")
			lb["LoadBalancerAttributes"] = asList(lb["LoadBalancerAttributes"])[:1]
		}, withTLS, "desync_mitigation_mode"},
		"service depending on a plain listener": {func(m map[string]any) {
			resourceOf(m, "AsyncEventApiService")["DependsOn"] = []any{"AsyncEventApiListener"}
		},
			withTLS, "DependsOn AsyncEventApiListener, which is not created"},
		"rule on the HTTPS listener without a certificate": {func(m map[string]any) {
			props(m, "PhotoApiRouteRule")["ListenerArn"] = map[string]any{"Ref": "HttpsListener"}
		}, plain, "Ref HttpsListener, which is not created"},
		"two rules at one priority": {func(m map[string]any) { props(m, "PhotoApiRouteRule")["Priority"] = 9.0 },
			withTLS, "priority 9"},
		"too many condition values": {func(m map[string]any) {
			v := asList(props(m, "AsyncEventApiAdminAllowRule1")["Conditions"])[1].(map[string]any)["PathPatternConfig"].(map[string]any)
			v["Values"] = append(asList(v["Values"]), "/metrics/*")
		}, withTLS, "6 condition values"},
		"http URL with TLS": {func(m map[string]any) {
			m["Outputs"].(map[string]any)["PhotoApiURL"] = map[string]any{"Value": "http://photos.example.com"}
		}, withTLS, "output PhotoApiURL"},
	} {
		tpl := readTemplate(t)
		c.mutate(tpl)
		fs := c.edge.failures(tpl)
		if !strings.Contains(strings.Join(fs, "\n"), c.want) {
			t.Errorf("%s: failures %q, want one saying %q", name, fs, c.want)
		}
	}
}
