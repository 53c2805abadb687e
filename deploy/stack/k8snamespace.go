package stack

// namespace is the Namespace every other manifest is created in. Its
// labels make the cluster enforce the Pod Security Standard "restricted"
// on its pods (non-root, no privilege escalation, no capabilities, a
// seccomp profile: a pod that breaks it is refused) and have the AWS Load
// Balancer Controller add a readiness gate to the pods behind the ALB, so
// that a rollout waits until a new pod is healthy in its target group
// before it stops an old one.
func namespace() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": Namespace, "labels": map[string]any{
			"pacer/stage":                             "${STAGE}",
			"pod-security.kubernetes.io/enforce":      "restricted",
			"elbv2.k8s.aws/pod-readiness-gate-inject": "enabled",
		}},
	}
}
