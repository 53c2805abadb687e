package stack_test

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// desiredCountProblems finds ECS services whose count is wrong for how
// they scale: one with a scalable target (its ResourceId names the
// service) must have no DesiredCount, since every stack update would set
// it back; one without must have one.
func desiredCountProblems(tpl map[string]any) []string {
	res := tpl["Resources"].(map[string]any)
	scaled := map[string]bool{}
	for _, r := range res {
		r := r.(map[string]any)
		if r["Type"] == "AWS::ApplicationAutoScaling::ScalableTarget" {
			parts := asList(asList(asMap(asMap(r["Properties"])["ResourceId"])["Fn::Join"])[1])
			scaled[asList(asMap(parts[2])["Fn::GetAtt"])[0].(string)] = true
		}
	}
	var problems []string
	for id, r := range res {
		r := r.(map[string]any)
		if r["Type"] != "AWS::ECS::Service" {
			continue
		}
		_, has := asMap(r["Properties"])["DesiredCount"]
		switch {
		case scaled[id] && has:
			problems = append(problems, id+" is autoscaled and has a DesiredCount")
		case !scaled[id] && !has:
			problems = append(problems, id+" is not autoscaled and has no DesiredCount")
		}
	}
	sort.Strings(problems)
	return problems
}

func TestDesiredCountOnlyOnFixedServices(t *testing.T) {
	tpl := readTemplate(t)
	if p := desiredCountProblems(tpl); len(p) > 0 {
		t.Fatal(p)
	}
	for _, id := range []string{"WorkerService", "AsyncEventApiService", "PhotoApiService"} {
		if resourceOf(tpl, id) == nil {
			t.Fatalf("no %s", id)
		}
	}
	// The check finds a DesiredCount back on the worker, and one missing
	// on the events publisher.
	for _, m := range []struct {
		id  string
		fix func(props map[string]any)
	}{
		{"WorkerService", func(p map[string]any) { p["DesiredCount"] = 1 }},
		{"EventsPublisherService", func(p map[string]any) { delete(p, "DesiredCount") }},
	} {
		tpl := readTemplate(t)
		m.fix(asMap(resourceOf(tpl, m.id)["Properties"]))
		if p := desiredCountProblems(tpl); len(p) != 1 || !strings.HasPrefix(p[0], m.id) {
			t.Errorf("%s mutated: problems %v", m.id, p)
		}
	}
}

// The pre-scale window and the warm throughput are off by default; set,
// they give the scalable targets their scheduled actions and the
// participation table and its indexes their WarmThroughput; half a
// window, and warm throughput below DynamoDB's floors, are refused.
func TestSaleDayParameters(t *testing.T) {
	tpl := readTemplate(t)
	off, err := deploy(tpl, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"WorkerScalableTarget", "AsyncEventApiScalableTarget", "PhotoApiScalableTarget"} {
		if a, ok := off.Resources[id].Properties["ScheduledActions"]; ok {
			t.Errorf("%s has scheduled actions by default: %v", id, a)
		}
	}
	if w, ok := off.Resources["AsyncEventTable"].Properties["WarmThroughput"]; ok {
		t.Errorf("AsyncEventTable has a WarmThroughput by default: %v", w)
	}

	on, err := deploy(tpl, map[string]string{"PrescaleAt": "2026-11-27T08:55:00", "PrescaleUntil": "2026-11-27T10:00:00",
		"WorkerPrescaleTasks": "9", "AsyncEventTableWarmWriteUnits": "20000"})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"ScheduledActionName": "prescale", "Schedule": "at(2026-11-27T08:55:00)", "ScalableTargetAction": map[string]any{"MinCapacity": "9"}},
		map[string]any{"ScheduledActionName": "prescale-end", "Schedule": "at(2026-11-27T10:00:00)", "ScalableTargetAction": map[string]any{"MinCapacity": "1"}},
	}
	if got := on.Resources["WorkerScalableTarget"].Properties["ScheduledActions"]; !reflect.DeepEqual(got, want) {
		t.Errorf("worker's scheduled actions %v, want %v", got, want)
	}
	warm := map[string]any{"WriteUnitsPerSecond": "20000"}
	if got := on.Resources["AsyncEventTable"].Properties["WarmThroughput"]; !reflect.DeepEqual(got, warm) {
		t.Errorf("WarmThroughput %v, want %v", got, warm)
	}
	// Every participation writes each index too: each is as warm.
	gsis := on.Resources["AsyncEventTable"].Properties["GlobalSecondaryIndexes"].([]any)
	for _, g := range gsis {
		if got := g.(map[string]any)["WarmThroughput"]; !reflect.DeepEqual(got, warm) {
			t.Errorf("%v: WarmThroughput %v, want %v", g.(map[string]any)["IndexName"], got, warm)
		}
	}
	if len(gsis) < 3 {
		t.Errorf("AsyncEventTable has %d indexes, want GSI1 to GSI3", len(gsis))
	}
	// DynamoDB's floors, which it would refuse only once the update ran.
	for _, c := range []struct {
		param string
		ok    []string
		bad   []string
	}{
		{"AsyncEventTableWarmReadUnits", []string{"0", "12000", "19999", "20000", "99999", "100000", "999999999"}, []string{"1", "4000", "11999", "012000", "1000000000", "-12000", "12000.5", ""}},
		{"AsyncEventTableWarmWriteUnits", []string{"0", "4000", "9999", "10000", "999999999"}, []string{"1", "3999", "04000", "1000000000", " 4000"}},
	} {
		for _, v := range c.ok {
			if _, err := deploy(tpl, map[string]string{c.param: v}); err != nil {
				t.Errorf("%s=%q refused: %v", c.param, v, err)
			}
		}
		for _, v := range c.bad {
			if _, err := deploy(tpl, map[string]string{c.param: v}); err == nil {
				t.Errorf("%s=%q accepted", c.param, v)
			}
		}
	}

	for _, bad := range []map[string]string{
		{"PrescaleAt": "2026-11-27T08:55:00"},
		{"PrescaleUntil": "2026-11-27T10:00:00"},
		{"PrescaleAt": "2026-11-27 08:55", "PrescaleUntil": "2026-11-27T10:00:00"},
	} {
		if _, err := deploy(tpl, bad); err == nil {
			t.Errorf("deploy accepted %v", bad)
		}
	}
}

// Each API tracks CPU on its 20-second metric, which its service
// collects, and ALB requests per task on its own target group.
func TestAPIScalingPolicies(t *testing.T) {
	d, err := deploy(readTemplate(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, api := range []string{"AsyncEventApi", "PhotoApi"} {
		got := map[string]any{}
		for _, r := range d.Resources {
			if r.Type != "AWS::ApplicationAutoScaling::ScalingPolicy" || r.Properties["ScalingTargetId"] != "ref:"+api+"ScalableTarget" {
				continue
			}
			spec := asMap(asMap(r.Properties["TargetTrackingScalingPolicyConfiguration"])["PredefinedMetricSpecification"])
			got[fmt.Sprint(spec["PredefinedMetricType"])] = spec["ResourceLabel"]
		}
		want := map[string]any{"ECSServiceAverageCPUUtilizationHighResolution": nil,
			"ALBRequestCountPerTarget": "att:LoadBalancer.LoadBalancerFullName/att:" + api + "TargetGroup.TargetGroupFullName"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s's policies %v, want %v", api, got, want)
		}
		mon := d.Resources[api+"Service"].Properties["Monitoring"]
		if want := map[string]any{"MetricConfigurations": []any{map[string]any{"MetricNames": []any{"CPUUtilization"}, "ResolutionSeconds": 20.0}}}; !reflect.DeepEqual(mon, want) {
			t.Errorf("%s's Monitoring %v, want %v", api, mon, want)
		}
	}
}
