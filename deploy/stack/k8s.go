package stack

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Namespace is the manifests' Kubernetes namespace.
const Namespace = "pacer"

// SecretName is the Kubernetes Secret the manifests read secrets from
// (fill it from the secret store, e.g. with External Secrets).
const SecretName = "pacer"

// Manifests returns the Kubernetes manifests by file name: one file per
// binary (ServiceAccount, Deployment and, for an API, a Service) and
// keda.yaml (the worker's ScaledObject). ${VAR} placeholders (STAGE,
// AWS_REGION, AWS_ACCOUNT_ID, the images and roles) are filled by envsubst.
func (s *Spec) Manifests() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, sv := range s.Services {
		docs := []any{s.serviceAccount(sv), s.deployment(sv)}
		if sv.Public {
			docs = append(docs, map[string]any{
				"apiVersion": "v1", "kind": "Service",
				"metadata": s.meta(sv.Name),
				"spec": map[string]any{
					"selector": map[string]any{"app": sv.Name},
					"ports":    []any{map[string]any{"name": "http", "port": 80, "targetPort": sv.Port}},
				},
			})
		}
		b, err := yamlDocs(docs)
		if err != nil {
			return nil, err
		}
		out[sv.Name+".yaml"] = b
	}
	b, err := yamlDocs(s.keda())
	if err != nil {
		return nil, err
	}
	out["keda.yaml"] = b
	return out, nil
}

// EnvName is a binary's placeholder prefix: asyncevent-api → ASYNCEVENT_API.
func EnvName(binary string) string { return strings.ToUpper(strings.ReplaceAll(binary, "-", "_")) }

func (s *Spec) meta(name string) map[string]any {
	return map[string]any{"name": name, "namespace": Namespace, "labels": map[string]any{"app": name, "pacer/stage": "${STAGE}"}}
}

func (s *Spec) serviceAccount(sv Service) map[string]any {
	m := s.meta(sv.Name)
	// IRSA: the role holds the same policy as the ECS task role.
	m["annotations"] = map[string]any{"eks.amazonaws.com/role-arn": "${" + EnvName(sv.Name) + "_ROLE_ARN}"}
	return map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": m}
}

func (s *Spec) deployment(sv Service) map[string]any {
	var env []any
	for _, e := range sv.Env {
		env = append(env, map[string]any{"name": e.Name, "value": e.K8s})
	}
	for _, sc := range sv.Secrets {
		ref := map[string]any{"name": SecretName, "key": sc.Key}
		if sc.Optional {
			ref["optional"] = true
		}
		env = append(env, map[string]any{"name": sc.Name, "valueFrom": map[string]any{"secretKeyRef": ref}})
	}
	c := map[string]any{
		"name": sv.Name, "image": "${" + EnvName(sv.Name) + "_IMAGE}", "env": env,
		"resources": map[string]any{
			"requests": map[string]any{"cpu": fmt.Sprintf("%dm", sv.CPU*1000/1024), "memory": fmt.Sprintf("%dMi", sv.MemoryMiB)},
			"limits":   map[string]any{"memory": fmt.Sprintf("%dMi", sv.MemoryMiB)},
		},
	}
	if sv.Port > 0 {
		c["ports"] = []any{map[string]any{"name": "http", "containerPort": sv.Port}}
		probe := func(path string) map[string]any {
			return map[string]any{"httpGet": map[string]any{"path": path, "port": "http"}, "periodSeconds": 10, "failureThreshold": 3}
		}
		c["livenessProbe"] = probe(sv.HealthPath)
		c["readinessProbe"] = probe(sv.ReadyPath)
	}
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": sv.Name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": sv.Name}},
			"spec": map[string]any{
				"serviceAccountName": sv.Name, "terminationGracePeriodSeconds": 30,
				"containers": []any{c},
			},
		},
	}
	switch {
	case sv.Scaled: // replicas are KEDA's: none here, so an apply does not reset them
	case sv.Singleton:
		spec["replicas"] = 1
		spec["strategy"] = map[string]any{"type": "Recreate"}
	default:
		spec["replicas"] = sv.Count
	}
	return map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": s.meta(sv.Name), "spec": spec}
}

// keda is the worker's ScaledObject: KEDA's aws-sqs-queue scaler with
// queueLength = the target backlog per worker, Min..Max replicas and the
// scale-in stabilization window (docs/autoscaling.md).
func (s *Spec) keda() []any {
	w := s.worker()
	auth := map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
		"metadata": s.meta(w.Name + "-aws"),
		"spec":     map[string]any{"podIdentity": map[string]any{"provider": "aws"}},
	}
	target := s.Scaling.TargetBacklogPerWorker()
	so := map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": s.meta(w.Name),
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"name": w.Name},
			"minReplicaCount": s.Scaling.Min, "maxReplicaCount": s.Scaling.Max,
			"pollingInterval": 15,
			"advanced": map[string]any{"horizontalPodAutoscalerConfig": map[string]any{"behavior": map[string]any{
				"scaleDown": map[string]any{"stabilizationWindowSeconds": int(s.Scaling.ScaleInWindow / time.Second)},
			}}},
			"triggers": []any{map[string]any{
				"type":              "aws-sqs-queue",
				"authenticationRef": map[string]any{"name": w.Name + "-aws"},
				"metadata": map[string]any{
					"queueURL":        "https://sqs.${AWS_REGION}.amazonaws.com/${AWS_ACCOUNT_ID}/" + s.Queue.Name + "-${STAGE}",
					"queueLength":     strconv.FormatFloat(target, 'f', -1, 64),
					"awsRegion":       "${AWS_REGION}",
					"scaleOnInFlight": "true",
				},
			}},
		},
	}
	return []any{auth, so}
}

func yamlDocs(docs []any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Code generated by " + Generator + "; DO NOT EDIT.\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("stack: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("stack: %w", err)
	}
	return buf.Bytes(), nil
}
