package stack

import "fmt"

// RunAsID is the user and group every container runs as: not root (the
// "nonroot" user of distroless images). The images need no root and no
// writable file system: no binary writes a file at run time (the events
// publisher's file sink is for local runs; the manifests use EventBridge).
const RunAsID = 65532

// DrainSeconds is how long an API pod keeps serving after it starts
// terminating (a preStop sleep) before its server shuts down: the ALB
// stops sending it requests only once the controller has deregistered it,
// a few seconds after Kubernetes removed the pod from its Service.
const DrainSeconds = 10

// terminationGrace covers DrainSeconds and the server's graceful shutdown
// (server.Serve gives in-flight requests up to 10 s).
const terminationGrace = 30

func (s *Spec) serviceAccount(sv Service) map[string]any {
	m := s.meta(sv.Name)
	// IRSA: the role holds the same policy as the ECS task role.
	m["annotations"] = map[string]any{"eks.amazonaws.com/role-arn": "${" + EnvName(sv.Name) + "_ROLE_ARN}"}
	return map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": m}
}

func (s *Spec) deployment(sv Service) map[string]any {
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": sv.Name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": sv.Name}},
			"spec": map[string]any{
				"serviceAccountName": sv.Name, "terminationGracePeriodSeconds": terminationGrace,
				"securityContext": map[string]any{
					"runAsNonRoot": true, "runAsUser": RunAsID, "runAsGroup": RunAsID,
					// fsGroup: the projected IRSA token is readable by the
					// container's group.
					"fsGroup":        RunAsID,
					"seccompProfile": map[string]any{"type": "RuntimeDefault"},
				},
				"containers": []any{container(sv)},
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

// container is sv's container: its image, environment, secrets, size,
// probes, and a read-only root file system without privileges.
func container(sv Service) map[string]any {
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
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
			"capabilities": map[string]any{"drop": []any{"ALL"}},
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
	if sv.Public {
		// Kubernetes 1.30 or later (the sleep action): the images have no
		// shell.
		c["lifecycle"] = map[string]any{"preStop": map[string]any{"sleep": map[string]any{"seconds": DrainSeconds}}}
	}
	return c
}
