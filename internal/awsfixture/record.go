package awsfixture

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Recording keeps the calls of some operations a Server answered, in
// order, each answered as by default.
type Recording struct {
	mu    sync.Mutex
	calls []Call
}

// Call is one recorded call: its operation ("DynamoDB.TransactWriteItems")
// and its JSON body.
type Call struct {
	Op   string
	Body []byte
}

// Record starts recording the calls of ops (replacing their replies with
// the default answer).
func (s *Server) Record(ops ...string) *Recording {
	r := &Recording{}
	for _, op := range ops {
		s.Handle(op, func(body []byte) any {
			r.mu.Lock()
			r.calls = append(r.calls, Call{op, body})
			r.mu.Unlock()
			return nil
		})
	}
	return r
}

// Shapes returns each recorded call's Shape.
func (r *Recording) Shapes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.calls))
	for i, c := range r.calls {
		out[i] = c.Shape()
	}
	return out
}

// Shape is what two implementations of one operation must send alike for
// a cost comparison between them to be fair: the operation, each
// transaction item's kind, its item's and key's attribute names, its
// expressions and their names and what it asks back on a failed
// condition, a single-item write's item, expressions and what it
// returns, a query's key, index, expressions and limit, a batch read's
// keys and a batch write's puts and deletes per table (each set of
// attribute names with its count), and a message body's fields; not the
// values (ids and times differ).
func (c Call) Shape() string {
	var in struct {
		TransactItems []map[string]struct {
			Item                                map[string]any
			Key                                 map[string]any
			UpdateExpression                    string
			ConditionExpression                 string
			ExpressionAttributeNames            map[string]string
			ReturnValuesOnConditionCheckFailure string
		}
		Key                                 map[string]any
		Item                                map[string]any
		UpdateExpression                    string
		ConditionExpression                 string
		ReturnValues                        string
		ReturnValuesOnConditionCheckFailure string
		ConsistentRead                      bool
		KeyConditionExpression              string
		FilterExpression                    string
		ScanIndexForward                    *bool
		ExpressionAttributeNames            map[string]string
		IndexName                           string
		Limit                               int
		RequestItems                        map[string]json.RawMessage
		MessageBody                         string
	}
	if err := json.Unmarshal(c.Body, &in); err != nil {
		return c.Op + " undecodable: " + err.Error()
	}
	var b strings.Builder
	b.WriteString(c.Op)
	for _, it := range in.TransactItems {
		for kind, x := range it {
			fmt.Fprintf(&b, "\n  %s item %v key %v cond %q update %q names %v on failure %q", kind, slices.Sorted(maps.Keys(x.Item)), slices.Sorted(maps.Keys(x.Key)),
				x.ConditionExpression, x.UpdateExpression, x.ExpressionAttributeNames, x.ReturnValuesOnConditionCheckFailure)
		}
	}
	if in.Key != nil || in.KeyConditionExpression != "" {
		fmt.Fprintf(&b, "\n  key %v consistent %v index %q keycond %q filter %q forward %v names %v limit %d", slices.Sorted(maps.Keys(in.Key)), in.ConsistentRead,
			in.IndexName, in.KeyConditionExpression, in.FilterExpression, in.ScanIndexForward == nil || *in.ScanIndexForward, in.ExpressionAttributeNames, in.Limit)
	}
	if in.Item != nil || in.UpdateExpression != "" || in.ConditionExpression != "" || in.ReturnValues != "" || in.ReturnValuesOnConditionCheckFailure != "" {
		fmt.Fprintf(&b, "\n  write item %v cond %q update %q names %v returns %q on failure %q", slices.Sorted(maps.Keys(in.Item)),
			in.ConditionExpression, in.UpdateExpression, in.ExpressionAttributeNames, in.ReturnValues, in.ReturnValuesOnConditionCheckFailure)
	}
	for _, table := range slices.Sorted(maps.Keys(in.RequestItems)) {
		b.WriteString(batchShape(table, in.RequestItems[table]))
	}
	if in.MessageBody != "" {
		var m map[string]any
		_ = json.Unmarshal([]byte(in.MessageBody), &m)
		fmt.Fprintf(&b, "\n  message %v", slices.Sorted(maps.Keys(m)))
	}
	return b.String()
}

// Add records a call by hand, from a reply of the caller's own.
func (r *Recording) Add(op string, body []byte) {
	r.mu.Lock()
	r.calls = append(r.calls, Call{op, body})
	r.mu.Unlock()
}

// batchShape is one table's part of a batch call: a BatchGetItem's keys
// (an object), or a BatchWriteItem's requests (a list), each kind of
// request with the attribute names of its items or keys and their count.
func batchShape(table string, raw json.RawMessage) string {
	var get struct{ Keys []map[string]any }
	if json.Unmarshal(raw, &get) == nil {
		var attrs []string
		if len(get.Keys) > 0 {
			attrs = slices.Sorted(maps.Keys(get.Keys[0]))
		}
		return fmt.Sprintf("\n  batch %s: %d keys of %v", table, len(get.Keys), attrs)
	}
	var writes []struct {
		PutRequest    *struct{ Item map[string]any }
		DeleteRequest *struct{ Key map[string]any }
	}
	if err := json.Unmarshal(raw, &writes); err != nil {
		return fmt.Sprintf("\n  batch %s undecodable: %v", table, err)
	}
	count := map[string]int{}
	for _, w := range writes {
		switch {
		case w.PutRequest != nil:
			count[fmt.Sprintf("put %v", slices.Sorted(maps.Keys(w.PutRequest.Item)))]++
		case w.DeleteRequest != nil:
			count[fmt.Sprintf("delete %v", slices.Sorted(maps.Keys(w.DeleteRequest.Key)))]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n  batch write %s: %d requests", table, len(writes))
	for _, kind := range slices.Sorted(maps.Keys(count)) {
		fmt.Fprintf(&b, "\n    %d x %s", count[kind], kind)
	}
	return b.String()
}

// Calls returns the recorded calls, in order.
func (r *Recording) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}
