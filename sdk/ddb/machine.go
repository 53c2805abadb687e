package ddb

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Machine is a declared state machine over a status attribute. Domains
// declare their states as a string type and their allowed transitions once;
// Transition then refuses any other transition before making a call, and
// makes the allowed ones conditional on the current state.
type Machine[S ~string] struct {
	attr  string
	edges map[S]map[S]bool
}

// NewMachine declares the transitions allowed on attribute attr.
func NewMachine[S ~string](attr string, edges map[S][]S) *Machine[S] {
	m := &Machine[S]{attr: attr, edges: map[S]map[S]bool{}}
	for from, tos := range edges {
		m.edges[from] = map[S]bool{}
		for _, to := range tos {
			m.edges[from][to] = true
		}
	}
	return m
}

// Attr returns the status attribute name.
func (m *Machine[S]) Attr() string { return m.attr }

// Allowed reports whether from → to is a declared transition.
func (m *Machine[S]) Allowed(from, to S) bool { return m.edges[from][to] }

// Terminal reports whether no transition leaves s.
func (m *Machine[S]) Terminal(s S) bool { return len(m.edges[s]) == 0 }

// Transition starts an update of e's item k that moves its status from one
// of from to to, conditional on the status being one of from at write time.
// Chain Set/Remove for the extra attributes. If any from → to is not
// declared, the update fails with ErrTransition before any call. A failed
// condition is a *ConditionError carrying the item as it is now.
func Transition[T any, S ~string](e *Entity[T], k Key, m *Machine[S], to S, from ...S) *Update {
	u := e.Update(k).Label(fmt.Sprintf("Transition %s →%s", e.name, to))
	if len(from) == 0 {
		u.err = fmt.Errorf("%w: %s: no source state", ErrTransition, e.name)
		return u
	}
	ops := make([]expression.OperandBuilder, 0, len(from))
	for _, f := range from {
		if !m.Allowed(f, to) {
			u.err = fmt.Errorf("%w: %s: %s → %s", ErrTransition, e.name, f, to)
			return u
		}
		ops = append(ops, expression.Value(string(f)))
	}
	name := expression.Name(m.attr)
	if len(ops) == 1 {
		u.If(name.Equal(ops[0]))
	} else {
		u.If(name.In(ops[0], ops[1:]...))
	}
	// Set the status bypassing the entity's index check: it is never an
	// index key.
	b := expression.Set(name, expression.Value(string(to)))
	if u.ub != nil {
		b = u.ub.Set(name, expression.Value(string(to)))
	}
	u.ub = &b
	return u
}
