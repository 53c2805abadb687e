package main

import (
	"reflect"
	"slices"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// checkKedaIdentity finds each ScaledObject that does not scale a
// Deployment of the manifests, or whose scaler would not read its queue
// as that Deployment's own IRSA role: its TriggerAuthentication must be
// KEDA's pod identity for AWS with identityOwner workload (KEDA 2.13 or
// later; nothing else, roleArn excluded), and the Deployment's
// ServiceAccount must carry the role KEDA then assumes.
func checkKedaIdentity(ms []manifest) []string {
	objs := index(ms)
	var problems []string
	sos := of(ms, "ScaledObject")
	if len(sos) == 0 {
		problems = append(problems, "no ScaledObject")
	}
	for _, so := range sos {
		ns, ref := so.namespace(), path(so.Doc, "spec", "scaleTargetRef")
		if str(path(ref, "apiVersion")) != "apps/v1" || str(path(ref, "kind")) != "Deployment" {
			problems = append(problems, problemf("%s scales %v, want an apps/v1 Deployment", so, ref))
		}
		dep := objs.get("Deployment", ns, str(path(ref, "name")))
		if dep == nil {
			problems = append(problems, problemf("%s scales %q, no Deployment of the manifests", so, path(ref, "name")))
			continue
		}
		sa := objs.get("ServiceAccount", ns, str(path(dep, "spec", "template", "spec", "serviceAccountName")))
		if str(path(sa, "metadata", "annotations", "eks.amazonaws.com/role-arn")) == "" {
			problems = append(problems, problemf("%s: the Deployment it scales has no ServiceAccount with an IRSA role for KEDA to assume", so))
		}
		triggers, _ := path(so.Doc, "spec", "triggers").([]any)
		if len(triggers) == 0 {
			problems = append(problems, problemf("%s has no trigger", so))
		}
		for _, tr := range triggers {
			problems = append(problems, checkTriggerAuth(objs, so, tr)...)
		}
	}
	return problems
}

// checkTriggerAuth checks one trigger of so: its TriggerAuthentication is
// the workload's pod identity.
func checkTriggerAuth(objs objects, so manifest, tr any) []string {
	if path(tr, "metadata", "identityOwner") != nil {
		return []string{problemf("%s: the trigger's identityOwner is deprecated since KEDA 2.13; the TriggerAuthentication says whose identity", so)}
	}
	if k := str(path(tr, "authenticationRef", "kind")); k != "" && k != "TriggerAuthentication" {
		return []string{problemf("%s authenticates with a %s, want the TriggerAuthentication beside it", so, k)}
	}
	auth := objs.get("TriggerAuthentication", so.namespace(), str(path(tr, "authenticationRef", "name")))
	if auth == nil {
		return []string{problemf("%s: trigger %v has no TriggerAuthentication of the manifests", so, path(tr, "type"))}
	}
	var problems []string
	want := map[string]any{"provider": "aws", "identityOwner": "workload"}
	if got := path(auth, "spec", "podIdentity"); !reflect.DeepEqual(got, want) {
		problems = append(problems, problemf("%s: its TriggerAuthentication's podIdentity is %v, want %v", so, got, want))
	}
	for k := range path(auth, "spec").(map[string]any) {
		if k != "podIdentity" {
			problems = append(problems, problemf("%s: its TriggerAuthentication also has %s", so, k))
		}
	}
	return problems
}

// KEDA reads the queue with the worker's own role, not KEDA's; that role
// allows what the scaler calls.
func TestK8sKedaReadsTheQueueAsTheWorker(t *testing.T) {
	runCheck(t, checkKedaIdentity,
		setIn("use KEDA's own identity", "TriggerAuthentication", Worker+"-aws", nil, "spec", "podIdentity", "identityOwner"),
		setIn("name a role besides", "TriggerAuthentication", Worker+"-aws", "arn:aws:iam::1:role/x", "spec", "podIdentity", "roleArn"),
		setIn("scale a Deployment that is not there", "ScaledObject", Worker, "asyncevent-wroker", "spec", "scaleTargetRef", "name"),
		setIn("scale a StatefulSet", "ScaledObject", Worker, "StatefulSet", "spec", "scaleTargetRef", "kind"),
		setIn("leave the worker's ServiceAccount without a role", "ServiceAccount", Worker, nil, "metadata", "annotations"),
		setIn("authenticate by a Secret too", "TriggerAuthentication", Worker+"-aws", []any{map[string]any{"parameter": "awsAccessKeyID", "name": "x", "key": "y"}}, "spec", "secretTargetRef"),
		setIn("set the deprecated trigger identityOwner", "ScaledObject", Worker, "pod", "spec", "triggers", 0, "metadata", "identityOwner"),
		without("TriggerAuthentication", Worker+"-aws"),
	)
	// The aws-sqs-queue scaler reads the queue's depth with
	// GetQueueAttributes: the worker's policy must allow it on the queue.
	if !readsQueueDepth(Access[Worker]) {
		t.Error("the worker's policy does not allow sqs:GetQueueAttributes on the queue, which KEDA's scaler calls with the worker's role")
	}
	if readsQueueDepth(Access[Events]) {
		t.Error("readsQueueDepth says the events publisher's policy allows sqs:GetQueueAttributes on the queue")
	}
}

// readsQueueDepth: grants allow sqs:GetQueueAttributes on the queue.
func readsQueueDepth(grants []stack.Grant) bool {
	for _, g := range grants {
		if slices.Contains(g.Actions, "sqs:GetQueueAttributes") && slices.Contains(g.Resources, stack.TargetQueue) {
			return true
		}
	}
	return false
}
