package ddb

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var (
	// ErrNotFound: the item does not exist (or belongs to another tenant).
	ErrNotFound = errors.New("ddb: item not found")
	// ErrConditionFailed: a condition on a write did not hold. Returned
	// errors are *ConditionError or *TxError, which carry the current item.
	ErrConditionFailed = errors.New("ddb: condition failed")
	// ErrIndexNotAllowed: an entity tried to write key attributes of a GSI
	// it is not allowed to carry.
	ErrIndexNotAllowed = errors.New("ddb: entity may not carry this index")
	// ErrTransition: the state machine does not allow the transition. No
	// call was made.
	ErrTransition = errors.New("ddb: transition not allowed")
	// ErrCursor: a cursor is malformed, tampered with, or was issued for
	// another table, index, partition or tenant.
	ErrCursor = errors.New("ddb: invalid cursor")
	// ErrTenant: a scoped view was asked to write another tenant's item.
	ErrTenant = errors.New("ddb: item belongs to another tenant")
	// ErrTable: Table.Check found the table missing, not ACTIVE, or
	// without the schema's key or indexes.
	ErrTable = errors.New("ddb: table not usable")
	// ErrInvalid: a request the SDK rejects before any call (too many
	// transaction actions, duplicate keys, a bad layout).
	ErrInvalid = errors.New("ddb: invalid request")
)

// NotFoundError is ErrNotFound with the key that was looked up.
type NotFoundError struct{ Key Key }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("ddb: item not found: %s / %s", e.Key.PK, e.Key.SK)
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(k Key) error { return &NotFoundError{Key: k} }

// ConditionError is a failed condition on a single write. Item is the item
// as it is now (nil if it does not exist), so callers learn why without a
// second read.
type ConditionError struct {
	Op   string // the operation's label, e.g. "Create REQUEST"
	Key  Key
	Item Item
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("ddb: %s %s / %s: condition failed", e.Op, e.Key.PK, e.Key.SK)
}

// Is makes errors.Is(err, ErrConditionFailed) true.
func (e *ConditionError) Is(target error) bool { return target == ErrConditionFailed }

// Exists reports whether the item existed when the condition failed.
func (e *ConditionError) Exists() bool { return e.Item != nil }

// Decode unmarshals the current item into v.
func (e *ConditionError) Decode(v any) error { return attributevalue.UnmarshalMap(e.Item, v) }

// TxError is a cancelled transaction. Reasons has one entry per operation,
// in order; Code is "None" for operations that did not cause the
// cancellation.
type TxError struct {
	Reasons []TxReason
	Err     error // the underlying *types.TransactionCanceledException
}

// TxReason is why one operation of a transaction was cancelled.
type TxReason struct {
	Index   int
	Op      string // the operation's label
	Key     Key
	Code    string // e.g. "ConditionalCheckFailed", "TransactionConflict", "None"
	Message string
	Item    Item // current item, for ConditionalCheckFailed with ALL_OLD
}

func (e *TxError) Error() string {
	if f := e.Failed(); f != nil {
		return fmt.Sprintf("ddb: transaction cancelled: action %d (%s %s / %s): %s", f.Index, f.Op, f.Key.PK, f.Key.SK, f.Code)
	}
	return "ddb: transaction cancelled: " + e.Err.Error()
}

func (e *TxError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrConditionFailed) true when any operation's
// condition failed.
func (e *TxError) Is(target error) bool {
	return target == ErrConditionFailed && e.Reason("") != nil
}

// conflictOnly reports whether the only causes were TransactionConflict
// or ThrottlingError (a partition of an item or of an index it feeds was
// out of throughput): nothing was applied, and trying again later can
// succeed.
func (e *TxError) conflictOnly() bool {
	conflict := false
	for _, r := range e.Reasons {
		switch r.Code {
		case "", "None":
		case "TransactionConflict", "ThrottlingError":
			conflict = true
		default:
			return false
		}
	}
	return conflict
}

// Failed returns the first operation that caused the cancellation, or nil.
func (e *TxError) Failed() *TxReason {
	for i := range e.Reasons {
		if c := e.Reasons[i].Code; c != "" && c != "None" {
			return &e.Reasons[i]
		}
	}
	return nil
}

// Reason returns the first failed-condition reason whose operation label is
// op (any label when op is ""), or nil.
func (e *TxError) Reason(op string) *TxReason {
	for i := range e.Reasons {
		r := &e.Reasons[i]
		if r.Code == "ConditionalCheckFailed" && (op == "" || r.Op == op) {
			return r
		}
	}
	return nil
}

// Decode unmarshals the reason's current item into v.
func (r *TxReason) Decode(v any) error { return attributevalue.UnmarshalMap(r.Item, v) }

// BatchError lists what a batch could not process within its retry budget.
// Nothing is dropped silently: every key or item not done is here.
type BatchError struct {
	Op          string // "BatchGetItem" or "BatchWriteItem"
	Keys        []Key  // unprocessed reads, or unprocessed deletes
	Puts        []Item // unprocessed puts
	Err         error  // the last error, if a call failed rather than returning unprocessed items
	Unprocessed int
}

func (e *BatchError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("ddb: %s: %d items not processed: %v", e.Op, e.Unprocessed, e.Err)
	}
	return fmt.Sprintf("ddb: %s: %d items still unprocessed after retries", e.Op, e.Unprocessed)
}

func (e *BatchError) Unwrap() error { return e.Err }

// wrapErr turns a single-item call's error into the SDK's errors.
func wrapErr(op string, k Key, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return &ConditionError{Op: op, Key: k, Item: ccf.Item}
	}
	return fmt.Errorf("ddb: %s %s / %s: %w", op, k.PK, k.SK, err)
}
