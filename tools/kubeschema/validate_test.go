package kubeschema

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"
)

// repoRoot is Pacer's checkout: the folder above tools/ that has deploy/k8s.
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "deploy", "k8s")); err == nil {
			return d
		}
	}
	t.Fatalf("no deploy/k8s above %s", wd)
	return ""
}

var built sync.Once

// schemas builds the schemas into the checkout's .cache/kubeschema (once;
// make deploy-lint has built them already) and returns their Config.
func schemas(t *testing.T) Config {
	t.Helper()
	c := Config{Dir: filepath.Join(repoRoot(t), ".cache", "kubeschema")}
	var err error
	built.Do(func() {
		var progress bytes.Buffer
		err = Build(context.Background(), c, &progress)
		t.Log(progress.String())
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Folder()); err != nil {
		t.Fatalf("the schemas are not built (%v): run make deploy-schemas", err)
	}
	return c
}

func validate(t *testing.T, c Config, name, doc string) []string {
	t.Helper()
	findings, err := Validate(c, name, strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	return findings
}

// The committed manifests are valid against Kubernetes's and KEDA's
// schemas, strictly.
func TestCommittedManifestsAreValid(t *testing.T) {
	c := schemas(t)
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, finding := range validate(t, c, filepath.Base(f), string(b)) {
			t.Error(finding)
		}
	}
}

// committedDoc returns the first committed document of a kind, decoded.
func committedDoc(t *testing.T, kind string) map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "k8s", "*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m["kind"] == kind {
				return m
			}
		}
	}
	t.Fatalf("no committed %s to change", kind)
	return nil
}

// at returns the object at a path of keys and list indexes in m.
func at(t *testing.T, m any, path ...any) map[string]any {
	t.Helper()
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m = m.(map[string]any)[k]
		case int:
			m = m.([]any)[k]
		}
	}
	o, ok := m.(map[string]any)
	if !ok {
		t.Fatalf("%v: not an object", path)
	}
	return o
}

// Validate refuses each kind of mistake, made in a copy of a committed
// manifest or in a kind the manifests may grow (Ingress,
// PodDisruptionBudget).
func TestValidateRefusesMistakes(t *testing.T) {
	c := schemas(t)
	podSpec := []any{"spec", "template", "spec"}
	for _, tc := range []struct {
		name, kind string
		mutate     func(t *testing.T, doc map[string]any)
		want       string
	}{
		{"unknown field", "Deployment", func(t *testing.T, d map[string]any) { at(t, d, podSpec...)["containerz"] = []any{} },
			"/spec/template/spec: additional properties 'containerz' not allowed"},
		{"unknown field in a container", "Deployment", func(t *testing.T, d map[string]any) {
			at(t, d, append(podSpec, "containers", 0)...)["readynessProbe"] = map[string]any{}
		}, "/spec/template/spec/containers/0: additional properties 'readynessProbe' not allowed"},
		{"unknown field in metadata", "Service", func(t *testing.T, d map[string]any) { at(t, d, "metadata")["label"] = map[string]any{} },
			"/metadata: additional properties 'label' not allowed"},
		{"wrong type", "Deployment", func(t *testing.T, d map[string]any) { at(t, d, "spec")["replicas"] = "two" },
			"/spec/replicas: got string, want null or integer"},
		{"wrong type in a label", "Deployment", func(t *testing.T, d map[string]any) { at(t, d, "metadata", "labels")["tier"] = 1 },
			"/metadata/labels/tier: got number, want string"},
		{"missing required field", "Deployment", func(t *testing.T, d map[string]any) {
			delete(at(t, d, append(podSpec, "containers", 0)...), "name")
		}, "/spec/template/spec/containers/0: missing property 'name'"},
		{"unknown KEDA field", "ScaledObject", func(t *testing.T, d map[string]any) { at(t, d, "spec")["maxReplicas"] = 20 },
			"/spec: additional properties 'maxReplicas' not allowed"},
		{"wrong KEDA type", "ScaledObject", func(t *testing.T, d map[string]any) { at(t, d, "spec")["pollingInterval"] = "15" },
			"/spec/pollingInterval: got string, want integer"},
		{"wrong type in a KEDA trigger", "ScaledObject", func(t *testing.T, d map[string]any) {
			at(t, d, "spec", "triggers", 0, "metadata")["queueLength"] = 6000
		}, "/spec/triggers/0/metadata/queueLength: got number, want string"},
		{"unknown field of the KEDA pod identity", "TriggerAuthentication", func(t *testing.T, d map[string]any) {
			at(t, d, "spec", "podIdentity")["roleARN"] = "arn"
		}, "/spec/podIdentity: additional properties 'roleARN' not allowed"},
		{"a version KEDA does not have", "ScaledObject", func(t *testing.T, d map[string]any) { d["apiVersion"] = "keda.sh/v2" },
			"could not find schema for keda.sh/v2 ScaledObject"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := committedDoc(t, tc.kind)
			tc.mutate(t, doc)
			b, err := yaml.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			wantFound(t, validate(t, c, tc.kind, string(b)), tc.want)
		})
	}
}

func wantFound(t *testing.T, findings []string, want string) {
	t.Helper()
	for _, f := range findings {
		if strings.Contains(f, want) {
			return
		}
	}
	t.Errorf("no finding contains %q; found:\n%s", want, strings.Join(findings, "\n"))
}

// Kinds the manifests may grow validate, and their mistakes are found:
// an Ingress, a PodDisruptionBudget, a Namespace and a KEDA pod identity
// with its role; and a duplicated key fails (strict mode).
func TestValidateOtherKinds(t *testing.T) {
	c := schemas(t)
	const (
		ns      = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: pacer\n  labels:\n    pacer/stage: ${STAGE}\n"
		ingress = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pacer
  namespace: pacer
  annotations:
    alb.ingress.kubernetes.io/scheme: internet-facing
spec:
  ingressClassName: alb
  tls:
    - hosts: [api.example.com]
      secretName: pacer-tls
  rules:
    - host: api.example.com
      http:
        paths:
          - path: /v1/events
            pathType: Prefix
            backend:
              service:
                name: asyncevent-api
                port:
                  number: 8081
`
		pdb = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: photo-api
  namespace: pacer
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: photo-api
`
		auth = `apiVersion: keda.sh/v1alpha1
kind: TriggerAuthentication
metadata:
  name: asyncevent-worker-aws
spec:
  podIdentity:
    provider: aws
    roleArn: arn:aws:iam::123456789012:role/keda
    identityOwner: keda
`
	)
	for _, doc := range []string{ns, ingress, pdb, auth, strings.ReplaceAll(pdb, "minAvailable: 1", `maxUnavailable: "25%"`)} {
		for _, f := range validate(t, c, "valid", doc) {
			t.Error(f)
		}
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"Ingress backend in the v1beta1 form", strings.Replace(ingress, "service:\n                name: asyncevent-api\n                port:\n                  number: 8081",
			"serviceName: asyncevent-api\n              servicePort: 8081", 1), "/http/paths/0/backend: additional properties"},
		{"Ingress port of the wrong type", strings.Replace(ingress, "number: 8081", `number: "8081"`, 1), "/port/number: got string, want null or integer"},
		{"Ingress on the removed extensions/v1beta1", strings.Replace(ingress, "networking.k8s.io/v1", "extensions/v1beta1", 1), "could not find schema for extensions/v1beta1 Ingress"},
		{"PodDisruptionBudget bound of the wrong type", strings.Replace(pdb, "minAvailable: 1", "minAvailable: [1]", 1), "/spec/minAvailable: got array, want integer or string"},
		{"PodDisruptionBudget unknown field", strings.Replace(pdb, "minAvailable: 1", "minAvailable: 1\n  maxAvailable: 3", 1), "additional properties 'maxAvailable' not allowed"},
		{"duplicated key", strings.Replace(pdb, "  minAvailable: 1\n", "  minAvailable: 1\n  minAvailable: 2\n", 1), "already set in map"},
		{"KEDA pod identity of the wrong type", strings.Replace(auth, "identityOwner: keda", "identityOwner: [keda]", 1), "/spec/podIdentity/identityOwner: got array, want string"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantFound(t, validate(t, c, tc.name, tc.doc), tc.want) })
	}
}
