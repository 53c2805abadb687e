package main

import "testing"

// checkDisruptionBudgets finds each Deployment without exactly one
// PodDisruptionBudget selecting its pods, or whose budget is not
// maxUnavailable 1: a drain evicts one of its pods at a time, and never
// waits forever on a Deployment of one pod (the events publisher, the
// worker at its minimum), as minAvailable 1 would have it.
func checkDisruptionBudgets(ms []manifest) []string {
	var problems []string
	for _, d := range of(ms, "Deployment") {
		labels, _ := path(d.Doc, "spec", "template", "metadata", "labels").(map[string]any)
		var budgets []manifest
		for _, b := range of(ms, "PodDisruptionBudget") {
			if b.namespace() == d.namespace() && selects(path(b.Doc, "spec", "selector", "matchLabels"), labels) {
				budgets = append(budgets, b)
			}
		}
		if len(budgets) != 1 {
			problems = append(problems, problemf("%s: %d PodDisruptionBudgets select its pods, want one", d, len(budgets)))
			continue
		}
		spec := path(budgets[0].Doc, "spec")
		if path(spec, "maxUnavailable") != 1 || path(spec, "minAvailable") != nil {
			problems = append(problems, problemf("%s: its budget %s is %v, want maxUnavailable 1 alone", d, budgets[0], spec))
		}
	}
	return problems
}

// selects: a non-empty selector whose labels all are in labels.
func selects(selector any, labels map[string]any) bool {
	sel, _ := selector.(map[string]any)
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// Every Deployment has its PodDisruptionBudget.
func TestK8sDisruptionBudgets(t *testing.T) {
	runCheck(t, checkDisruptionBudgets,
		without("PodDisruptionBudget", Worker),
		setIn("select no pod of the API", "PodDisruptionBudget", AsyncAPI, "asyncevent-ap", "spec", "selector", "matchLabels", "app"),
		setIn("keep the publisher's one pod from eviction", "PodDisruptionBudget", Events, nil, "spec", "maxUnavailable"),
		setIn("also require one available", "PodDisruptionBudget", PhotoAPI, 1, "spec", "minAvailable"),
	)
}
