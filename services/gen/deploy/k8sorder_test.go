package main

import (
	"slices"
	"sort"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// checkApplyOrder applies the manifests in kubectl's order (the files by
// name, each file's documents in turn) and finds each document that
// would be created before its namespace, or that names no namespace (it
// would land in whatever namespace the kubectl context has).
func checkApplyOrder(ms []manifest) []string {
	ms = slices.Clone(ms)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].File < ms[j].File })
	created := map[string]bool{}
	var problems []string
	for _, m := range ms {
		switch {
		case m.kind() == "Namespace":
			created[m.name()] = true
		case m.namespace() == "":
			problems = append(problems, m.String()+" names no namespace")
		case !created[m.namespace()]:
			problems = append(problems, problemf("%s is applied before its namespace %q is created", m, m.namespace()))
		}
	}
	return problems
}

// The first `kubectl apply` works: the namespace comes first by its
// file's name.
func TestK8sNamespaceIsAppliedFirst(t *testing.T) {
	runCheck(t, checkApplyOrder,
		mutation{"name the namespace's file namespace.yaml", func(t *testing.T, ms []manifest) []manifest {
			for i := range ms {
				if ms[i].File == stack.NamespaceFile {
					ms[i].File = "namespace.yaml"
				}
			}
			return ms
		}},
		without("Namespace", stack.Namespace),
		setIn("leave the worker Deployment's namespace out", "Deployment", Worker, nil, "metadata", "namespace"),
	)
	if ms := loadManifests(t); ms[0].File != stack.NamespaceFile || ms[0].kind() != "Namespace" {
		t.Errorf("the first document applied is %s, want the Namespace in %s", ms[0], stack.NamespaceFile)
	}
}
