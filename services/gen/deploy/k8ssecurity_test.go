package main

import (
	"encoding/json"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	psa "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/pacerhq/pacer/deploy/stack"
)

// restricted is the Pod Security Standard the namespace enforces.
var restricted = psa.LevelVersion{Level: psa.LevelRestricted, Version: psa.LatestVersion()}

// checkPodSecurity finds each Deployment whose pods break the Pod
// Security Standard "restricted" (evaluated by Kubernetes' own
// pod-security-admission checks), do not run as stack.RunAsID, have a
// writable root file system or no resource requests and memory limit;
// and each namespace of theirs that does not enforce "restricted".
func checkPodSecurity(ms []manifest) []string {
	var problems []string
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		return []string{err.Error()}
	}
	objs := index(ms)
	for _, m := range of(ms, "Deployment") {
		if l := path(objs.get("Namespace", "", m.namespace()), "metadata", "labels", "pod-security.kubernetes.io/enforce"); l != "restricted" {
			problems = append(problems, problemf("%s: its namespace %q enforces %v, want restricted", m, m.namespace(), l))
		}
		var d appsv1.Deployment
		if err := decodeStrict(m.Doc, &d); err != nil {
			problems = append(problems, problemf("%s: %v", m, err))
			continue
		}
		pod := &d.Spec.Template
		for _, r := range eval.EvaluatePod(restricted, &pod.ObjectMeta, &pod.Spec) {
			if !r.Allowed {
				problems = append(problems, problemf("%s is not restricted: %s: %s", m, r.ForbiddenReason, r.ForbiddenDetail))
			}
		}
		sc := pod.Spec.SecurityContext
		if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != stack.RunAsID || sc.RunAsGroup == nil || *sc.RunAsGroup != stack.RunAsID || sc.FSGroup == nil || *sc.FSGroup != stack.RunAsID {
			problems = append(problems, problemf("%s: pod security context %s, want user, group and fsGroup %d", m, pretty(sc), stack.RunAsID))
		}
		for _, c := range pod.Spec.Containers {
			if c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
				problems = append(problems, problemf("%s: container %s has a writable root file system", m, c.Name))
			}
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				problems = append(problems, problemf("%s: container %s resources %s, want CPU and memory requests and a memory limit", m, c.Name, pretty(c.Resources)))
			}
		}
	}
	return problems
}

func pretty(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// The pods run as a non-root user, without privileges, on a read-only
// root file system, in a namespace that refuses pods that do not.
func TestK8sPodsAreRestricted(t *testing.T) {
	pod := []any{"spec", "template", "spec"}
	ctr := append(pod, "containers", 0)
	at := func(base []any, keys ...any) []any { return append(append([]any(nil), base...), keys...) }
	runCheck(t, checkPodSecurity,
		setIn("drop no capability", "Deployment", Worker, nil, at(ctr, "securityContext", "capabilities")...),
		setIn("allow privilege escalation", "Deployment", AsyncAPI, true, at(ctr, "securityContext", "allowPrivilegeEscalation")...),
		setIn("run as root", "Deployment", PhotoAPI, 0, at(pod, "securityContext", "runAsUser")...),
		setIn("leave the seccomp profile out", "Deployment", Events, nil, at(pod, "securityContext", "seccompProfile")...),
		setIn("leave runAsNonRoot out", "Deployment", Worker, nil, at(pod, "securityContext", "runAsNonRoot")...),
		setIn("leave fsGroup out", "Deployment", Worker, nil, at(pod, "securityContext", "fsGroup")...),
		setIn("write the root file system", "Deployment", Events, false, at(ctr, "securityContext", "readOnlyRootFilesystem")...),
		setIn("set no memory limit", "Deployment", AsyncAPI, nil, at(ctr, "resources", "limits")...),
		setIn("not enforce restricted", "Namespace", stack.Namespace, "baseline", "metadata", "labels", "pod-security.kubernetes.io/enforce"),
	)
}
