package iamtest

import (
	"fmt"
	"net/url"
	"strings"
)

// StreamLabel is the label of every stream ARN ARNs builds. A real stream
// ARN ends in the time its stream was enabled; calls name whatever label
// the stand-in gave, and the enforcer canonicalises each to this one by
// its table, so a policy's stream ARN (ARNs.Stream, as the access test's
// refs give it) matches.
const StreamLabel = "1970-01-01T00:00:00.000"

// ARNs builds the ARNs of one account's resources in one region, in AWS's
// formats. The enforcer names every resource a call touches with them, so
// a policy's ARNs (refs for ResolvePolicy) must come from the same ARNs.
// An empty Partition is "aws".
type ARNs struct {
	Partition, Region, Account string
}

func (a ARNs) arn(service, resource string) string {
	p := a.Partition
	if p == "" {
		p = "aws"
	}
	return "arn:" + p + ":" + service + ":" + a.Region + ":" + a.Account + ":" + resource
}

// Table is a DynamoDB table's ARN: arn:aws:dynamodb:R:A:table/NAME.
func (a ARNs) Table(name string) string { return a.arn("dynamodb", "table/"+name) }

// Index is a secondary index's ARN: …:table/NAME/index/INDEX.
func (a ARNs) Index(table, index string) string { return a.Table(table) + "/index/" + index }

// Stream is a table's stream ARN, with StreamLabel for its label:
// …:table/NAME/stream/1970-01-01T00:00:00.000.
func (a ARNs) Stream(table string) string { return a.Table(table) + "/stream/" + StreamLabel }

// Queue is an SQS queue's ARN: arn:aws:sqs:R:A:NAME.
func (a ARNs) Queue(name string) string { return a.arn("sqs", name) }

// Bus is an EventBridge event bus's ARN: arn:aws:events:R:A:event-bus/NAME.
// An empty name is the account's bus named "default", as in PutEvents.
func (a ARNs) Bus(name string) string {
	if name == "" {
		name = "default"
	}
	return a.arn("events", "event-bus/"+name)
}

// resourceOf returns the resource part of an ARN (after its fifth colon),
// or ok false when s is not an ARN.
func resourceOf(s string) (resource string, ok bool) {
	if !strings.HasPrefix(s, "arn:") {
		return "", false
	}
	parts := strings.SplitN(s, ":", 6)
	if len(parts) < 6 {
		return "", false
	}
	return parts[5], true
}

// tableOf returns the table a TableName field names: a name, or a table,
// index or stream ARN (…:table/NAME[/…]).
func tableOf(s string) (string, error) {
	res, isARN := resourceOf(s)
	if !isARN {
		if s == "" {
			return "", fmt.Errorf("iamtest: empty table name")
		}
		return s, nil
	}
	name, ok := strings.CutPrefix(res, "table/")
	if !ok || name == "" {
		return "", fmt.Errorf("iamtest: %q is not a DynamoDB table ARN", s)
	}
	name, _, _ = strings.Cut(name, "/")
	return name, nil
}

// table is the canonical ARN of the table a name or ARN names.
func (a ARNs) table(s string) (string, error) {
	name, err := tableOf(s)
	if err != nil {
		return "", err
	}
	return a.Table(name), nil
}

// stream is the canonical ARN of a stream ARN (…:table/NAME/stream/LABEL):
// a.Stream(NAME), whatever its label.
func (a ARNs) stream(s string) (string, error) {
	res, _ := resourceOf(s)
	if !strings.Contains(res, "/stream/") {
		return "", fmt.Errorf("iamtest: %q is not a DynamoDB stream ARN", s)
	}
	name, err := tableOf(s)
	if err != nil {
		return "", err
	}
	return a.Stream(name), nil
}

// queueURL is the canonical ARN of the queue a queue URL names, by its last
// path segment: http://127.0.0.1:9324/000000000000/NAME and
// https://sqs.us-east-1.amazonaws.com/123456789012/NAME alike.
func (a ARNs) queueURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("iamtest: %q is not a queue URL", s)
	}
	name := u.Path[strings.LastIndex(u.Path, "/")+1:]
	if name == "" {
		return "", fmt.Errorf("iamtest: queue URL %q names no queue", s)
	}
	return a.Queue(name), nil
}

// queueARN is the canonical ARN of a queue ARN, by its name part.
func (a ARNs) queueARN(s string) (string, error) {
	res, ok := resourceOf(s)
	if !ok || res == "" || !strings.Contains(s, ":sqs:") {
		return "", fmt.Errorf("iamtest: %q is not an SQS queue ARN", s)
	}
	return a.Queue(res), nil
}

// bus is the canonical ARN of the bus an EventBusName names: empty (the
// default bus), a name or an ARN (…:event-bus/NAME).
func (a ARNs) bus(s string) (string, error) {
	res, isARN := resourceOf(s)
	if !isARN {
		return a.Bus(s), nil
	}
	name, ok := strings.CutPrefix(res, "event-bus/")
	if !ok || name == "" {
		return "", fmt.Errorf("iamtest: %q is not an event bus ARN", s)
	}
	return a.Bus(name), nil
}
