package stack

import (
	"fmt"
	"sort"
)

// arns returns the ARNs a target stands for: a table with its indexes, a
// stream, a queue, the bus, the photo bucket's objects.
func (s *Spec) arns(tg Target) []any {
	switch tg {
	case TargetTable:
		return []any{GetAtt(idAsyncTable, "Arn"), Sub("${" + idAsyncTable + ".Arn}/index/*")}
	case TargetTableStream:
		return []any{GetAtt(idAsyncTable, "StreamArn")}
	case TargetPhotoTable:
		return []any{GetAtt(idPhotoTable, "Arn"), Sub("${" + idPhotoTable + ".Arn}/index/*")}
	case TargetCheckpoints:
		return []any{GetAtt(idCheckpointTable, "Arn")}
	case TargetReplicas:
		return []any{GetAtt(IDReplicasTable, "Arn")}
	case TargetQueue:
		return []any{GetAtt(idQueue, "Arn")}
	case TargetDLQ:
		return []any{GetAtt(idDLQ, "Arn")}
	case TargetEventBus:
		return []any{GetAtt(idEventBus, "Arn")}
	case TargetPhotoBucket:
		return []any{Sub("arn:${AWS::Partition}:s3:::${" + ParamPhotoBucket + "}/*")}
	}
	panic(fmt.Sprintf("stack: unknown grant target %q", tg))
}

// Logical ids of the tables grants refer to (Spec.Tables uses them).
const (
	IDAsyncTable      = "AsyncEventTable"
	IDPhotoTable      = "PhotoTable"
	IDCheckpointTable = "CheckpointTable"
	IDReplicasTable   = "ReplicasTable"
	idAsyncTable      = IDAsyncTable
	idPhotoTable      = IDPhotoTable
	idCheckpointTable = IDCheckpointTable
)

// policy is an IAM policy document with one statement per grant, actions
// sorted.
func (s *Spec) policy(grants []Grant) map[string]any {
	var st []any
	for _, g := range grants {
		acts := append([]string(nil), g.Actions...)
		sort.Strings(acts)
		var res []any
		for _, tg := range g.Resources {
			res = append(res, s.arns(tg)...)
		}
		st = append(st, map[string]any{"Effect": "Allow", "Action": acts, "Resource": res})
	}
	return map[string]any{"Version": "2012-10-17", "Statement": st}
}

// assumeRole is a trust policy for a service principal.
func assumeRole(principal string) map[string]any {
	return map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect": "Allow", "Principal": map[string]any{"Service": principal}, "Action": "sts:AssumeRole",
		}},
	}
}

// taskTrust is a task role's trust policy: ECS may hand the role to tasks
// of this account and region only (aws:SourceAccount, aws:SourceArn), the
// confused-deputy guard AWS recommends for task roles, so a task
// definition of another account naming the role gets nothing.
func taskTrust() map[string]any {
	doc := assumeRole("ecs-tasks.amazonaws.com")
	doc["Statement"].([]any)[0].(map[string]any)["Condition"] = map[string]any{
		"StringEquals": map[string]any{"aws:SourceAccount": Ref("AWS::AccountId")},
		"ArnLike":      map[string]any{"aws:SourceArn": Sub("arn:${AWS::Partition}:ecs:${AWS::Region}:${AWS::AccountId}:*")},
	}
	return doc
}

// inlinePolicy is a role's Policies with the one policy doc, named name.
func inlinePolicy(name string, doc map[string]any) []any { return []any{namedPolicy(name, doc)} }

// namedPolicy is one of a role's Policies: doc, named name.
func namedPolicy(name string, doc map[string]any) map[string]any {
	return map[string]any{"PolicyName": name, "PolicyDocument": doc}
}
