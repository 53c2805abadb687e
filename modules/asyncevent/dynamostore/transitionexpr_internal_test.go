package dynamostore

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// builderTransition is how the request update was built before
// transitionExpr, with the expression builder through ddb.Transition and
// ddb.Update: the oracle transitionExpr is held to.
func builderTransition(t *asyncevent.Transition, from asyncevent.Status) expression.Expression {
	name := expression.Name("status")
	cond := name.Equal(expression.Value(string(from)))
	u := expression.Set(name, expression.Value(string(t.To)))
	setInt := func(n string, v int64) {
		if v != 0 {
			u = u.Set(expression.Name(n), expression.Value(v))
		}
	}
	setStr := func(n, v string) {
		if v != "" {
			u = u.Set(expression.Name(n), expression.Value(v))
		}
	}
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
		set := func(n string, v any) { u = u.Set(expression.Name(n), expression.Value(v)) }
		if t.KeepQueuedAt {
			set = func(n string, v any) {
				u = u.Set(expression.Name(n), expression.IfNotExists(expression.Name(n), expression.Value(v)))
			}
		}
		qat := QueuedSortKey(t.QueuedAt, t.RequestID)
		set("queuedAt", t.QueuedAt)
		set("GSI1PK", userPK.Build(t.UserID))
		set("GSI1SK", qat)
		set("GSI2PK", eventIndexPK(t.EventID, t.RequestID, t.IndexShards))
		set("GSI2SK", qat)
	} else if t.ListedAt != 0 {
		setStr("GSI1PK", userPK.Build(t.UserID))
		setStr("GSI1SK", QueuedSortKey(t.ListedAt, t.RequestID))
	}
	if !stillPending(t) {
		u = u.Remove(expression.Name("GSI3PK")).Remove(expression.Name("GSI3SK"))
	}
	if t.RequirePhase != "" {
		cond = cond.And(expression.Name("uiPhase").Equal(expression.Value(string(t.RequirePhase))))
	}
	for _, n := range requestTimes {
		nb := expression.Name(n)
		cond = cond.And(expression.AttributeNotExists(nb).Or(nb.LessThan(expression.Value(t.At))))
	}
	e, err := expression.NewBuilder().WithCondition(cond).WithUpdate(u).Build()
	if err != nil {
		panic(err)
	}
	return e
}

func sameExpr(t *testing.T, what string, got ddb.Expr, want expression.Expression) {
	t.Helper()
	if got.Condition != aws.ToString(want.Condition()) || got.Update != aws.ToString(want.Update()) ||
		!maps.Equal(got.Names, want.Names()) || !reflect.DeepEqual(got.Values, want.Values()) {
		t.Errorf("%s:\nrendered cond %q\n  update %q\n  names %v\n  values %v\nbuilder cond %q\n  update %q\n  names %v\n  values %v",
			what, got.Condition, got.Update, got.Names, got.Values,
			aws.ToString(want.Condition()), aws.ToString(want.Update()), want.Names(), want.Values())
	}
}

// TestTransitionExprMatchesTheBuilder renders every shape of transition
// the domain makes (each field set or not, each status pair the machine
// allows, queuedAt kept or set, listed without it, sharded or not) and holds transitionExpr
// to the expression builder's rendering of the same update: the same
// strings, placeholders and values.
func TestTransitionExprMatchesTheBuilder(t *testing.T) {
	n := 0
	for from, tos := range asyncevent.Lifecycle {
		for _, to := range tos {
			for shape := range 1 << 10 {
				bit := func(i int) bool { return shape&(1<<i) != 0 }
				tr := &asyncevent.Transition{RequestID: "01M8FFQ73T18893C7W07K1YDPF", EventID: "e1", UserID: "user-1", From: []asyncevent.Status{from}, To: to,
					At: 1795818151293, IndexShards: map[bool]int{true: 4, false: 0}[bit(7)]}
				if bit(0) {
					tr.QueuedAt, tr.KeepQueuedAt = 1795818151200, bit(1)
				}
				if bit(2) {
					tr.StartedAt, tr.Attempts, tr.WorkerID = 1795818151250, 3, "w1"
				}
				if bit(3) {
					tr.FinishedAt, tr.UIResult, tr.ResultCode = 1795818151293, asyncevent.ResultSuccess, asyncevent.CodeSuccess
				}
				if bit(4) {
					tr.FailureClass, tr.ErrorCode, tr.ErrorMessage = asyncevent.Retryable, "E", "failed: x"
				}
				if bit(5) {
					tr.UIPhase, tr.Rank, tr.Ticket = asyncevent.PhaseAnnounced, 7, "ab12"
				}
				if bit(6) {
					tr.RequirePhase = asyncevent.PhaseDrawing
				}
				if bit(8) {
					tr.ResultCode = asyncevent.CodeFailedIngestEnqueue // still pending: keeps GSI3
				}
				if bit(9) {
					tr.ListedAt = 1795818151100 // GSI1 only, unless queuedAt is set
				}
				sameExpr(t, fmt.Sprintf("%s → %s, shape %010b", from, to, shape), transitionExpr(tr, from), builderTransition(tr, from))
				n++
			}
		}
	}
	if n < 1000 {
		t.Fatalf("rendered %d transitions: the lifecycle is not what this test expects", n)
	}
	want, err := expression.NewBuilder().
		WithCondition(expression.Name("capacityRemaining").GreaterThanEqual(expression.Value(int64(1)))).
		WithUpdate(expression.Add(expression.Name("capacityRemaining"), expression.Value(int64(-1))).Set(expression.Name("updatedAt"), expression.Value(int64(1795818151293)))).
		Build()
	if err != nil {
		t.Fatal(err)
	}
	sameExpr(t, "take a seat", takeSeatExpr(1795818151293), want)
}
