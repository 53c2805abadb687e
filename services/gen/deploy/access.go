package main

import "github.com/pacerhq/pacer/deploy/stack"

// Access is each binary's IAM policy: the actions it calls, each on the
// resources it calls it on, and nothing else. access_test.go runs every
// binary against the stand-ins with a recorder on its AWS clients and
// fails when a call is not granted here (on that resource) or a grant here
// is never called.
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
		// SendMessageBatch on the queue and DeleteMessageBatch on the DLQ:
		// the redrive of one class.
		{Actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:UpdateItem", "dynamodb:Query", "dynamodb:TransactWriteItems"},
			Resources: []stack.Target{stack.TargetTable}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:SendMessage", "sqs:SendMessageBatch"}, Resources: []stack.Target{stack.TargetQueue}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibilityBatch", "sqs:DeleteMessageBatch", "sqs:StartMessageMoveTask"},
			Resources: []stack.Target{stack.TargetDLQ}},
	},
	Worker: {
		// DescribeTable: /readyz; Query (the pending index, GSI3) and
		// SendMessage: the periodic sweep, which re-queues requests stranded
		// in RECEIVED; SendMessage also
		// continues a waiting arrival candidate's message; BatchGetItem:
		// the allocator's candidates behind the narrow event index (GSI2);
		// ChangeMessageVisibilityBatch: a candidate's message whose
		// continuations are spent comes back when its decision is due;
		// SendMessage on the DLQ: a dead letter tagged with its class.
		{Actions: []string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:UpdateItem", "dynamodb:Query", "dynamodb:TransactWriteItems"},
			Resources: []stack.Target{stack.TargetTable}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ReceiveMessage", "sqs:DeleteMessageBatch", "sqs:ChangeMessageVisibilityBatch", "sqs:SendMessage"},
			Resources: []stack.Target{stack.TargetQueue}},
		{Actions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:SendMessage"}, Resources: []stack.Target{stack.TargetDLQ}},
	},
	PhotoAPI: {
		{Actions: []string{"dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem",
			"dynamodb:Query", "dynamodb:TransactWriteItems", "dynamodb:BatchWriteItem", "dynamodb:UpdateItem"},
			Resources: []stack.Target{stack.TargetPhotoTable}},
	},
	Events: {
		{Actions: []string{"dynamodb:DescribeTable"}, Resources: []stack.Target{stack.TargetTable}},
		{Actions: []string{"dynamodb:DescribeStream", "dynamodb:GetShardIterator", "dynamodb:GetRecords"}, Resources: []stack.Target{stack.TargetTableStream}},
		{Actions: []string{"dynamodb:Query", "dynamodb:PutItem"}, Resources: []stack.Target{stack.TargetCheckpoints}},
		{Actions: []string{"events:PutEvents"}, Resources: []stack.Target{stack.TargetEventBus}},
	},
}
