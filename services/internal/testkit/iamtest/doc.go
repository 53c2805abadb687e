// Package iamtest enforces an IAM policy on aws-sdk-go-v2 clients in tests,
// where the local stand-ins (DynamoDB Local, the local SQS server) enforce
// none: a call the policy does not allow fails with AccessDeniedException,
// as on AWS, and is not sent.
//
// Each call is evaluated with the IAM actions AWS actually authorizes it by
// and the ARNs of the resources it touches (Authorizations): a
// TransactWriteItems is PutItem, UpdateItem, DeleteItem or
// ConditionCheckItem per item, a Query on an index needs the index's ARN,
// an SQS batch is its single-message action, and so on. The policy is an
// identity-based policy document (ParsePolicy), or one of a CloudFormation
// template with its intrinsics resolved (ResolvePolicy):
//
//	a := iamtest.ARNs{Region: "us-east-1", Account: "000000000000"}
//	p, err := iamtest.ResolvePolicy(doc, map[string]string{
//		"AsyncEventTable.Arn": a.Table(table), "AsyncEventTable.StreamArn": a.Stream(table),
//		"ParticipationQueue.Arn": a.Queue(queue),
//	})
//	e := iamtest.New(p, a)
//	cfg = e.Attach(cfg) // clients made from cfg go through e
//	...
//	for _, c := range e.Denied() { t.Errorf("refused: %s", c) }
//
// The enforcer records every check (Checks, Denied); Replay evaluates
// recorded checks under another policy, such as one narrowed with
// Policy.Without, without making the calls again.
//
// Only what Pacer's policies use is supported: Allow and Deny statements of
// Action and Resource, with * and ? wildcards. Anything else in a policy
// (NotAction, Condition, ...) is an error, as is a call of an operation no
// rule covers: nothing is let through unchecked.
package iamtest
