package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/config"
)

// Bounds bound what an API process takes on, whatever its dependencies
// do (docs/capacity.md, Deadlines and the in-flight bound): every
// operation has a deadline, set by its class, past which it answers 503
// timeout; and the process runs at most MaxInFlight operations at once,
// answering one more 503 overloaded at once. Both answers carry
// Retry-After. The zero Bounds is the defaults.
type Bounds struct {
	// The deadline of each class of operation (OperationClass).
	Read, Write, Admin, Bulk time.Duration
	// MaxInFlight is the most operations the process runs at once; 0:
	// perCPU (the API's, Declare) times GOMAXPROCS.
	MaxInFlight int
	perCPU      int
	// Log hears, at most every ShedLogEvery, how many calls were shed
	// (default slog.Default()).
	Log *slog.Logger
}

// ShedLogEvery is how often, at most, Bound logs the calls it shed: a
// line per call would flood the logs when shedding matters most.
const ShedLogEvery = 10 * time.Second

// The classes of operation, each with its own deadline (OperationClass).
const (
	ClassRead  = "read"  // a GET: one or a few reads
	ClassWrite = "write" // any other method: one or a few writes (a participation: its lock, its send, its queuedAt)
	ClassAdmin = "admin" // an operation under TagAdmin
	ClassBulk  = "bulk"  // an operation marked Bulk: work that grows with its input or the data
)

// The default deadlines, and the Retry-After of the answers past a
// deadline or a failed dependency (RetryUnavailable) and past the bound
// (RetryOverloaded).
const (
	DefaultReadDeadline  = 3 * time.Second
	DefaultWriteDeadline = 5 * time.Second
	DefaultAdminDeadline = 5 * time.Second
	DefaultBulkDeadline  = 25 * time.Second
	RetryUnavailable     = 2 * time.Second
	RetryOverloaded      = time.Second
)

// DefaultInFlightPerCPU is the in-flight bound per CPU of an API that
// states none of its own (docs/capacity.md).
const DefaultInFlightPerCPU = 2000

// Declare declares the settings on s; perCPU is the API's in-flight bound
// per CPU, the default's factor (0: DefaultInFlightPerCPU).
func (b *Bounds) Declare(s *config.Set, perCPU int) {
	b.perCPU = perCPU
	s.Duration(&b.Read, "deadline-read", "PACER_DEADLINE_READ", DefaultReadDeadline,
		"deadline of a read (GET) operation: past it, the answer is 503 timeout with Retry-After")
	s.Duration(&b.Write, "deadline-write", "PACER_DEADLINE_WRITE", DefaultWriteDeadline,
		"deadline of a write (POST, PUT, PATCH, DELETE) operation, a participation's three writes included")
	s.Duration(&b.Admin, "deadline-admin", "PACER_DEADLINE_ADMIN", DefaultAdminDeadline,
		"deadline of an admin operation")
	s.Duration(&b.Bulk, "deadline-bulk", "PACER_DEADLINE_BULK", DefaultBulkDeadline,
		"deadline of an operation whose work grows with the data (the API's spec names them): counts, sweeps, draws, batches, syncs")
	s.Int(&b.MaxInFlight, "max-in-flight", "PACER_MAX_IN_FLIGHT", 0,
		fmt.Sprintf("operations the process runs at once; one more is answered 503 overloaded with Retry-After at once (0: %d × GOMAXPROCS, which is at least 2 in a container: the deployment sets it from the task's CPU; docs/capacity.md)",
			cmp.Or(perCPU, DefaultInFlightPerCPU)))
}

// withDefaults is b with every unset bound at its default.
func (b Bounds) withDefaults() Bounds {
	for _, d := range []struct {
		p   *time.Duration
		def time.Duration
	}{{&b.Read, DefaultReadDeadline}, {&b.Write, DefaultWriteDeadline}, {&b.Admin, DefaultAdminDeadline}, {&b.Bulk, DefaultBulkDeadline}} {
		if *d.p <= 0 {
			*d.p = d.def
		}
	}
	if b.MaxInFlight <= 0 {
		b.MaxInFlight = cmp.Or(b.perCPU, DefaultInFlightPerCPU) * runtime.GOMAXPROCS(0)
	}
	return b
}

// Deadline is the deadline of op, by its class.
func (b Bounds) Deadline(op *huma.Operation) time.Duration {
	return b.withDefaults().deadline(OperationClass(op))
}

// deadline is the deadline of class.
func (b Bounds) deadline(class string) time.Duration {
	switch class {
	case ClassBulk:
		return b.Bulk
	case ClassAdmin:
		return b.Admin
	case ClassRead:
		return b.Read
	}
	return b.Write
}

// bulkKey marks a Bulk operation in its Metadata.
const bulkKey = "pacer-bulk"

// Bulk marks an operation whose work grows with its input or the data
// (a count over an event, a sweep, a batch): its deadline is the bulk
// class's.
func Bulk() OpOption {
	return func(o *huma.Operation) {
		if o.Metadata == nil {
			o.Metadata = map[string]any{}
		}
		o.Metadata[bulkKey] = true
	}
}

// OperationClass is op's class: ClassBulk if marked Bulk, else ClassAdmin
// under TagAdmin, else ClassRead for a GET or HEAD, else ClassWrite.
func OperationClass(op *huma.Operation) string {
	switch {
	case op == nil:
		return ClassWrite
	case op.Metadata[bulkKey] == true:
		return ClassBulk
	case slices.Contains(op.Tags, TagAdmin):
		return ClassAdmin
	case op.Method == http.MethodGet || op.Method == http.MethodHead:
		return ClassRead
	}
	return ClassWrite
}

// ErrDeadline is the cause of an operation's context ending at its
// deadline: Handle answers the operation's failure then as 503 timeout.
var ErrDeadline = errors.New("server: the operation's deadline passed")

// The problem types (after ProblemBase) of the bounds' answers.
const (
	TimeoutProblem    = "timeout"
	OverloadedProblem = "overloaded"
)

// Bound installs the middleware that bounds every operation registered
// after it by b: it answers 503 overloaded with Retry-After, at once and
// having done nothing, while b.MaxInFlight operations are running, and
// else runs the operation under a context that ends at its deadline
// (Deadline), whose failure Handle then answers 503 timeout. Install it
// before Authenticate, so that shedding costs no token check.
func Bound(api huma.API, b Bounds) {
	b = b.withDefaults()
	max := int64(b.MaxInFlight)
	var running atomic.Int64
	shed := shedLog{log: cmp.Or(b.Log, slog.Default()), bound: b.MaxInFlight}
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		if running.Add(1) > max {
			running.Add(-1)
			shed.note(time.Now())
			ctx.SetHeader("Retry-After", RetryAfterSeconds(RetryOverloaded))
			writeHumaProblem(api, ctx, &huma.ErrorModel{Type: ProblemBase + OverloadedProblem, Title: http.StatusText(http.StatusServiceUnavailable),
				Status: http.StatusServiceUnavailable, Detail: overloaded.Detail})
			return
		}
		defer running.Add(-1)
		c, cancel := context.WithTimeoutCause(ctx.Context(), b.deadline(OperationClass(ctx.Operation())), ErrDeadline)
		defer cancel()
		next(huma.WithContext(ctx, c))
	})
}

// shedLog logs the calls Bound sheds, at most every ShedLogEvery.
type shedLog struct {
	log   *slog.Logger
	bound int
	shed  atomic.Int64 // since the last line
	last  atomic.Int64 // when the last line was written, unix nanoseconds
}

// note counts one call shed at now, and logs the count when the last
// line is ShedLogEvery old.
func (l *shedLog) note(now time.Time) {
	n := l.shed.Add(1)
	last := l.last.Load()
	if now.UnixNano()-last < int64(ShedLogEvery) || !l.last.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	l.shed.Add(-n)
	l.log.Warn("shedding load: calls answered 503 overloaded, the in-flight bound reached", "shed", n, "bound", l.bound)
}

// pastDeadline reports whether ctx ended at its operation's deadline
// (Bound).
func pastDeadline(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), ErrDeadline)
}

// deadlineError is an operation's failure once its deadline has passed.
type deadlineError struct{ err error }

func (e *deadlineError) Error() string { return ErrDeadline.Error() + ": " + e.err.Error() }
func (e *deadlineError) Unwrap() []error {
	return []error{ErrDeadline, e.err}
}
