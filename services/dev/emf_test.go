package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/internal/repo"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/server"
)

// emfStage is the stage the binaries write; the template's {"Ref":
// "Stage"} stands for it.
const emfStage = "emftest"

// sum adds the values of name's datapoints whose dimensions include dims
// (name=value pairs); -1 when there is none.
func sum(ds []metricstest.EMFDatum, name string, dims ...string) float64 {
	total, found := 0.0, false
	for _, d := range ds {
		ok := d.Name == name
		for i := 0; ok && i+1 < len(dims); i += 2 {
			ok = d.Dimensions[dims[i]] == dims[i+1]
		}
		if ok {
			total, found = total+d.Value, true
		}
	}
	if !found {
		return -1
	}
	return total
}

// The AsyncEvent API, a worker, the analytics publisher and photo-api, run
// with EMF on against the stand-ins, write what every CloudWatch alarm of
// the committed template on Pacer's namespace reads: its metric,
// dimensions, unit, and a statistic that means something for it. The
// worker's lines add up to its counters (each line is an increase), the
// invariant check writes 1, the idle publisher a lag of about a poll, each
// API the keys it holds (1: a secret) and its refusals by class.
func TestEveryAlarmReadsAnEmittedMetric(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	awsCfg := ownStandins(ctx, t)
	name := fmt.Sprintf("emf-%d", time.Now().UnixNano())
	backend := func(out *metricstest.Lines) asynceventbackend.Config {
		return asynceventbackend.Config{Table: name, Queue: name, Setup: true, AWS: &awsCfg,
			EMF: metrics.EMF{On: true, Stage: emfStage, Out: out, Every: 100 * time.Millisecond}}
	}
	var apiOut, workerOut, eventsOut, photoOut metricstest.Lines

	apiURL := serve(t, ctx, "api", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventapi.Run(ctx, asynceventapi.Config{Config: backend(&apiOut), Listener: l, Dev: true,
			Ready: func(context.Context, string, asynceventapi.Deps) error { ready(); return nil }})
	})
	admin := map[string]string{server.DevUserHeader: "ops", server.DevRolesHeader: "admin"}
	send(t, "POST", apiURL+"/admin/events", `{"eventId":"e","eventType":"FIRST_COME","capacityTotal":1}`, admin, http.StatusCreated)
	for _, u := range []string{"u1", "u2"} {
		send(t, "POST", apiURL+"/events/e/participations", "", map[string]string{server.DevUserHeader: u}, http.StatusAccepted)
	}
	opsURL := serve(t, ctx, "worker", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventworker.Run(ctx, asynceventworker.Config{Config: backend(&workerOut), Concurrency: 2, Batch: 10, Wait: time.Second,
			Visibility: 5 * time.Minute, OpsListener: l, Ready: ready})
	})
	serve(t, ctx, "events", func(ctx context.Context, l net.Listener, ready func()) error {
		return asynceventevents.Run(ctx, asynceventevents.Config{Config: backend(&eventsOut), CheckpointTable: name + "-cp", Consumer: "emf-test",
			Sink: discard{}, Poll: 50 * time.Millisecond, OpsListener: l, Ready: ready})
	})

	dbURL := pgtest.NewDatabase(t)
	photoURL := serve(t, ctx, "photo-api", func(ctx context.Context, l net.Listener, ready func()) error {
		return photoapi.Run(ctx, photoapi.Config{Listener: l, Stage: name, DatabaseURL: dbURL, Dev: true, Setup: true, AWS: &awsCfg,
			EMF:   metrics.EMF{On: true, Stage: emfStage, Out: &photoOut, Every: 100 * time.Millisecond},
			Ready: func(context.Context, string, photoapi.Deps) error { ready(); return nil }})
	})
	// Refusals of both APIs: no token (401), no such path (404).
	for _, url := range []string{apiURL + "/me/participations", photoURL + "/photographers"} {
		send(t, "GET", url, "", nil, http.StatusUnauthorized)
		send(t, "GET", url+"/nowhere/at/all", "", nil, http.StatusNotFound)
	}

	var worker, api, events, photo []metricstest.EMFDatum
	asynceventtest.Eventually(t, time.Minute, "the worker's lines to count its 2 decisions, the API's its invariant, the publisher's its lag, the APIs' their refusals", func() (bool, error) {
		worker, api, events, photo = workerOut.Parse(t), apiOut.Parse(t), eventsOut.Parse(t), photoOut.Parse(t)
		ok, rej := sum(worker, "pacer_worker_messages_total", "outcome", "succeeded"), sum(worker, "pacer_worker_messages_total", "outcome", "rejected")
		inv, lag := sum(api, "pacer_event_capacity_invariant_ok"), sum(events, "pacer_events_publisher_lag_seconds")
		refused := []float64{
			sum(api, "pacer_http_problems_total", "service", asynceventapi.Job, "class", "unauthenticated"), sum(api, "pacer_http_problems_total", "service", asynceventapi.Job, "class", "client"),
			sum(photo, "pacer_http_problems_total", "service", photoapi.Job, "class", "unauthenticated"), sum(photo, "pacer_http_problems_total", "service", photoapi.Job, "class", "client"),
		}
		return ok == 1 && rej == 1 && inv > 0 && lag >= 0 && !slices.ContainsFunc(refused, func(n float64) bool { return n != 1 }),
			fmt.Errorf("succeeded %v, rejected %v, invariant %v, lag %v, 401s and 404s of the APIs %v", ok, rej, inv, lag, refused)
	})
	scraped := metricstest.Scrape(t, opsURL+"/metrics")
	for _, o := range []string{"succeeded", "rejected", "waiting", "retryable", "final"} {
		if got, want := sum(workerOut.Parse(t), "pacer_worker_messages_total", "outcome", o), scraped.Value("pacer_worker_messages_total", "outcome", o); got != want {
			t.Errorf("outcome %s: the lines add up to %v, the counter says %v", o, got, want)
		}
	}
	for _, d := range apiOut.Parse(t) {
		if d.Name == "pacer_event_capacity_invariant_ok" && d.Value != 1 {
			t.Errorf("the invariant wrote %v, want 1 (nothing is oversold)", d.Value)
		}
	}
	for _, d := range eventsOut.Parse(t) {
		if d.Name == "pacer_events_publisher_lag_seconds" && d.Value > 60 {
			t.Errorf("the idle publisher wrote a lag of %v s", d.Value)
		}
	}
	for _, d := range append(apiOut.Parse(t), photoOut.Parse(t)...) {
		if d.Name == "pacer_auth_keys" && d.Value != 1 || d.Name == "pacer_auth_key_set_refresh_failed" && d.Value != 0 {
			t.Errorf("an API with a secret wrote %s %v", d.Name, d.Value)
		}
	}

	reads := templateAlarmReads(t, name)
	emitted := append(append(append(worker, api...), events...), photo...)
	for _, p := range unemitted(reads, emitted) {
		t.Error(p)
	}
	if n := countCustom(reads); n < 20 {
		t.Errorf("%d alarm reads on namespace %s; want the final ratio's, the invariant's, the lag's, the two spike alarms', the APIs' problems', "+
			"the key set's, the human checks' and DynamoDB's errors' at least", n, alarm.Namespace)
	}
}

// alarmRead is one metric an alarm reads: its identity as CloudWatch
// matches it (namespace, name, every dimension's value, the unit if set)
// and the statistic.
type alarmRead struct {
	alarm, namespace, name, stat, unit string
	dims                               map[string]string
}

// templateAlarmReads lists the metrics every alarm of the committed
// template reads, in both of CloudWatch's forms (a metric math alarm's
// MetricStats, and a single metric: Namespace, MetricName, Statistic,
// Dimensions); {"Ref": "Stage"} is emfStage and the queue's QueueName
// (Fn::GetAtt) is queue.
func templateAlarmReads(t *testing.T, queue string) []alarmRead {
	t.Helper()
	b, err := repo.ReadFile("deploy", "aws", "pacer.template.json")
	if err != nil {
		t.Fatal(err)
	}
	type dimension struct {
		Name  string
		Value any
	}
	var tpl struct {
		Resources map[string]struct {
			Type       string
			Properties struct {
				Namespace, MetricName, Statistic, Unit string
				Dimensions                             []dimension
				Metrics                                []struct {
					MetricStat *struct {
						Stat, Unit string
						Metric     struct {
							Namespace, MetricName string
							Dimensions            []dimension
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	dims := func(ds []dimension) map[string]string {
		out := map[string]string{}
		for _, d := range ds {
			v := fmt.Sprint(d.Value)
			if ref, ok := d.Value.(map[string]any); ok && ref["Ref"] == "Stage" {
				v = emfStage
			} else if ok && fmt.Sprint(ref["Fn::GetAtt"]) == "[ParticipationQueue QueueName]" {
				v = queue
			}
			out[d.Name] = v
		}
		return out
	}
	var out []alarmRead
	for id, r := range tpl.Resources {
		if r.Type != "AWS::CloudWatch::Alarm" {
			continue
		}
		if p := r.Properties; p.MetricName != "" {
			out = append(out, alarmRead{alarm: id, namespace: p.Namespace, name: p.MetricName, stat: p.Statistic, unit: p.Unit, dims: dims(p.Dimensions)})
		}
		for _, m := range r.Properties.Metrics {
			if ms := m.MetricStat; ms != nil {
				out = append(out, alarmRead{alarm: id, namespace: ms.Metric.Namespace, name: ms.Metric.MetricName, stat: ms.Stat, unit: ms.Unit, dims: dims(ms.Metric.Dimensions)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].alarm+out[i].name < out[j].alarm+out[j].name })
	return out
}

func countCustom(reads []alarmRead) int {
	n := 0
	for _, r := range reads {
		if r.namespace == alarm.Namespace {
			n++
		}
	}
	return n
}

// unemitted says which alarm reads a metric of Pacer's namespace that no
// datapoint matches as CloudWatch matches metrics (the namespace, the name
// and exactly the same dimensions and values; the unit, if the alarm names
// one), or reads it with a statistic that means nothing for it: a count
// written as increases only adds up (Sum), a value is read by its minimum,
// maximum, average or a percentile. Alarms on AWS's namespaces are
// deploy/stack's TestAlarmsReadPublishedAWSMetrics's.
func unemitted(reads []alarmRead, emitted []metricstest.EMFDatum) []string {
	var out []string
	for _, r := range reads {
		if r.namespace != alarm.Namespace {
			if !strings.HasPrefix(r.namespace, "AWS/") && r.namespace != "ECS/ContainerInsights" {
				out = append(out, fmt.Sprintf("%s reads namespace %s: neither Pacer's nor AWS's", r.alarm, r.namespace))
			}
			continue
		}
		i := slices.IndexFunc(emitted, func(d metricstest.EMFDatum) bool {
			return d.Namespace == r.namespace && d.Name == r.name && sameDims(d.Dimensions, r.dims) && (r.unit == "" || r.unit == d.Unit)
		})
		if i < 0 {
			out = append(out, fmt.Sprintf("%s reads %s %s %v (unit %q), which no tested code path wrote", r.alarm, r.namespace, r.name, r.dims, r.unit))
			continue
		}
		counted := emitted[i].Unit == "Count"
		valueStat := slices.Contains([]string{"Minimum", "Maximum", "Average"}, r.stat) || strings.HasPrefix(r.stat, "p")
		if counted && r.stat != "Sum" || !counted && !valueStat {
			out = append(out, fmt.Sprintf("%s reads the %s of %s, written in %s: meaningless", r.alarm, r.stat, r.name, emitted[i].Unit))
		}
	}
	return out
}

func sameDims(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// The check refuses an alarm on a metric nothing wrote (another name,
// another dimension or value, another unit, another stage) and a
// statistic that means nothing for what was written.
func TestEmittedMetricCheckRefusesMistakes(t *testing.T) {
	t.Parallel()
	emitted := []metricstest.EMFDatum{
		{Namespace: "Pacer", Name: "pacer_worker_messages_total", Unit: "Count", Dimensions: map[string]string{"Stage": emfStage, "outcome": "final"}, Value: 1},
		{Namespace: "Pacer", Name: "pacer_event_capacity_invariant_ok", Unit: "None", Dimensions: map[string]string{"Stage": emfStage}, Value: 1},
	}
	final := alarmRead{alarm: "F", namespace: "Pacer", name: "pacer_worker_messages_total", stat: "Sum", unit: "Count", dims: map[string]string{"Stage": emfStage, "outcome": "final"}}
	inv := alarmRead{alarm: "I", namespace: "Pacer", name: "pacer_event_capacity_invariant_ok", stat: "Minimum", unit: "None", dims: map[string]string{"Stage": emfStage}}
	aws := alarmRead{alarm: "Q", namespace: "AWS/SQS", name: "ApproximateAgeOfOldestMessage", stat: "Maximum", dims: map[string]string{"QueueName": "q"}}
	if p := unemitted([]alarmRead{final, inv, aws}, emitted); len(p) > 0 {
		t.Fatalf("valid reads refused: %v", p)
	}
	for name, bad := range map[string]alarmRead{
		"a metric nothing emits":  {alarm: "X", namespace: "Pacer", name: "pacer_nothing_total", stat: "Sum", dims: map[string]string{"Stage": emfStage}},
		"another label value":     with(final, func(r *alarmRead) { r.dims = map[string]string{"Stage": emfStage, "outcome": "lost"} }),
		"a dimension too few":     with(final, func(r *alarmRead) { r.dims = map[string]string{"Stage": emfStage} }),
		"a dimension too many":    with(inv, func(r *alarmRead) { r.dims = map[string]string{"Stage": emfStage, "service": "api"} }),
		"another stage":           with(inv, func(r *alarmRead) { r.dims = map[string]string{"Stage": "prod"} }),
		"another unit":            with(inv, func(r *alarmRead) { r.unit = "Count" }),
		"the average of a count":  with(final, func(r *alarmRead) { r.stat = "Average" }),
		"the sum of a value":      with(inv, func(r *alarmRead) { r.stat = "Sum" }),
		"a namespace of no one's": with(aws, func(r *alarmRead) { r.namespace = "Pacr" }),
	} {
		if p := unemitted([]alarmRead{bad}, emitted); len(p) == 0 {
			t.Errorf("%s: accepted %+v", name, bad)
		}
	}
}

func with(r alarmRead, mutate func(*alarmRead)) alarmRead {
	mutate(&r)
	return r
}
