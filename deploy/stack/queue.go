package stack

import "time"

// Logical ids of the participation queue and its DLQ.
const (
	IDQueue = "ParticipationQueue"
	IDDLQ   = "ParticipationDLQ"
	idQueue = IDQueue
	idDLQ   = IDDLQ
)

// queueName and dlqName are the queues' names in the template.
func (q Queue) queueName() any { return staged(q.Name) }
func (q Queue) dlqName() any   { return Sub(q.Name + "-${Stage}-dlq") }

// QueueProperties returns the main queue's properties; RedrivePolicy
// points at the DLQ with MaxReceives, as sqsqueue.Open sets it.
func QueueProperties(q Queue, name, dlqARN any) map[string]any {
	return map[string]any{
		"QueueName":         name,
		"VisibilityTimeout": int(q.Visibility / time.Second),
		"RedrivePolicy":     map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": q.MaxReceives},
	}
}

// DLQProperties returns the DLQ's properties.
func DLQProperties(q Queue, name any) map[string]any {
	return map[string]any{"QueueName": name, "MessageRetentionPeriod": int(q.DLQRetention / time.Second)}
}

func (s *Spec) queues(t *Template) {
	t.add(idDLQ, Resource{Type: "AWS::SQS::Queue", Properties: withTags(DLQProperties(s.Queue, s.Queue.dlqName()), "queue")})
	t.add(idQueue, Resource{Type: "AWS::SQS::Queue", Properties: withTags(QueueProperties(s.Queue, s.Queue.queueName(), GetAtt(idDLQ, "Arn")), "queue")})
}
