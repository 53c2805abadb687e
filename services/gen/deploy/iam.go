package main

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/deploy/stack"
)

// iamActions is what AWS authorizes for one API call: the IAM actions it
// checks, which are not always the operation's name.
//
//   - A DynamoDB transaction is authorized item by item: TransactWriteItems
//     needs PutItem, UpdateItem, DeleteItem or ConditionCheckItem for each
//     item of that kind, and TransactGetItems GetItem; neither is an IAM
//     action itself.
//   - An SQS batch is authorized as its single-message action:
//     SendMessageBatch as SendMessage, DeleteMessageBatch as DeleteMessage,
//     ChangeMessageVisibilityBatch as ChangeMessageVisibility.
//   - StartMessageMoveTask (a DLQ redrive) needs, on the DLQ, the move
//     itself and what the move does there: ReceiveMessage, DeleteMessage
//     and GetQueueAttributes; and SendMessage on the destination
//     (movedTo).
//   - Every other call is authorized by the action of its own name
//     (BatchGetItem and BatchWriteItem are IAM actions of their own).
//
// prefix is the IAM service prefix ("dynamodb", "sqs", "events"), op the
// API operation and params its input. The access test records every call
// of every binary through it, so each binary's policy (Access) is checked
// against what AWS would check, not against the operation names.
func iamActions(prefix, op string, params any) []string {
	switch prefix + ":" + op {
	case "dynamodb:TransactWriteItems":
		in, ok := params.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return []string{"unknown-transaction"}
		}
		seen := map[string]bool{}
		var out []string
		for _, it := range in.TransactItems {
			var a string
			switch {
			case it.Put != nil:
				a = "dynamodb:PutItem"
			case it.Update != nil:
				a = "dynamodb:UpdateItem"
			case it.Delete != nil:
				a = "dynamodb:DeleteItem"
			case it.ConditionCheck != nil:
				a = "dynamodb:ConditionCheckItem"
			default:
				a = "unknown-transaction-item"
			}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
		return out
	case "dynamodb:TransactGetItems":
		return []string{"dynamodb:GetItem"}
	case "sqs:SendMessageBatch":
		return []string{"sqs:SendMessage"}
	case "sqs:DeleteMessageBatch":
		return []string{"sqs:DeleteMessage"}
	case "sqs:ChangeMessageVisibilityBatch":
		return []string{"sqs:ChangeMessageVisibility"}
	case "sqs:StartMessageMoveTask":
		return []string{"sqs:StartMessageMoveTask", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}
	}
	return []string{prefix + ":" + op}
}

// movedTo is what a call needs on a second resource, beside its own: a
// DLQ redrive without a DestinationArn sends to the queue the messages
// came from (Pacer's main queue), and needs SendMessage there.
func movedTo(prefix, op string) (action string, target stack.Target, ok bool) {
	if prefix+":"+op == "sqs:StartMessageMoveTask" {
		return "sqs:SendMessage", stack.TargetQueue, true
	}
	return "", "", false
}
