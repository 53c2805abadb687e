package iamtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// Enforcer refuses, as AWS would, every call of the clients it is attached
// to that its policy does not allow, and records every check it makes. It
// is safe for concurrent use.
type Enforcer struct {
	// RedriveTo maps a DLQ's ARN (ARNs.Queue) to the ARN of the queue its
	// messages came from, where a StartMessageMoveTask without a
	// DestinationArn sends them back to (and so needs sqs:SendMessage on).
	// Set it before the first call; a redrive from a DLQ it does not name
	// is refused.
	RedriveTo map[string]string

	arns   ARNs
	mu     sync.Mutex
	policy Policy
	checks []Check
	tokens map[string]string // shard iterator or move task handle → its resource
}

// New returns an Enforcer of policy p, naming resources with a.
func New(p Policy, a ARNs) *Enforcer {
	return &Enforcer{arns: a, policy: p, tokens: map[string]string{}}
}

// Attach returns a copy of cfg whose clients go through e: each call is
// evaluated (Authorizations) before it is sent, in a middleware of the
// Initialize step, so once per call whatever the retries; a call the policy
// does not allow fails with an AccessDeniedException (see IsAccessDenied)
// and is not sent. A call no rule covers, or whose resources cannot be
// told, fails too, with an error saying why (ErrNoRule).
func (e *Enforcer) Attach(cfg aws.Config) aws.Config {
	c := cfg.Copy()
	// Clip: c shares its APIOptions array with cfg and its other copies.
	c.APIOptions = append(slices.Clip(c.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("iamtest.Enforcer", e.handle), middleware.After)
	})
	return c
}

// handle is the middleware: evaluate, refuse or send, and remember the
// tokens the answer returns.
func (e *Enforcer) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	checks, err := e.evaluate(awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), in.Parameters)
	if err != nil {
		return middleware.InitializeOutput{}, middleware.Metadata{}, err
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err == nil {
		e.remember(out.Result, checks)
	}
	return out, md, err
}

// evaluate computes a call's checks under the current policy, records
// them, and returns the error AWS would give for the first denied one.
func (e *Enforcer) evaluate(service, op string, params any) ([]Check, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	z := authorizer{arns: e.arns, redriveTo: e.RedriveTo, token: func(t string) (string, bool) {
		r, ok := e.tokens[t] // under e.mu, held by evaluate
		return r, ok
	}}
	checks, err := z.checks(service, op, params)
	if err != nil {
		e.checks = append(e.checks, Check{Operation: service + "." + op, Error: err.Error()})
		return nil, err
	}
	var refusal error
	for i := range checks {
		allowed, explicit := e.policy.decide(checks[i].Action, checks[i].Resource)
		checks[i].Allowed = allowed
		if !allowed && refusal == nil {
			refusal = e.accessDenied(checks[i], explicit)
		}
	}
	e.checks = append(e.checks, checks...)
	return checks, refusal
}

// accessDenied is the error AWS gives for a denied check.
func (e *Enforcer) accessDenied(c Check, explicit bool) error {
	why := "because no identity-based policy allows the " + c.Action + " action"
	if explicit {
		why = "with an explicit deny in an identity-based policy"
	}
	return &smithy.GenericAPIError{
		Code: AccessDenied,
		Message: fmt.Sprintf("User: arn:aws:sts::%s:assumed-role/iamtest/test is not authorized to perform: %s on resource: %s %s",
			e.arns.Account, c.Action, c.Resource, why),
		Fault: smithy.FaultClient,
	}
}

// AccessDenied is the error code of a refused call.
const AccessDenied = "AccessDeniedException"

// IsAccessDenied reports whether err is, or wraps, an API error with code
// AccessDenied: the enforcer's refusal, or AWS's own.
func IsAccessDenied(err error) bool {
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == AccessDenied
}

// remember records which resource the opaque tokens an answer returns
// belong to: a shard iterator its stream, a move task handle its DLQ
// (the resource of the call's first check).
func (e *Enforcer) remember(result any, checks []Check) {
	if len(checks) == 0 {
		return
	}
	var tok *string
	switch r := result.(type) {
	case *dynamodbstreams.GetShardIteratorOutput:
		tok = r.ShardIterator
	case *dynamodbstreams.GetRecordsOutput:
		tok = r.NextShardIterator
	case *sqs.StartMessageMoveTaskOutput:
		tok = r.TaskHandle
	}
	if tok == nil || *tok == "" {
		return
	}
	e.mu.Lock()
	e.tokens[*tok] = checks[0].Resource
	e.mu.Unlock()
}

// SetPolicy replaces the policy that later calls are evaluated by.
func (e *Enforcer) SetPolicy(p Policy) {
	e.mu.Lock()
	e.policy = p
	e.mu.Unlock()
}

// Policy returns the policy calls are evaluated by.
func (e *Enforcer) Policy() Policy {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.policy
}

// Checks returns every check made so far, in the order made.
func (e *Enforcer) Checks() []Check {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.checks)
}

// Denied returns the checks made so far that were not allowed (those with
// an Error included).
func (e *Enforcer) Denied() []Check {
	return slices.DeleteFunc(e.Checks(), func(c Check) bool { return c.Allowed })
}

// Replay returns the checks, of those recorded under another policy, that
// p would deny, with Allowed false; a check with an Error is always among
// them. It shows, without running the calls again, that a narrower policy
// (Policy.Without) refuses a recorded call.
func Replay(p Policy, checks []Check) []Check {
	var out []Check
	for _, c := range checks {
		if c.Error != "" || !p.Allows(c.Action, c.Resource) {
			c.Allowed = false
			out = append(out, c)
		}
	}
	return out
}
