package main

import (
	"fmt"
	"testing"
)

// k8sCheck is a check of the manifests (in apply order): the problems it
// finds, none when they pass.
type k8sCheck func(ms []manifest) []string

// mutation is a change to the committed manifests that a check must
// catch: what it breaks, and how.
type mutation struct {
	breaks string
	change func(t *testing.T, ms []manifest) []manifest
}

// runCheck checks the committed manifests, which must pass, and a copy
// of them changed by each mutation, which must not.
func runCheck(t *testing.T, check k8sCheck, muts ...mutation) {
	t.Helper()
	ms := loadManifests(t)
	for _, p := range check(ms) {
		t.Error(p)
	}
	for _, m := range muts {
		t.Run(m.breaks, func(t *testing.T) {
			got := check(m.change(t, cloneManifests(ms)))
			if len(got) == 0 {
				t.Fatalf("the check passed manifests changed to %s", m.breaks)
			}
			t.Logf("caught: %s", got[0])
		})
	}
}

// setIn returns a mutation that sets the value at keys in the document
// kind/name (or deletes it, for a nil value).
func setIn(breaks, kind, name string, v any, keys ...any) mutation {
	return mutation{breaks, func(t *testing.T, ms []manifest) []manifest {
		t.Helper()
		set(t, find(t, ms, kind, name), v, keys...)
		return ms
	}}
}

// without returns a mutation that removes the document kind/name.
func without(kind, name string) mutation {
	return mutation{"have no " + kind + " " + name, func(t *testing.T, ms []manifest) []manifest {
		t.Helper()
		find(t, ms, kind, name) // it must be there to be removed
		var out []manifest
		for _, m := range ms {
			if m.kind() != kind || m.name() != name {
				out = append(out, m)
			}
		}
		return out
	}}
}

// find is the document kind/name of ms.
func find(t *testing.T, ms []manifest, kind, name string) map[string]any {
	t.Helper()
	for _, m := range ms {
		if m.kind() == kind && m.name() == name {
			return m.Doc
		}
	}
	t.Fatalf("no %s %s in the manifests", kind, name)
	return nil
}

// set sets the value at keys (map keys and list indexes) in doc, or
// deletes it when v is nil.
func set(t *testing.T, doc map[string]any, v any, keys ...any) {
	t.Helper()
	parent := path(doc, keys[:len(keys)-1]...)
	switch k := keys[len(keys)-1].(type) {
	case string:
		m, ok := parent.(map[string]any)
		if !ok {
			t.Fatalf("nothing at %v", keys[:len(keys)-1])
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	case int:
		l, ok := parent.([]any)
		if !ok || k >= len(l) {
			t.Fatalf("no list item at %v", keys)
		}
		l[k] = v
	}
}

// cloneManifests is a deep copy of ms.
func cloneManifests(ms []manifest) []manifest {
	out := make([]manifest, len(ms))
	for i, m := range ms {
		out[i] = manifest{File: m.File, Doc: clone(m.Doc).(map[string]any)}
	}
	return out
}

func clone(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = clone(e)
		}
		return m
	case []any:
		l := make([]any, len(v))
		for i, e := range v {
			l[i] = clone(e)
		}
		return l
	}
	return v
}

// objects indexes manifests by kind, namespace and name.
type objects map[string]map[string]any

func index(ms []manifest) objects {
	o := objects{}
	for _, m := range ms {
		o[m.kind()+"/"+m.namespace()+"/"+m.name()] = m.Doc
	}
	return o
}

// get is the document kind/name in namespace ns, nil if there is none.
func (o objects) get(kind, ns, name string) map[string]any { return o[kind+"/"+ns+"/"+name] }

// of is the documents of ms of kind.
func of(ms []manifest, kind string) []manifest {
	var out []manifest
	for _, m := range ms {
		if m.kind() == kind {
			out = append(out, m)
		}
	}
	return out
}

// problemf formats a problem.
func problemf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
