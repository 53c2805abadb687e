package main

import "github.com/pacerhq/pacer/deploy/stack"

// Access is each binary's IAM policy: the IAM actions AWS authorizes its
// calls by (a transaction item by item, an SQS batch as its single-message
// action, a redrive's actions on both queues), each on the resources it
// calls it on, and nothing else. access_test.go runs every binary against
// the stand-ins under its generated policy, enforced as AWS would
// (services/internal/testkit/iamtest, whose Authorizations is the table of
// what AWS checks for each call), and fails when a call is refused, a
// call is not granted here (on that resource), a grant here is never
// called, or a policy without one of its actions still allows every call;
// every action is checked against AWS's own list (deploy/stack's
// TestEveryPolicyActionIsAnIAMAction, in make verify).
//
// Not granted: what only the binaries' setup calls (PACER_ASYNCEVENT_SETUP,
// PACER_PHOTO_SETUP): CreateTable, DescribeTimeToLive, UpdateTimeToLive;
// CreateQueue, SetQueueAttributes. The stack creates the tables and queues,
// and the containers run with both settings false. photo-api then checks
// its table on start (DescribeTable, ddb.Table.Check).
var Access = map[string][]stack.Grant{
	AsyncAPI: {
		// Query: the indexes, among them the pending index (GSI3) for the
		// admin sweep, list and stats, and the open events' partition;
		// BatchGetItem: the requests behind the narrow event index (GSI2).
		// PutItem, DeleteItem, UpdateItem and ConditionCheckItem: the items
		// of its transactions (a participation's request and lock, the
		// operator's re-queue conditional on the lottery being open).
		// SendMessage (SendMessageBatch) on the queue and DeleteMessage
		// (DeleteMessageBatch) on the DLQ: the redrive of one class; with
		// ReceiveMessage and GetQueueAttributes on the DLQ, also what
		// StartMessageMoveTask (the full redrive) needs.
		{Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
			"dynamodb:ConditionCheckItem", "dynamodb:Query"},
			Resources: []stack.Target{stack.TargetTable}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:SendMessage"}, Resources: []stack.Target{stack.TargetQueue}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:StartMessageMoveTask"},
			Resources: []stack.Target{stack.TargetDLQ}},
		replicas,
	},
	Worker: {
		// DescribeTable: /readyz; Query (the pending index, GSI3) and
		// SendMessage: the periodic sweep, which re-queues requests stranded
		// in RECEIVED; SendMessage also
		// continues a waiting arrival candidate's message; BatchGetItem:
		// the allocator's candidates behind the narrow event index (GSI2);
		// PutItem, UpdateItem, ConditionCheckItem: the items of its
		// transactions (a decision's log, the seat, a rejection conditional
		// on the event having sold out) and, PutItem alone, the events'
		// lines (LineKeeper); ChangeMessageVisibility
		// (ChangeMessageVisibilityBatch): a candidate's message whose
		// continuations are spent comes back when its decision is due;
		// SendMessage on the DLQ: a dead letter tagged with its class.
		{Actions: []string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
			"dynamodb:ConditionCheckItem", "dynamodb:Query"},
			Resources: []stack.Target{stack.TargetTable}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:SendMessage"},
			Resources: []stack.Target{stack.TargetQueue}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:SendMessage"}, Resources: []stack.Target{stack.TargetDLQ}},
	},
	PhotoAPI: {
		{Actions: []string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem",
			"dynamodb:Query", "dynamodb:BatchWriteItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
			Resources: []stack.Target{stack.TargetPhotoTable}},
		// GetObject: the organizers' presigned links to originals (signed
		// offline; a link is authorized by the role that signed it).
		{Actions: []string{"s3:GetObject"}, Resources: []stack.Target{stack.TargetPhotoBucket}},
		replicas,
	},
	Events: {
		{Actions: []string{"dynamodb:DescribeTable"}, Resources: []stack.Target{stack.TargetTable}},
		{Actions: []string{"dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords"}, Resources: []stack.Target{stack.TargetTableStream}},
		{Actions: []string{"dynamodb:Query", "dynamodb:PutItem"}, Resources: []stack.Target{stack.TargetCheckpoints}},
		{Actions: []string{"events:PutEvents"}, Resources: []stack.Target{stack.TargetEventBus}},
	},
}

// replicas is what an API's replicas do to count each other
// (ratelimit.Replicas): each puts its heartbeat and queries its group's.
var replicas = stack.Grant{Actions: []string{"dynamodb:PutItem", "dynamodb:Query"}, Resources: []stack.Target{stack.TargetReplicas}}
