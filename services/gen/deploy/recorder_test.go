package main

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"

	"github.com/pacerhq/pacer/deploy/stack"
)

// recorder records every AWS call made with an aws.Config it is attached
// to, as the (IAM action, stack resource) pairs AWS would authorize it by
// (iamActions, movedTo): awsclient.Counter's middleware, plus the resource
// read from the request (TableName, QueueUrl, StreamArn, ...).
type recorder struct {
	names map[string]stack.Target // table, queue and bus names → target
	mu    sync.Mutex
	calls map[grant]int
}

// grant is one IAM action on one resource of the stack.
type grant struct {
	Action string
	Target stack.Target
}

func (g grant) String() string { return g.Action + " on " + string(g.Target) }

func newRecorder(names map[string]stack.Target) *recorder {
	return &recorder{names: names, calls: map[grant]int{}}
}

// iamPrefix maps the SDK's service ids to IAM's action prefixes.
var iamPrefix = map[string]string{"DynamoDB": "dynamodb", "DynamoDB Streams": "dynamodb", "SQS": "sqs", "EventBridge": "events"}

// attach returns a copy of cfg whose clients report to r.
func (r *recorder) attach(cfg aws.Config) *aws.Config {
	c := cfg.Copy()
	c.APIOptions = append(c.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("deploygen.Recorder",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				r.record(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), in.Parameters)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
	return &c
}

func (r *recorder) record(service, op string, params any) {
	prefix, ok := iamPrefix[service]
	if !ok {
		prefix = "unknown-service(" + service + ")"
	}
	targets := r.targets(op, params)
	actions := iamActions(prefix, op, params)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range targets {
		for _, a := range actions {
			r.calls[grant{a, t}]++
		}
	}
	if a, t, ok := movedTo(prefix, op); ok {
		r.calls[grant{a, t}]++
	}
}

// targets finds the resources a request names: string fields TableName,
// QueueUrl, QueueName, StreamArn, SourceArn, EventBusName, and the keys
// of RequestItems, anywhere in the input.
func (r *recorder) targets(op string, params any) []stack.Target {
	if op == "GetRecords" { // names only a shard iterator, of the one stream
		return []stack.Target{stack.TargetTableStream}
	}
	seen := map[stack.Target]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if !f.IsExported() {
					continue
				}
				fv := v.Field(i)
				switch f.Name {
				case "TableName", "QueueUrl", "QueueName", "StreamArn", "SourceArn", "EventBusName":
					if s, ok := fv.Interface().(*string); ok && s != nil {
						seen[r.resolve(*s)] = true
						continue
					}
				case "RequestItems":
					for _, k := range fv.MapKeys() {
						seen[r.resolve(k.String())] = true
					}
					continue
				}
				walk(fv)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(params))
	if len(seen) == 0 {
		seen[stack.Target("unknown("+op+")")] = true
	}
	out := make([]stack.Target, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	return out
}

// resolve maps a name, URL or ARN to its target: the longest known name
// it ends with (so a DLQ is not taken for its main queue).
func (r *recorder) resolve(s string) stack.Target {
	best, bestLen := stack.Target("unknown("+s+")"), 0
	for name, t := range r.names {
		if (s == name || strings.HasSuffix(s, "/"+name) || strings.HasSuffix(s, ":"+name) || strings.Contains(s, "/"+name+"/stream/")) && len(name) > bestLen {
			best, bestLen = t, len(name)
		}
	}
	if best == stack.TargetTable && strings.Contains(s, "/stream/") {
		return stack.TargetTableStream
	}
	return best
}

// observed returns the recorded grants, sorted.
func (r *recorder) observed() []grant {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]grant, 0, len(r.calls))
	for g := range r.calls {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (r *recorder) String() string {
	var b strings.Builder
	for _, g := range r.observed() {
		fmt.Fprintf(&b, "  %s ×%d\n", g, r.calls[g])
	}
	return b.String()
}

// declared expands a binary's Access into grants.
func declared(bin string) map[grant]bool {
	out := map[grant]bool{}
	for _, g := range Access[bin] {
		for _, a := range g.Actions {
			for _, t := range g.Resources {
				out[grant{a, t}] = true
			}
		}
	}
	return out
}
