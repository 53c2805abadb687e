package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/config"
)

// readManifests parses every committed deploy/k8s file into its documents.
func readManifests(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "deploy", "k8s", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	docs := map[string]map[string]any{} // kind/name → document
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var d map[string]any
			if err := dec.Decode(&d); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, k := range []string{"apiVersion", "kind", "metadata"} {
				if d[k] == nil {
					t.Fatalf("%s: a document without %s", f, k)
				}
			}
			docs[fmt.Sprint(d["kind"], "/", d["metadata"].(map[string]any)["name"])] = d
		}
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
	checks = append(checks, []struct {
		what      string
		got, want any
	}{
		{"ECS TargetValue", num(path(pol, "TargetValue")), target},
		{"ECS ScaleInCooldown", num(path(pol, "ScaleInCooldown")), sc.ScaleInWindow.Seconds()},
		{"ECS MinCapacity", num(path(st, "MinCapacity")), float64(sc.Min)},
		{"ECS MaxCapacity", num(path(st, "MaxCapacity")), float64(sc.Max)},
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
