package iamtest

import (
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Check is one authorization AWS makes for a call: an IAM action on a
// resource ARN, and whether the policy allowed it.
type Check struct {
	Operation string // the SDK's service id and operation: "DynamoDB.TransactWriteItems"
	Action    string // the IAM action: "dynamodb:PutItem"
	Resource  string // the resource ARN, or "*" for an action on no resource
	Allowed   bool
	// Error says why a call could not be evaluated (no rule for its
	// operation, a resource it names that cannot be told); Action and
	// Resource are empty then, and Allowed false: the enforcer refuses it.
	Error string
}

// String renders the check for a test failure: "DynamoDB.Query:
// dynamodb:Query on arn:… denied", or the operation and its Error.
func (c Check) String() string {
	if c.Error != "" {
		return c.Operation + ": " + c.Error
	}
	verdict := "denied"
	if c.Allowed {
		verdict = "allowed"
	}
	return fmt.Sprintf("%s: %s on %s %s", c.Operation, c.Action, c.Resource, verdict)
}

// ErrNoRule is wrapped by the error for an operation no rule covers:
// "iamtest: no authorization rule for SQS ListQueues".
var ErrNoRule = errors.New("iamtest: no authorization rule")

// Authorizations returns the (IAM action, resource ARN) pairs AWS
// authorizes a call by, with Allowed unset. service is the SDK's service id
// (awsmiddleware.GetServiceID: "DynamoDB", "DynamoDB Streams", "SQS",
// "EventBridge"), operation its operation name and params the SDK input
// (*dynamodb.GetItemInput, ...); a names the resources.
//
//   - A DynamoDB item or table call is its own action on the table; a Query
//     or Scan with IndexName on the index's ARN instead (the table's ARN
//     alone does not grant an index).
//   - TransactWriteItems is PutItem, UpdateItem, DeleteItem or
//     ConditionCheckItem per item, TransactGetItems GetItem per item, each
//     on the item's table; BatchGetItem and BatchWriteItem are their own
//     actions on each table they name.
//   - DescribeStream and GetShardIterator are their own actions on the
//     stream (canonicalised to ARNs.Stream); ListStreams, ListTables,
//     DescribeLimits and ListQueues on "*" (AWS's Service Authorization
//     Reference gives them no resource type). GetRecords names only a shard
//     iterator, and CancelMessageMoveTask only a task handle: only an
//     Enforcer, which saw them returned, can tell their resource.
//   - An SQS call is its own action on its queue (QueueUrl, or QueueName
//     for GetQueueUrl and CreateQueue); SendMessageBatch, DeleteMessageBatch
//     and ChangeMessageVisibilityBatch are their single-message actions.
//   - StartMessageMoveTask is StartMessageMoveTask, ReceiveMessage,
//     DeleteMessage and GetQueueAttributes on the DLQ (SourceArn) and
//     SendMessage on DestinationArn; without one, on the DLQ's source
//     queue, which only an Enforcer's RedriveTo tells.
//   - EventBridge PutEvents is events:PutEvents on each entry's bus.
//   - S3 GetObject is s3:GetObject on the object (ARNs.Object), and so is
//     a presigned GET: presigning runs the operation's middleware without
//     sending it, and the link is authorized by the signer's credentials.
//
// Any other operation is an error wrapping ErrNoRule; a call whose
// resources cannot be told (no TableName, an ARN of the wrong service) is
// an error too.
func Authorizations(service, operation string, params any, a ARNs) ([]Check, error) {
	return authorizer{arns: a}.checks(service, operation, params)
}

// grant is one action on one resource.
type grant struct{ action, resource string }

// authorizer holds what the rules need beyond the call: the ARNs, and an
// Enforcer's knowledge of redrive sources and of the opaque tokens (shard
// iterators, move task handles) it saw returned.
type authorizer struct {
	arns      ARNs
	redriveTo map[string]string
	token     func(token string) (resource string, ok bool)
}

// rule returns the grants a call needs.
type rule func(z authorizer, params any) ([]grant, error)

// rules holds a rule per "service id.operation".
var rules = func() map[string]rule {
	m := map[string]rule{}
	for _, r := range []map[string]rule{dynamoRules(), streamRules(), sqsRules()} {
		for k, v := range r {
			m[k] = v
		}
	}
	m["EventBridge.PutEvents"] = putEvents
	m["S3.GetObject"] = getObject
	return m
}()

// checks applies the call's rule and returns one Check per distinct grant.
func (z authorizer) checks(service, operation string, params any) ([]Check, error) {
	op := service + "." + operation
	r, ok := rules[op]
	if !ok {
		return nil, fmt.Errorf("%w for %s %s", ErrNoRule, service, operation)
	}
	grants, err := r(z, params)
	if err != nil {
		return nil, fmt.Errorf("iamtest: %s %s: %w", service, operation, err)
	}
	seen := map[grant]bool{}
	var out []Check
	for _, g := range grants {
		if !seen[g] {
			seen[g] = true
			out = append(out, Check{Operation: op, Action: g.action, Resource: g.resource})
		}
	}
	return out, nil
}

// field reads the string or *string field name of the struct params points
// to; "" when it has none or it is nil.
func field(params any, name string) string {
	v := reflect.ValueOf(params)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	f := v.FieldByName(name)
	switch {
	case !f.IsValid():
		return ""
	case f.Kind() == reflect.String:
		return f.String()
	case f.Kind() == reflect.Pointer && !f.IsNil() && f.Elem().Kind() == reflect.String:
		return f.Elem().String()
	}
	return ""
}

// required is field, or an error when the field is empty.
func required(params any, name string) (string, error) {
	if s := field(params, name); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("the input (%T) names no %s", params, name)
}

// onNothing is a rule for an action on no resource: "*".
func onNothing(action string) rule {
	return func(authorizer, any) ([]grant, error) { return []grant{{action, "*"}}, nil }
}

// onTable is a rule for action on the table of TableName, or the index
// of IndexName when set.
func onTable(action string) rule {
	return func(z authorizer, params any) ([]grant, error) {
		name, err := required(params, "TableName")
		if err != nil {
			return nil, err
		}
		table, err := tableOf(name)
		if err != nil {
			return nil, err
		}
		if index := field(params, "IndexName"); index != "" {
			return []grant{{action, z.arns.Index(table, index)}}, nil
		}
		return []grant{{action, z.arns.Table(table)}}, nil
	}
}

// dynamoRules are DynamoDB's rules.
func dynamoRules() map[string]rule {
	m := map[string]rule{
		"DynamoDB.TransactWriteItems": transactWrite,
		"DynamoDB.TransactGetItems":   transactGet,
		"DynamoDB.BatchGetItem":       batchGet,
		"DynamoDB.BatchWriteItem":     batchWrite,
		"DynamoDB.ListTables":         onNothing("dynamodb:ListTables"),
		"DynamoDB.DescribeLimits":     onNothing("dynamodb:DescribeLimits"),
	}
	for _, op := range []string{"GetItem", "PutItem", "UpdateItem", "DeleteItem", "DescribeTable", "DescribeTimeToLive",
		"UpdateTimeToLive", "CreateTable", "DeleteTable", "UpdateTable", "Scan", "Query"} {
		m["DynamoDB."+op] = onTable("dynamodb:" + op)
	}
	return m
}

// transactWrite is TransactWriteItems: an action per item, on its table.
func transactWrite(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*dynamodb.TransactWriteItemsInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	var out []grant
	for i, it := range in.TransactItems {
		var action string
		var table *string
		switch {
		case it.Put != nil:
			action, table = "dynamodb:PutItem", it.Put.TableName
		case it.Update != nil:
			action, table = "dynamodb:UpdateItem", it.Update.TableName
		case it.Delete != nil:
			action, table = "dynamodb:DeleteItem", it.Delete.TableName
		case it.ConditionCheck != nil:
			action, table = "dynamodb:ConditionCheckItem", it.ConditionCheck.TableName
		default:
			return nil, fmt.Errorf("item %d is no Put, Update, Delete or ConditionCheck", i)
		}
		arn, err := z.arns.table(deref(table))
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, grant{action, arn})
	}
	return out, nil
}

// transactGet is TransactGetItems: GetItem per item, on its table.
func transactGet(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*dynamodb.TransactGetItemsInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	var out []grant
	for i, it := range in.TransactItems {
		if it.Get == nil {
			return nil, fmt.Errorf("item %d has no Get", i)
		}
		arn, err := z.arns.table(deref(it.Get.TableName))
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, grant{"dynamodb:GetItem", arn})
	}
	return out, nil
}

// batchGet is BatchGetItem on each table of RequestItems.
func batchGet(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*dynamodb.BatchGetItemInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	return onEach(z, "dynamodb:BatchGetItem", keys(in.RequestItems))
}

// batchWrite is BatchWriteItem on each table of RequestItems.
func batchWrite(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*dynamodb.BatchWriteItemInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	return onEach(z, "dynamodb:BatchWriteItem", keys(in.RequestItems))
}

// onEach is action on each table of names.
func onEach(z authorizer, action string, names []string) ([]grant, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("RequestItems names no table")
	}
	out := make([]grant, 0, len(names))
	for _, n := range names {
		arn, err := z.arns.table(n)
		if err != nil {
			return nil, err
		}
		out = append(out, grant{action, arn})
	}
	return out, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// streamRules are DynamoDB Streams' rules.
func streamRules() map[string]rule {
	onStream := func(action string) rule {
		return func(z authorizer, params any) ([]grant, error) {
			s, err := required(params, "StreamArn")
			if err != nil {
				return nil, err
			}
			arn, err := z.arns.stream(s)
			return []grant{{action, arn}}, err
		}
	}
	return map[string]rule{
		"DynamoDB Streams.DescribeStream":   onStream("dynamodb:DescribeStream"),
		"DynamoDB Streams.GetShardIterator": onStream("dynamodb:GetShardIterator"),
		"DynamoDB Streams.GetRecords":       onToken("dynamodb:GetRecords", "ShardIterator"),
		"DynamoDB Streams.ListStreams":      onNothing("dynamodb:ListStreams"),
	}
}

// onToken is a rule for action on the resource an opaque token (a shard
// iterator, a move task handle) in field name belongs to, as the Enforcer
// remembered it from the call that returned it.
func onToken(action, name string) rule {
	return func(z authorizer, params any) ([]grant, error) {
		tok, err := required(params, name)
		if err != nil {
			return nil, err
		}
		if z.token != nil {
			if res, ok := z.token(tok); ok {
				return []grant{{action, res}}, nil
			}
		}
		return nil, fmt.Errorf("the %s was not returned by an earlier call through this Enforcer, so its resource is unknown", name)
	}
}

// sqsRules are SQS's rules.
func sqsRules() map[string]rule {
	m := map[string]rule{
		"SQS.GetQueueUrl":                  onQueueName("sqs:GetQueueUrl"),
		"SQS.CreateQueue":                  onQueueName("sqs:CreateQueue"),
		"SQS.SendMessageBatch":             onQueueURL("sqs:SendMessage"),
		"SQS.DeleteMessageBatch":           onQueueURL("sqs:DeleteMessage"),
		"SQS.ChangeMessageVisibilityBatch": onQueueURL("sqs:ChangeMessageVisibility"),
		"SQS.StartMessageMoveTask":         startMove,
		"SQS.ListMessageMoveTasks":         onSourceARN("sqs:ListMessageMoveTasks"),
		"SQS.CancelMessageMoveTask":        onToken("sqs:CancelMessageMoveTask", "TaskHandle"),
		"SQS.ListQueues":                   onNothing("sqs:ListQueues"),
	}
	for _, op := range []string{"SendMessage", "ReceiveMessage", "DeleteMessage", "ChangeMessageVisibility", "GetQueueAttributes",
		"SetQueueAttributes", "PurgeQueue", "DeleteQueue", "ListDeadLetterSourceQueues", "ListQueueTags", "TagQueue", "UntagQueue"} {
		m["SQS."+op] = onQueueURL("sqs:" + op)
	}
	return m
}

// onQueueURL is a rule for action on the queue of QueueUrl.
func onQueueURL(action string) rule {
	return func(z authorizer, params any) ([]grant, error) {
		u, err := required(params, "QueueUrl")
		if err != nil {
			return nil, err
		}
		arn, err := z.arns.queueURL(u)
		return []grant{{action, arn}}, err
	}
}

// onQueueName is a rule for action on the queue of QueueName.
func onQueueName(action string) rule {
	return func(z authorizer, params any) ([]grant, error) {
		n, err := required(params, "QueueName")
		return []grant{{action, z.arns.Queue(n)}}, err
	}
}

// onSourceARN is a rule for action on the queue of SourceArn.
func onSourceARN(action string) rule {
	return func(z authorizer, params any) ([]grant, error) {
		s, err := required(params, "SourceArn")
		if err != nil {
			return nil, err
		}
		arn, err := z.arns.queueARN(s)
		return []grant{{action, arn}}, err
	}
}

// startMove is StartMessageMoveTask: the move and what it does on the DLQ,
// and SendMessage on where the messages go.
func startMove(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*sqs.StartMessageMoveTaskInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	dlq, err := z.arns.queueARN(deref(in.SourceArn))
	if err != nil {
		return nil, err
	}
	var dest string
	if d := deref(in.DestinationArn); d != "" {
		if dest, err = z.arns.queueARN(d); err != nil {
			return nil, err
		}
	} else if src, ok := z.redriveTo[dlq]; ok {
		if dest, err = z.arns.queueARN(src); err != nil {
			return nil, fmt.Errorf("RedriveTo[%s]: %w", dlq, err)
		}
	} else {
		return nil, fmt.Errorf("no DestinationArn, and the source queue of %s, where the messages go back to, is unknown (set Enforcer.RedriveTo)", dlq)
	}
	return []grant{
		{"sqs:StartMessageMoveTask", dlq}, {"sqs:ReceiveMessage", dlq}, {"sqs:DeleteMessage", dlq},
		{"sqs:GetQueueAttributes", dlq}, {"sqs:SendMessage", dest},
	}, nil
}

// putEvents is EventBridge PutEvents on each entry's bus.
func putEvents(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*eventbridge.PutEventsInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	if len(in.Entries) == 0 {
		return nil, fmt.Errorf("no entries")
	}
	var out []grant
	for i, e := range in.Entries {
		arn, err := z.arns.bus(deref(e.EventBusName))
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, grant{"events:PutEvents", arn})
	}
	return out, nil
}
