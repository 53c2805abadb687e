package stack_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// The hardening a reviewer expects, in the committed template deployed
// on paper (cfneval_test.go) for several sets of parameters: HSTS on
// every HTTPS answer and on no plain one; every bucket of the stack's
// refusing plain HTTP; the tables protected from deletion unless the
// stage opts out; the load balancer's access logs when asked for,
// delivered as AWS's rule for the region says; read-only root file
// systems; task roles only this account's ECS tasks may assume; and
// kms:Decrypt with a customer managed key only when one is named, on it
// alone, through its service alone.

const (
	account    = "123456789012"
	secretsKey = "arn:aws:kms:eu-west-1:123456789012:key/0a1b2c3d-4e5f-4a1b-8c2d-0123456789ab"
	photosKey  = "arn:aws:kms:eu-west-1:123456789012:key/mrk-0123456789abcdef0123456789abcdef"
)

// hardened is every hardening option on, with a certificate, in
// eu-west-1 (a region with an Elastic Load Balancing log account).
var hardened = map[string]string{
	"CertificateArn": certARN, "AsyncEventApiHostName": apiHost, "PhotoApiHostName": photoHost,
	stack.ParamAccessLogs: "true", stack.ParamSecretsKey: secretsKey, stack.ParamPhotoBucketKey: photosKey,
	stack.ParamDeletionProtection: "true",
	"EventsUserKeySecretArn":      "arn:aws:secretsmanager:eu-west-1:123456789012:secret:pacer/test/user-key-AbCdEf",
}

// withValues is base with kv (name, value, ...) set.
func withValues(base map[string]string, kv ...string) map[string]string {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]string{}
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// hardeningCases are the parameter sets checked, by name.
var hardeningCases = map[string]map[string]string{
	"defaults":                           nil,
	"everything on":                      hardened,
	"tables unprotected":                 withValues(hardened, stack.ParamDeletionProtection, "false"),
	"secrets key, no optional secret":    withValues(hardened, "EventsUserKeySecretArn", ""),
	"access logs in us-east-1":           withValues(hardened, "AWS::Region", "us-east-1"),
	"access logs in a region after 2022": withValues(hardened, "AWS::Region", "eu-central-2"),
}

// elbLogAccounts are, for a few regions, the account AWS's access-log
// documentation names (none: the region delivers with the service
// principal alone).
var elbLogAccounts = map[string]string{"eu-west-1": "156460612806", "us-east-1": "127311923021", "eu-central-2": ""}

func TestHardening(t *testing.T) {
	tpl := readTemplate(t)
	for name, values := range hardeningCases {
		for _, f := range hardeningFailures(tpl, values) {
			t.Errorf("%s: %s", name, f)
		}
	}
}

// hardeningFailures deploys tpl for values and says what hardening it
// lacks.
func hardeningFailures(tpl map[string]any, values map[string]string) []string {
	d, err := deploy(tpl, values)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	region := fmt.Sprint(d.pseudo["AWS::Region"])

	// HSTS on HTTPS answers, a year at least; none on plain HTTP.
	for id, l := range d.listeners() {
		hsts := ""
		for _, a := range asList(l.Properties["ListenerAttributes"]) {
			if a := asMap(a); a["Key"] == "routing.http.response.strict_transport_security.header_value" {
				hsts = fmt.Sprint(a["Value"])
			}
		}
		switch https := l.Properties["Protocol"] == "HTTPS"; {
		case https && hstsMaxAge(hsts) < 365*24*3600:
			fail("%s: HTTPS answers carry HSTS %q, want max-age of a year at least", id, hsts)
		case !https && hsts != "":
			fail("%s: plain HTTP answers carry HSTS %q, which a browser ignores there", id, hsts)
		}
	}

	// Every bucket of the stack's refuses plain HTTP.
	for _, id := range d.ofType("AWS::S3::Bucket") {
		if !d.tlsOnly(id) {
			fail("%s: no bucket policy denies its requests over plain HTTP (aws:SecureTransport false)", id)
		}
	}

	// Deletion protection on the tables kept on delete when the stage asks
	// for it (a production stage, once created); none on a table that goes
	// with the stack (its delete would fail).
	protect := values[stack.ParamDeletionProtection] == "true"
	for _, id := range d.ofType("AWS::DynamoDB::Table") {
		kept := resourceOf(d.tpl, id)["DeletionPolicy"] != nil
		if got := d.Resources[id].Properties["DeletionProtectionEnabled"]; kept && got != protect || !kept && got != nil {
			fail("%s: DeletionProtectionEnabled %v, want %v", id, got, map[bool]any{true: protect, false: nil}[kept])
		}
	}

	// Access logs, when asked for.
	out = append(out, d.accessLogFailures(values[stack.ParamAccessLogs] == "true", region)...)

	// Read-only root file systems; task roles for this account's tasks.
	for _, id := range d.ofType("AWS::ECS::TaskDefinition") {
		td := d.Resources[id].Properties
		for _, c := range asList(td["ContainerDefinitions"]) {
			if c := asMap(c); c["ReadonlyRootFilesystem"] != true {
				fail("%s: container %v has a writable root file system", id, c["Name"])
			}
		}
		role := roleOf(td["TaskRoleArn"])
		wantTrust := fmt.Sprintf("sts:AssumeRole by ecs-tasks.amazonaws.com if aws:SourceAccount=%s aws:SourceArn~arn:aws:ecs:%s:%s:*", account, region, account)
		if got := trust(d.Resources[role].Properties["AssumeRolePolicyDocument"]); got != wantTrust {
			fail("%s: trusts %q, want %q", role, got, wantTrust)
		}
	}

	out = append(out, d.keyFailures(values, region)...)
	return out
}

// hstsMaxAge is the max-age of a Strict-Transport-Security value, or -1.
func hstsMaxAge(v string) int {
	m := regexp.MustCompile(`(?i)(?:^|;)\s*max-age=([0-9]+)\s*(?:;|$)`).FindStringSubmatch(v)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func (d *deployed) ofType(typ string) []string {
	var out []string
	for id, r := range d.Resources {
		if r.Type == typ {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// tlsOnly reports whether a policy of the bucket id denies every
// principal every action on it and its objects over plain HTTP.
func (d *deployed) tlsOnly(id string) bool {
	for _, pid := range d.ofType("AWS::S3::BucketPolicy") {
		p := d.Resources[pid].Properties
		if p["Bucket"] != "ref:"+id {
			continue
		}
		for _, st := range asList(asMap(p["PolicyDocument"])["Statement"]) {
			st := asMap(st)
			res := fmt.Sprint(items(st["Resource"]))
			if st["Effect"] == "Deny" && st["Principal"] == "*" && fmt.Sprint(items(st["Action"])) == "[s3:*]" &&
				res == fmt.Sprintf("[att:%s.Arn att:%s.Arn/*]", id, id) &&
				fmt.Sprint(st["Condition"]) == "map[Bool:map[aws:SecureTransport:false]]" {
				return true
			}
		}
	}
	return false
}

// accessLogFailures checks the load balancer's access logs: on, to the
// stack's bucket (SSE-S3, the one encryption log delivery takes), which
// lets the delivery that AWS documents for region write under the stack's
// account, and created before the load balancer; or off, with no bucket.
func (d *deployed) accessLogFailures(on bool, region string) []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	attrs := map[string]any{}
	for _, a := range asList(d.Resources["LoadBalancer"].Properties["LoadBalancerAttributes"]) {
		attrs[fmt.Sprint(asMap(a)["Key"])] = asMap(a)["Value"]
	}
	buckets := d.ofType("AWS::S3::Bucket")
	if !on {
		if attrs["access_logs.s3.enabled"] != "false" || slices.Contains(buckets, "AccessLogsBucket") {
			fail("access logs off: attribute %v, buckets %v", attrs["access_logs.s3.enabled"], buckets)
		}
		return out
	}
	if attrs["access_logs.s3.enabled"] != "true" || attrs["access_logs.s3.bucket"] != "ref:AccessLogsBucket" {
		fail("access logs on: the load balancer's attributes are %v", attrs)
	}
	enc := fmt.Sprint(d.Resources["AccessLogsBucket"].Properties["BucketEncryption"])
	if !strings.Contains(enc, "SSEAlgorithm:AES256") {
		fail("AccessLogsBucket: encryption %s, want SSE-S3 (AES256), the only one log delivery supports", enc)
	}
	writers := map[string]bool{}
	for _, pid := range d.ofType("AWS::S3::BucketPolicy") {
		p := d.Resources[pid].Properties
		if p["Bucket"] != "ref:AccessLogsBucket" {
			continue
		}
		for _, st := range asList(asMap(p["PolicyDocument"])["Statement"]) {
			st := asMap(st)
			if st["Effect"] == "Allow" && fmt.Sprint(items(st["Action"])) == "[s3:PutObject]" &&
				fmt.Sprint(items(st["Resource"])) == "[att:AccessLogsBucket.Arn/AWSLogs/"+account+"/*]" && st["Condition"] == nil {
				for _, v := range asMap(st["Principal"]) {
					writers[fmt.Sprint(v)] = true
				}
			}
		}
	}
	want := []string{stack.ELBLogDelivery}
	if acct := elbLogAccounts[region]; acct != "" {
		want = append(want, "arn:aws:iam::"+acct+":root")
	}
	if got := slices.Sorted(maps.Keys(writers)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		fail("%s: the access-log bucket lets %v write the logs, want %v", region, got, want)
	}
	if !before(d.dependencies(), "LoadBalancer")["AccessLogsBucketPolicy"] {
		fail("LoadBalancer may be created before AccessLogsBucketPolicy: turning its logs on fails until the policy exists")
	}
	if d.Outputs["AccessLogsBucket"] != "ref:AccessLogsBucket" {
		fail("output AccessLogsBucket = %v", d.Outputs["AccessLogsBucket"])
	}
	return out
}

// keyFailures checks the kms:Decrypt grants: with SecretsKmsKeyArn, one
// per execution role that reads secrets; with PhotoBucketKmsKeyArn, one
// for the task role that reads the photo bucket; each on its key alone,
// through its services alone; and no other KMS grant.
func (d *deployed) keyFailures(values map[string]string, region string) []string {
	var out []string
	fail := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	via := func(services ...string) string {
		var s []string
		for _, sv := range services {
			s = append(s, sv+"."+region+".amazonaws.com")
		}
		return fmt.Sprint(s)
	}
	want := map[string]string{} // role → the one KMS grant it must have
	for _, id := range d.ofType("AWS::ECS::TaskDefinition") {
		td := d.Resources[id].Properties
		c := asMap(first(td["ContainerDefinitions"]))
		if k := values[stack.ParamSecretsKey]; k != "" && len(asList(c["Secrets"])) > 0 {
			want[roleOf(td["ExecutionRoleArn"])] = "kms:Decrypt on " + k + " via " + via("secretsmanager", "ssm")
		}
		task := roleOf(td["TaskRoleArn"])
		if k := values[stack.ParamPhotoBucketKey]; k != "" && strings.Contains(fmt.Sprint(d.Resources[task].Properties["Policies"]), "s3:GetObject") {
			want[task] = "kms:Decrypt on " + k + " via " + via("s3")
		}
	}
	got := map[string][]string{}
	for id, r := range d.Resources {
		var role string
		var docs []any
		switch r.Type {
		case "AWS::IAM::Role":
			role = id
			for _, p := range asList(r.Properties["Policies"]) {
				docs = append(docs, asMap(p)["PolicyDocument"])
			}
		case "AWS::IAM::RolePolicy", "AWS::IAM::Policy":
			role = strings.TrimPrefix(fmt.Sprint(r.Properties["RoleName"]), "ref:")
			docs = append(docs, r.Properties["PolicyDocument"])
		}
		for _, doc := range docs {
			for _, st := range asList(asMap(doc)["Statement"]) {
				st := asMap(st)
				if !strings.Contains(fmt.Sprint(st["Action"]), "kms:") {
					continue
				}
				grant := fmt.Sprintf("%s on %s", strings.Join(strs(items(st["Action"])), ","), strings.Join(strs(items(st["Resource"])), ","))
				if v := asMap(asMap(st["Condition"])["StringEquals"])["kms:ViaService"]; v != nil {
					grant += " via " + fmt.Sprint(strs(items(v)))
				}
				got[role] = append(got[role], grant)
			}
		}
	}
	for _, role := range slices.Sorted(maps.Keys(got)) {
		if w, ok := want[role]; !ok || !slices.Equal(got[role], []string{w}) {
			fail("%s is granted %q, want %q", role, got[role], w)
		}
	}
	for _, role := range slices.Sorted(maps.Keys(want)) {
		if got[role] == nil {
			fail("%s is granted no %s", role, want[role])
		}
	}
	return out
}

// roleOf is the role id of a resolved role ARN ("att:XRole.Arn").
func roleOf(arn any) string {
	return strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(arn), "att:"), ".Arn")
}

// trust describes a trust policy's statements: "<action> by <service> if
// <key>=<value> <key>~<pattern>", one per statement, ";"-separated.
func trust(doc any) string {
	var sts []string
	for _, st := range asList(asMap(doc)["Statement"]) {
		st := asMap(st)
		s := fmt.Sprintf("%v by %v", st["Action"], asMap(st["Principal"])["Service"])
		if st["Effect"] != "Allow" {
			s = fmt.Sprint(st["Effect"], " ", s)
		}
		var conds []string
		for op, kv := range asMap(st["Condition"]) {
			sep := map[string]string{"StringEquals": "=", "ArnLike": "~"}[op]
			if sep == "" {
				sep = " " + op + " "
			}
			for k, v := range asMap(kv) {
				conds = append(conds, k+sep+fmt.Sprint(v))
			}
		}
		if len(conds) > 0 {
			slices.Sort(conds)
			s += " if " + strings.Join(conds, " ")
		}
		sts = append(sts, s)
	}
	return strings.Join(sts, "; ")
}

// items is a policy element's values: a list, or the one value it holds.
func items(v any) []any {
	if l, ok := v.([]any); ok || v == nil {
		return l
	}
	return []any{v}
}

func strs(l []any) []string {
	out := make([]string, len(l))
	for i, v := range l {
		out[i] = fmt.Sprint(v)
	}
	return out
}

// The checks above catch a template that lacks any of the hardening:
// each mutation of the committed template breaks at least one of them.
func TestHardeningChecksCatchMutations(t *testing.T) {
	props := func(tpl map[string]any, id string) map[string]any { return asMap(resourceOf(tpl, id)["Properties"]) }
	statements := func(tpl map[string]any, id string) []any {
		return asList(asMap(props(tpl, id)["PolicyDocument"])["Statement"])
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		values map[string]string
		want   string
	}{
		"no HSTS": {func(m map[string]any) { delete(props(m, "HttpsListener"), "ListenerAttributes") }, hardened,
			`HttpsListener: HTTPS answers carry HSTS ""`},
		"HSTS for a day": {func(m map[string]any) {
			asMap(asList(props(m, "HttpsListener")["ListenerAttributes"])[0])["Value"] = "max-age=86400; includeSubDomains"
		}, hardened, "HttpsListener: HTTPS answers carry HSTS \"max-age=86400"},
		"HSTS on the redirect": {func(m map[string]any) {
			props(m, "HttpRedirectListener")["ListenerAttributes"] = props(m, "HttpsListener")["ListenerAttributes"]
		}, hardened, "HttpRedirectListener: plain HTTP answers carry HSTS"},
		"events bucket open to HTTP": {func(m map[string]any) { delete(m["Resources"].(map[string]any), "EventsBucketPolicy") }, nil,
			"EventsBucket: no bucket policy denies"},
		"TLS deny on the objects only": {func(m map[string]any) {
			st := asMap(statements(m, "AccessLogsBucketPolicy")[0])
			st["Resource"] = asList(st["Resource"])[1:]
		}, hardened, "AccessLogsBucket: no bucket policy denies"},
		"TLS deny of TLS": {func(m map[string]any) {
			asMap(asMap(asMap(statements(m, "EventsBucketPolicy")[0])["Condition"])["Bool"])["aws:SecureTransport"] = "true"
		}, nil, "EventsBucket: no bucket policy denies"},
		"a table unprotected": {func(m map[string]any) { delete(props(m, stack.IDPhotoTable), "DeletionProtectionEnabled") }, hardened,
			"PhotoTable: DeletionProtectionEnabled <nil>, want true"},
		"protection ignoring the parameter": {func(m map[string]any) { props(m, stack.IDAsyncTable)["DeletionProtectionEnabled"] = true },
			nil, "AsyncEventTable: DeletionProtectionEnabled true, want false"},
		"a table that goes with the stack protected": {func(m map[string]any) {
			props(m, stack.IDReplicasTable)["DeletionProtectionEnabled"] = true
		}, nil, "ReplicasTable: DeletionProtectionEnabled true, want <nil>"},
		"a writable root": {func(m map[string]any) {
			asMap(asList(props(m, "WorkerTaskDefinition")["ContainerDefinitions"])[0])["ReadonlyRootFilesystem"] = false
		}, nil, "WorkerTaskDefinition: container asyncevent-worker has a writable root file system"},
		"a task role any account's task may assume": {func(m map[string]any) {
			delete(asMap(asList(asMap(props(m, "PhotoApiTaskRole")["AssumeRolePolicyDocument"])["Statement"])[0]), "Condition")
		}, nil, `PhotoApiTaskRole: trusts "sts:AssumeRole by ecs-tasks.amazonaws.com"`},
		"a task role any region's task may assume": {func(m map[string]any) {
			st := asMap(asList(asMap(props(m, "WorkerTaskRole")["AssumeRolePolicyDocument"])["Statement"])[0])
			asMap(asMap(st["Condition"])["ArnLike"])["aws:SourceArn"] = map[string]any{"Fn::Sub": "arn:${AWS::Partition}:ecs:*:${AWS::AccountId}:*"}
		}, nil, "WorkerTaskRole: trusts"},
		"access logs never turned on": {func(m map[string]any) {
			attrs := asList(props(m, "LoadBalancer")["LoadBalancerAttributes"])
			props(m, "LoadBalancer")["LoadBalancerAttributes"] = attrs[:len(attrs)-2]
		}, hardened, "access logs on: the load balancer's attributes"},
		"no ELB account in an old region": {func(m map[string]any) {
			p := asMap(props(m, "AccessLogsBucketPolicy")["PolicyDocument"])
			p["Statement"] = asList(p["Statement"])[:2]
		}, hardened, "eu-west-1: the access-log bucket lets [logdelivery.elasticloadbalancing.amazonaws.com] write the logs"},
		"the wrong region's account": {func(m map[string]any) {
			accts := asMap(asMap(m["Mappings"])["ELBLogAccounts"])
			accts["eu-west-1"] = accts["eu-west-2"]
		}, hardened, "eu-west-1: the access-log bucket lets"},
		"logs written to any account's prefix": {func(m map[string]any) {
			asMap(statements(m, "AccessLogsBucketPolicy")[1])["Resource"] = map[string]any{"Fn::Sub": "${AccessLogsBucket.Arn}/*"}
		}, withValues(hardened, "AWS::Region", "eu-central-2"), "eu-central-2: the access-log bucket lets [] write"},
		"load balancer before its log policy": {func(m map[string]any) {
			tags := asList(props(m, "LoadBalancer")["Tags"])
			props(m, "LoadBalancer")["Tags"] = tags[:len(tags)-1]
		}, hardened, "LoadBalancer may be created before AccessLogsBucketPolicy"},
		"secrets key on any key": {func(m map[string]any) {
			pol := asMap(asList(asMap(asList(props(m, "AsyncEventApiExecutionRole")["Policies"])[1])["Fn::If"])[1])
			asMap(asList(asMap(pol["PolicyDocument"])["Statement"])[0])["Resource"] = "*"
		}, hardened, "AsyncEventApiExecutionRole is granted [\"kms:Decrypt on * via"},
		"photo key through any service": {func(m map[string]any) {
			delete(asMap(statements(m, "PhotoApiPhotoBucketKeyPolicy")[0]), "Condition")
		}, hardened, "PhotoApiTaskRole is granted [\"kms:Decrypt on " + photosKey + "\"]"},
		"photo key granted without the parameter": {func(m map[string]any) { delete(resourceOf(m, "PhotoApiPhotoBucketKeyPolicy"), "Condition") },
			withValues(hardened, stack.ParamPhotoBucketKey, ""), `PhotoApiTaskRole is granted ["kms:Decrypt on  via`},
		"no secrets key for a role": {func(m map[string]any) {
			r := props(m, "PhotoApiExecutionRole")
			r["Policies"] = asList(r["Policies"])[:1]
		}, hardened, "PhotoApiExecutionRole is granted no kms:Decrypt"},
	} {
		tpl := readTemplate(t)
		c.mutate(tpl)
		fs := hardeningFailures(tpl, c.values)
		if !slices.ContainsFunc(fs, func(f string) bool { return strings.Contains(f, c.want) }) {
			t.Errorf("%s: failures %q, want one saying %q", name, fs, c.want)
		}
	}
}
