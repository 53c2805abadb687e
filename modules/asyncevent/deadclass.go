package asyncevent

import (
	"errors"
	"fmt"
	"strings"
)

// DeadClass is why a message ended in the dead-letter queue: the kind of
// retryable failure its last delivery had. Only retried failures reach
// the DLQ (non-retryable ones end FAILED_FINAL and are acked), so every
// class is a retryable failure that ran out of receives; the class says
// which kind, so that an operator can redrive one kind once its cause is
// gone (docs/asyncevent.md, DLQ by class). The set is closed (bounded metric labels).
//
// A worker tags the message on its last processing receive
// (DeadLetterReceive; deadClass and errorCode message attributes); a
// message SQS moved by itself — the worker died or could not send it, and
// the next receive recorded CodeWorkerLost (Worker.Lost) — has no tag and
// is UNKNOWN.
type DeadClass string

// The dead-letter classes.
const (
	// DeadThrottled: DynamoDB or SQS throttled the last attempt.
	DeadThrottled DeadClass = "THROTTLED"
	// DeadTimeout: the last attempt ran out of time.
	DeadTimeout DeadClass = "TIMEOUT"
	// DeadConflict: the last attempt lost a transaction conflict, or the
	// capacity kept changing while it decided.
	DeadConflict DeadClass = "CONFLICT"
	// DeadDependency: another dependency error (5xx, network, an unknown
	// error code).
	DeadDependency DeadClass = "DEPENDENCY"
	// DeadAllocating: an arrival-ordered FIRST_COME candidate the allocator
	// had not decided by the last receive.
	DeadAllocating DeadClass = "ALLOCATING"
	// DeadUnknown: no tag: SQS moved the message itself (the worker was
	// killed or timed out on its last processing receive, or its
	// dead-letter send failed).
	DeadUnknown DeadClass = "UNKNOWN"
)

// DeadClasses lists every class, in the order views show them.
var DeadClasses = []DeadClass{DeadThrottled, DeadTimeout, DeadConflict, DeadDependency, DeadAllocating, DeadUnknown}

// ParseDeadClass returns the class named s, or an error naming the
// classes.
func ParseDeadClass(s string) (DeadClass, error) {
	for _, c := range DeadClasses {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(DeadClasses))
	for i, c := range DeadClasses {
		names[i] = string(c)
	}
	return "", fmt.Errorf("%w: %q is not one of %s", ErrDeadClass, s, strings.Join(names, ", "))
}

// Error codes that mean throttling (AWS's codes across DynamoDB and SQS).
var throttleCodes = map[string]bool{
	"ThrottlingException":                    true,
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"Throttling":                             true,
	"TooManyRequestsException":               true,
	"RequestThrottled":                       true,
}

// Error codes that mean a lost transaction race.
var conflictCodes = map[string]bool{
	"TransactionCanceledException":   true,
	"TransactionConflictException":   true,
	"TransactionInProgressException": true,
}

// DeadClassOf classifies a delivery that will not be retried any more (its
// last processing receive, not acked): the class and the error code to tag the
// dead letter with. It is only meaningful for an outcome that is not acked.
func DeadClassOf(out Outcome) (DeadClass, string) {
	if out.Result == "allocating" {
		return DeadAllocating, "ALLOCATION_PENDING"
	}
	if out.Err == nil {
		return DeadDependency, "DEPENDENCY_ERROR"
	}
	code := ErrorCode(out.Err)
	switch {
	case throttleCodes[code]:
		return DeadThrottled, code
	case code == "TIMEOUT" || code == "RequestTimeout" || code == "RequestTimeoutException":
		return DeadTimeout, code
	case conflictCodes[code], errors.Is(out.Err, errCapacityChanged):
		return DeadConflict, code
	}
	return DeadDependency, code
}
