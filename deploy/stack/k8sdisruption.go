package stack

// disruptionBudget is sv's PodDisruptionBudget: a voluntary disruption (a
// node drain, a cluster upgrade) evicts at most one of its pods at a time.
// maxUnavailable 1 rather than minAvailable 1: the APIs (two replicas)
// keep one serving either way, and a single pod (the worker at KEDA's
// minimum, the events publisher) can still be evicted, so a drain never
// waits on it forever. The publisher, a singleton, is simply moved: it
// resumes from its checkpoint, and if the evicted pod is still stopping
// when its replacement starts, the few events both read are published
// twice, which consumers de-duplicate (docs/events.md).
func (s *Spec) disruptionBudget(sv Service) map[string]any {
	return map[string]any{
		"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
		"metadata": s.meta(sv.Name),
		"spec": map[string]any{
			"selector":       map[string]any{"matchLabels": map[string]any{"app": sv.Name}},
			"maxUnavailable": 1,
		},
	}
}
