package main

import (
	"encoding/json"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	k8sjson "sigs.k8s.io/json"

	"github.com/pacerhq/pacer/deploy/stack"
)

// decodeStrict decodes doc into v as the API server does under strict
// field validation (kubectl apply's default): field names match case
// and all, and an unknown or repeated field is an error.
func decodeStrict(doc map[string]any, v any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	strict, err := k8sjson.UnmarshalStrict(b, v)
	return errors.Join(append(strict, err)...)
}

// kubeTypes are the Go types of the manifests' built-in kinds. KEDA's
// (keda.sh) are checked field by field by TestK8sKedaReadsTheQueueAsTheWorker
// and TestScalingThresholdsAreTheSettings.
var kubeTypes = map[string]func() any{
	"v1/Namespace":                           func() any { return new(corev1.Namespace) },
	"v1/ServiceAccount":                      func() any { return new(corev1.ServiceAccount) },
	"v1/Service":                             func() any { return new(corev1.Service) },
	"apps/v1/Deployment":                     func() any { return new(appsv1.Deployment) },
	"policy/v1/PodDisruptionBudget":          func() any { return new(policyv1.PodDisruptionBudget) },
	"networking.k8s.io/v1/Ingress":           func() any { return new(networkingv1.Ingress) },
	"keda.sh/v1alpha1/ScaledObject":          nil,
	"keda.sh/v1alpha1/TriggerAuthentication": nil,
}

// checkSchema finds each document of a kind the manifests do not use, or
// that does not decode strictly into its Kubernetes API type.
func checkSchema(ms []manifest) []string {
	var problems []string
	for _, m := range ms {
		newType, ok := kubeTypes[str(m.Doc["apiVersion"])+"/"+m.kind()]
		switch {
		case !ok:
			problems = append(problems, problemf("%s: apiVersion %v, kind %s: not one the manifests use", m, m.Doc["apiVersion"], m.kind()))
		case newType != nil:
			if err := decodeStrict(m.Doc, newType()); err != nil {
				problems = append(problems, problemf("%s: %v", m, err))
			}
		}
	}
	return problems
}

// Every manifest is a known kind whose fields its API type has.
func TestK8sManifestsDecodeStrictly(t *testing.T) {
	ctr := []any{"spec", "template", "spec", "containers", 0}
	runCheck(t, checkSchema,
		setIn("misspell a field by its case", "Deployment", PhotoAPI, true, append(ctr, "securityContext", "readOnlyRootFileSystem")...),
		setIn("put replicas in the pod", "Deployment", AsyncAPI, 2, "spec", "template", "spec", "replicas"),
		setIn("give a port as a list", "Service", AsyncAPI, []any{80}, "spec", "ports", 0, "port"),
		setIn("use a retired Ingress API", "Ingress", "pacer", "extensions/v1beta1", "apiVersion"),
		setIn("misspell the budget", "PodDisruptionBudget", Worker, 1, "spec", "maxUnavailible"),
		setIn("misspell the namespace's labels", "Namespace", stack.Namespace, map[string]any{}, "metadata", "label"),
	)
}
