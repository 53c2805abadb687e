package stack

import (
	"maps"
	"slices"
)

// The load balancer's access logs, off by default (ParamAccessLogs):
// every request it answers, with the client's address, the rule's action
// and the target's status, as Elastic Load Balancing writes them every 5
// minutes to the stack's access-log bucket, under AWSLogs/<account>/, and
// expired after accessLogDays. The bucket is encrypted with SSE-S3, the
// only encryption log delivery supports, and kept on delete like the
// events bucket (docs/deploy.md's teardown empties it).
//
// Who delivers depends on the region (AWS's "Enable access logs for your
// Application Load Balancer"): in the regions opened before August 2022
// the region's Elastic Load Balancing account (elbAccounts), in the later
// ones the log delivery service principal. The bucket policy allows the
// service principal everywhere and the region's account where it has one,
// on the stack's account's prefix only. The load balancer validates the
// policy when logging is turned on, so it is created after it: it names
// the policy in a tag (TagAccessLogsPolicy), as a DependsOn cannot name a
// resource whose condition may be false.
const (
	ParamAccessLogs      = "LoadBalancerAccessLogs"
	condAccessLogs       = "HasAccessLogs"
	idAccessLogs         = "AccessLogsBucket"
	idAccessLogsPolicy   = "AccessLogsBucketPolicy"
	condELBAccountRegion = "HasELBLogAccount"
	mapELBAccounts       = "ELBLogAccounts"
	accessLogDays        = 90
	// ELBLogDelivery is the log delivery service principal.
	ELBLogDelivery = "logdelivery.elasticloadbalancing.amazonaws.com"
	// TagAccessLogsPolicy is the load balancer's tag naming the access
	// logs' bucket policy ("none" without access logs).
	TagAccessLogsPolicy = "pacer:access-logs-policy"
)

// elbAccounts are the Elastic Load Balancing accounts that deliver access
// logs in the regions opened before August 2022, by region, as AWS lists
// them (and the China regions', from their own documentation).
var elbAccounts = map[string]string{
	"us-east-1": "127311923021", "us-east-2": "033677994240", "us-west-1": "027434742980", "us-west-2": "797873946194",
	"af-south-1": "098369216593", "ca-central-1": "985666609251",
	"eu-central-1": "054676820928", "eu-west-1": "156460612806", "eu-west-2": "652711504416", "eu-south-1": "635631232127",
	"eu-west-3": "009996457667", "eu-north-1": "897822967062",
	"ap-east-1": "754344448648", "ap-northeast-1": "582318560864", "ap-northeast-2": "600734575887", "ap-northeast-3": "383597477331",
	"ap-southeast-1": "114774131450", "ap-southeast-2": "783225319266", "ap-southeast-3": "589379963580", "ap-south-1": "718504428378",
	"me-south-1": "076674570225", "sa-east-1": "507241528517",
	"us-gov-west-1": "048591011584", "us-gov-east-1": "190560391635",
	"cn-north-1": "638102146993", "cn-northwest-1": "037604701340",
}

func accessLogParameter(p map[string]Parameter) {
	p[ParamAccessLogs] = Parameter{Type: "String", Default: str("false"), AllowedValues: []string{"true", "false"},
		Description: "Access logs of the load balancer, every request it answers, in a bucket of the stack's (output AccessLogsBucket, " +
			"TLS only, kept on delete), expired after 90 days"}
}

// accessLogs adds, with ParamAccessLogs "true", the access-log bucket and
// its policy, and the conditions and mapping they use.
func accessLogs(t *Template) {
	t.Conditions[condAccessLogs] = map[string]any{"Fn::Equals": []any{Ref(ParamAccessLogs), "true"}}
	regions := slices.Sorted(maps.Keys(elbAccounts))
	accounts := map[string]any{}
	var inRegion []any
	for _, r := range regions {
		accounts[r] = map[string]any{"Account": elbAccounts[r]}
		inRegion = append(inRegion, map[string]any{"Fn::Equals": []any{Ref("AWS::Region"), r}})
	}
	t.Mappings[mapELBAccounts] = accounts
	t.Conditions[condELBAccountRegion] = anyOf(inRegion)
	t.add(idAccessLogs, Resource{Type: "AWS::S3::Bucket", Condition: condAccessLogs,
		Properties:     bucket("network", map[string]int{"AWSLogs/": accessLogDays}),
		DeletionPolicy: keepExceptOnCreate, UpdateReplacePolicy: keepOnReplace})
	deliver := func(principal any) map[string]any {
		return map[string]any{"Effect": "Allow", "Principal": principal, "Action": "s3:PutObject",
			"Resource": Sub("${" + idAccessLogs + ".Arn}/AWSLogs/${AWS::AccountId}/*")}
	}
	account := Join("", "arn:", Ref("AWS::Partition"), ":iam::", FindInMap(mapELBAccounts, Ref("AWS::Region"), "Account"), ":root")
	bucketPolicy(t, idAccessLogsPolicy, idAccessLogs, condAccessLogs,
		deliver(map[string]any{"Service": ELBLogDelivery}),
		If(condELBAccountRegion, deliver(map[string]any{"AWS": account}), NoValue))
	t.Outputs[idAccessLogs] = Output{Description: "S3 bucket of the load balancer's access logs", Value: Ref(idAccessLogs), Condition: condAccessLogs}
}

// accessLogAttributes are the load balancer's attributes turning its
// access logs on or off.
func accessLogAttributes() []any {
	return []any{
		map[string]any{"Key": "access_logs.s3.enabled", "Value": If(condAccessLogs, "true", "false")},
		If(condAccessLogs, map[string]any{"Key": "access_logs.s3.bucket", "Value": Ref(idAccessLogs)}, NoValue),
	}
}

// accessLogsTag is the load balancer's TagAccessLogsPolicy.
func accessLogsTag() any {
	return map[string]any{"Key": TagAccessLogsPolicy, "Value": If(condAccessLogs, Ref(idAccessLogsPolicy), "none")}
}

// anyOf is a condition true when one of conds is: Fn::Or takes 2 to 10
// conditions, so longer lists are split into nested ones.
func anyOf(conds []any) any {
	const most = 10
	if len(conds) == 1 {
		return conds[0]
	}
	if len(conds) <= most {
		return map[string]any{"Fn::Or": conds}
	}
	var parts []any
	for c := range slices.Chunk(conds, most) {
		parts = append(parts, anyOf(c))
	}
	return anyOf(parts)
}
