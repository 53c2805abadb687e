package dynamostore

import (
	"strings"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// transitionExpr renders the request update of t from the status from:
// the status condition, t.RequirePhase, the times-only-move-forward
// guard, and the attributes t sets. Every transition of every request
// writes one, so it is rendered here, as expression.Builder would render
// it, rather than built with the builder on each call (about 220
// allocations a transition; docs/capacity.md, Pacer's cost per
// operation). TestTransitionExprMatchesTheBuilder holds it to the
// builder's output for every shape of transition.
func transitionExpr(t *asyncevent.Transition, from asyncevent.Status) ddb.Expr {
	var w ddb.ExprWriter
	// ConditionBuilder.And renders (a) AND (b), so n conditions ANDed in
	// turn open with n−1 parentheses, each closed after its condition.
	var cond strings.Builder
	cond.Grow(512)
	ands := len(requestTimes)
	if t.RequirePhase != "" {
		ands++
	}
	for range ands {
		cond.WriteByte('(')
	}
	write(&cond, w.Name("status"), " = ", w.String(string(from)))
	and := func(parts ...string) {
		cond.WriteString(") AND (")
		write(&cond, parts...)
		cond.WriteString(")")
	}
	if t.RequirePhase != "" {
		and(w.Name("uiPhase"), " = ", w.String(string(t.RequirePhase)))
	}
	for _, name := range requestTimes {
		n := w.Name(name)
		and("(attribute_not_exists (", n, ")) OR (", n, " < ", w.Int(t.At), ")")
	}

	var update strings.Builder
	update.Grow(256)
	if !stillPending(t) { // off the pending index
		write(&update, "REMOVE ", w.Name("GSI3PK"), ", ", w.Name("GSI3SK"), "\n")
	}
	sep := "SET "
	set := func(parts ...string) {
		update.WriteString(sep)
		sep = ", "
		write(&update, parts...)
	}
	setStr := func(name, v string) {
		if v != "" {
			set(w.Name(name), " = ", w.String(v))
		}
	}
	setInt := func(name string, v int64) {
		if v != 0 {
			set(w.Name(name), " = ", w.Int(v))
		}
	}
	setStr("status", string(t.To))
	setInt("startedAt", t.StartedAt)
	setInt("finishedAt", t.FinishedAt)
	setInt("attempts", int64(t.Attempts))
	setInt("lotteryRank", int64(t.Rank))
	setStr("uiPhase", string(t.UIPhase))
	setStr("uiResult", string(t.UIResult))
	setStr("resultCode", string(t.ResultCode))
	setStr("failureClass", string(t.FailureClass))
	setStr("errorCode", t.ErrorCode)
	setStr("errorMessage", t.ErrorMessage)
	setStr("lotteryTicket", t.Ticket)
	setStr("workerId", t.WorkerID)
	if t.QueuedAt != 0 {
		qat := QueuedSortKey(t.QueuedAt, t.RequestID)
		keys := [...]struct{ name, s string }{{"GSI1PK", userPK.Build(t.UserID)}, {"GSI1SK", qat},
			{"GSI2PK", eventIndexPK(t.EventID, t.RequestID, t.IndexShards)}, {"GSI2SK", qat}}
		if t.KeepQueuedAt {
			n := w.Name("queuedAt")
			set(n, " = if_not_exists(", n, ", ", w.Int(t.QueuedAt), ")")
			for _, k := range keys {
				n := w.Name(k.name)
				set(n, " = if_not_exists(", n, ", ", w.String(k.s), ")")
			}
		} else {
			setInt("queuedAt", t.QueuedAt)
			for _, k := range keys {
				setStr(k.name, k.s)
			}
		}
	} else if t.ListedAt != 0 { // the user's index only
		setStr("GSI1PK", userPK.Build(t.UserID))
		setStr("GSI1SK", QueuedSortKey(t.ListedAt, t.RequestID))
	}
	update.WriteString("\n")
	return w.Expr(cond.String(), update.String())
}

// write writes parts to b, in turn.
func write(b *strings.Builder, parts ...string) {
	for _, p := range parts {
		b.WriteString(p)
	}
}

// takeSeatExpr renders the seat's decrement (capacityRemaining − 1, only
// if it stays ≥ 0) and updatedAt = at, as ddb.Update's Bounded and Set
// would: it is on every FIRST_COME decision's path.
func takeSeatExpr(at int64) ddb.Expr {
	var w ddb.ExprWriter
	n := w.Name("capacityRemaining")
	cond := n + " >= " + w.Int(1)
	update := "ADD " + n + " " + w.Int(-1) + "\nSET " + w.Name("updatedAt") + " = " + w.Int(at) + "\n"
	return w.Expr(cond, update)
}
