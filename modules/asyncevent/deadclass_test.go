package asyncevent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/smithy-go"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// DeadClassOf maps the worker's retryable outcomes onto the closed set of
// classes, keeping the last error code.
func TestDeadClassOf(t *testing.T) {
	aws := func(code string) error { return fmt.Errorf("op: %w", &smithy.GenericAPIError{Code: code}) }
	for _, c := range []struct {
		out   asyncevent.Outcome
		class asyncevent.DeadClass
		code  string
	}{
		{asyncevent.Outcome{Result: "retry", Err: aws("ThrottlingException")}, asyncevent.DeadThrottled, "ThrottlingException"},
		{asyncevent.Outcome{Result: "retry", Err: aws("ProvisionedThroughputExceededException")}, asyncevent.DeadThrottled, "ProvisionedThroughputExceededException"},
		{asyncevent.Outcome{Result: "retry", Err: fmt.Errorf("x: %w", context.DeadlineExceeded)}, asyncevent.DeadTimeout, "TIMEOUT"},
		{asyncevent.Outcome{Result: "retry", Err: aws("TransactionCanceledException")}, asyncevent.DeadConflict, "TransactionCanceledException"},
		{asyncevent.Outcome{Result: "retry", Err: aws("InternalServerError")}, asyncevent.DeadDependency, "InternalServerError"},
		{asyncevent.Outcome{Result: "retry", Err: errors.New("connection reset")}, asyncevent.DeadDependency, "DEPENDENCY_ERROR"},
		{asyncevent.Outcome{Result: "allocating"}, asyncevent.DeadAllocating, "ALLOCATION_PENDING"},
	} {
		class, code := asyncevent.DeadClassOf(c.out)
		if class != c.class || code != c.code {
			t.Errorf("DeadClassOf(%v) = %s %s, want %s %s", c.out.Err, class, code, c.class, c.code)
		}
	}
	for _, c := range asyncevent.DeadClasses {
		if got, err := asyncevent.ParseDeadClass(string(c)); got != c || err != nil {
			t.Errorf("ParseDeadClass(%s) = %s %v", c, got, err)
		}
	}
	if _, err := asyncevent.ParseDeadClass("THROTTLE"); !errors.Is(err, asyncevent.ErrDeadClass) {
		t.Errorf("ParseDeadClass(THROTTLE) = %v, want ErrDeadClass", err)
	}
}
