package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/config"
)

// manifest is one document of a deploy/k8s file.
type manifest struct {
	File string // the file's name, e.g. "asyncevent-api.yaml"
	Doc  map[string]any
}

func (m manifest) kind() string      { return fmt.Sprint(m.Doc["kind"]) }
func (m manifest) name() string      { return str(path(m.Doc, "metadata", "name")) }
func (m manifest) namespace() string { return str(path(m.Doc, "metadata", "namespace")) }
func (m manifest) String() string    { return m.kind() + "/" + m.name() + " (" + m.File + ")" }

// str is v as a string, "" when it is nil.
func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// committedManifests reads every committed deploy/k8s file, by name.
func committedManifests(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}

// applyOrder parses files into their documents in the order `kubectl
// apply -f deploy/k8s/` applies them: the files by name (kubectl walks
// the directory in lexical order, as a shell glob does), each file's
// documents in turn.
func applyOrder(files map[string][]byte) ([]manifest, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []manifest
	for _, n := range names {
		dec := yaml.NewDecoder(bytes.NewReader(files[n]))
		for {
			var d map[string]any
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			for _, k := range []string{"apiVersion", "kind", "metadata"} {
				if d[k] == nil {
					return nil, fmt.Errorf("%s: a document without %s", n, k)
				}
			}
			out = append(out, manifest{File: n, Doc: d})
		}
	}
	return out, nil
}

// loadManifests is the committed manifests in apply order.
func loadManifests(t *testing.T) []manifest {
	t.Helper()
	ms, err := applyOrder(committedManifests(t))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// readManifests is the committed manifests by kind/name.
func readManifests(t *testing.T) map[string]map[string]any {
	t.Helper()
	docs := map[string]map[string]any{}
	for _, m := range loadManifests(t) {
		docs[m.kind()+"/"+m.name()] = m.Doc
	}
	return docs
}

func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// TestScalingThresholdsAreTheSettings checks that the committed KEDA
// ScaledObject and the template's worker scaling carry the autoscaling
// settings (deploy/alarm's, whose concurrency is the worker's declared
// default): target backlog per worker, Min, Max and the scale-in window;
// and that the template's alarms carry deploy/alarm's thresholds.
func TestScalingThresholdsAreTheSettings(t *testing.T) {
	sc := alarm.Defaults().Scaling
	var w asynceventworker.Config
	s := config.NewSet("w")
	w.Declare(s)
	if sc.Concurrency != w.Concurrency {
		t.Fatalf("autoscaling concurrency %d, the worker's default %d", sc.Concurrency, w.Concurrency)
	}
	target := sc.TargetBacklogPerWorker()

	docs := readManifests(t)
	so := docs["ScaledObject/"+Worker]
	if so == nil {
		t.Fatal("no ScaledObject for the worker")
	}
	trig := path(so, "spec", "triggers", 0)
	checks := []struct {
		what      string
		got, want any
	}{
		{"trigger type", path(trig, "type"), "aws-sqs-queue"},
		{"queueLength", path(trig, "metadata", "queueLength"), strconv.FormatFloat(target, 'f', -1, 64)},
		{"minReplicaCount", path(so, "spec", "minReplicaCount"), sc.Min},
		{"maxReplicaCount", path(so, "spec", "maxReplicaCount"), sc.Max},
		{"stabilizationWindowSeconds", path(so, "spec", "advanced", "horizontalPodAutoscalerConfig", "behavior", "scaleDown", "stabilizationWindowSeconds"), int(sc.ScaleInWindow / time.Second)},
		{"scale target", path(so, "spec", "scaleTargetRef", "name"), Worker},
		{"worker Deployment exists", docs["Deployment/"+Worker] != nil, true},
		{"worker replicas left to KEDA", path(docs["Deployment/"+Worker], "spec", "replicas"), nil},
	}

	tpl := committedTemplate(t)
	res := tpl["Resources"].(map[string]any)
	num := func(v any) float64 {
		f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
		return f
	}
	st := path(res, "WorkerScalableTarget", "Properties")
	pol := path(res, "WorkerScalingPolicy", "Properties", "TargetTrackingScalingPolicyConfiguration")
	spike := path(res, "WorkerSpikeAlarm", "Properties")
	// The bounds are parameters (WorkerMinTasks, WorkerMaxTasks): their
	// defaults are the settings'.
	deref := func(v any) any {
		if name, ok := path(v, "Ref").(string); ok {
			return path(tpl, "Parameters", name, "Default")
		}
		return v
	}
	checks = append(checks, []struct {
		what      string
		got, want any
	}{
		{"ECS TargetValue", num(path(pol, "TargetValue")), target},
		{"ECS ScaleInCooldown", num(path(pol, "ScaleInCooldown")), sc.ScaleInWindow.Seconds()},
		{"ECS MinCapacity", num(deref(path(st, "MinCapacity"))), float64(sc.Min)},
		{"ECS MaxCapacity", num(deref(path(st, "MaxCapacity"))), float64(sc.Max)},
		{"ECS spike alarm threshold (above Min)", num(path(spike, "Threshold")), float64(sc.Min)},
	}...)
	for _, a := range alarm.Alerts(alarm.Defaults()) {
		var props any
		for id, r := range res {
			if p := path(r, "Properties"); path(r, "Type") == "AWS::CloudWatch::Alarm" && (id == a.Name+"Alarm" || len(id) > len(a.Name) && id[:len(a.Name)] == a.Name) {
				props = p
			}
		}
		checks = append(checks, struct {
			what      string
			got, want any
		}{"alarm " + a.Name + " threshold", num(path(props, "Threshold")), a.Threshold})
	}
	for _, c := range checks {
		if fmt.Sprint(c.got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %v, want %v", c.what, c.got, c.want)
		}
	}
}
