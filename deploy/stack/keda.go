package stack

import (
	"strconv"
	"time"
)

// keda is the worker's ScaledObject: KEDA's aws-sqs-queue scaler with
// queueLength = the target backlog per worker, Min..Max replicas, the
// scale-in stabilization window and a scale-out that may reach Max in one
// step (docs/autoscaling.md), scaling the worker's Deployment. The HPA
// asks KEDA every 15 s, and KEDA reads the queue's attributes then (no
// CloudWatch delay). Its TriggerAuthentication has the scaler read the
// queue as the worker (KEDA 2.13 or later: podIdentity aws with
// identityOwner workload): KEDA assumes the IRSA role on the worker's
// ServiceAccount, whose policy already allows sqs:GetQueueAttributes on
// the queue, so KEDA's own role needs no SQS access; the worker's role
// must trust KEDA's service account (docs/deploy.md).
func (s *Spec) keda() []any {
	w := s.worker()
	auth := map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
		"metadata": s.meta(w.Name + "-aws"),
		"spec":     map[string]any{"podIdentity": map[string]any{"provider": "aws", "identityOwner": "workload"}},
	}
	target := s.Scaling.TargetBacklogPerWorker()
	so := map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
		"metadata": s.meta(w.Name),
		"spec": map[string]any{
			"scaleTargetRef":  map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": w.Name},
			"minReplicaCount": s.Scaling.Min, "maxReplicaCount": s.Scaling.Max,
			"pollingInterval": 15,
			"advanced": map[string]any{"horizontalPodAutoscalerConfig": map[string]any{"behavior": map[string]any{
				"scaleDown": map[string]any{"stabilizationWindowSeconds": int(s.Scaling.ScaleInWindow / time.Second)},
				// Out to the recommendation in one step (the HPA's default
				// adds at most 4 pods or 100 % per 15 s).
				"scaleUp": map[string]any{"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
					"policies": []any{map[string]any{"type": "Pods", "value": s.Scaling.Max, "periodSeconds": 15}}},
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
