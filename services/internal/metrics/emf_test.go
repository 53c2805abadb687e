package metrics_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// emfRegistry has a counter with a label kept as a dimension, a counter
// summed over a label that is none, a gauge and a histogram.
func emfRegistry() (*prometheus.Registry, *prometheus.CounterVec, *prometheus.CounterVec, prometheus.Gauge) {
	reg := prometheus.NewRegistry()
	outcomes := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t_messages_total", Help: "h"}, []string{"outcome"})
	calls := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "t_calls_total", Help: "h"}, []string{"operation", "outcome"})
	ok := prometheus.NewGauge(prometheus.GaugeOpts{Name: "t_ok", Help: "h"})
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "t_seconds", Help: "h"})
	reg.MustRegister(outcomes, calls, ok, hist)
	outcomes.WithLabelValues("final")
	outcomes.WithLabelValues("succeeded")
	return reg, outcomes, calls, ok
}

var emfMetrics = []metrics.EMFMetric{
	{Namespace: "T", Name: "t_messages_total", Unit: "Count", Dimensions: []string{"Stage", "outcome"}},
	{Namespace: "T", Name: "t_calls_total", Unit: "Count", Dimensions: []string{"Stage", "outcome"}},
	{Namespace: "T", Name: "t_ok", Unit: "None", Dimensions: []string{"Stage"}},
}

// flush writes once and parses what was written as CloudWatch would, by
// metric name and dimension values ("name outcome=final").
func flush(t *testing.T, w *metrics.EMFWriter, buf *bytes.Buffer) map[string]metricstest.EMFDatum {
	t.Helper()
	buf.Reset()
	if err := w.Flush(time.Now()); err != nil {
		t.Fatal(err)
	}
	ds, err := metricstest.ParseEMF(buf)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]metricstest.EMFDatum{}
	for _, d := range ds {
		if d.Namespace != "T" || d.Dimensions["Stage"] != "prod" {
			t.Errorf("%+v: want namespace T and Stage prod", d)
		}
		key := d.Name
		if o, ok := d.Dimensions["outcome"]; ok {
			key += " outcome=" + o
		}
		out[key] = d
	}
	return out
}

// A counter is written as its increase since the previous flush (CloudWatch
// sums them over a period), summed over the labels that are no dimension;
// a gauge as its value, at every flush; histograms and unknown families
// are not written.
func TestEMFWritesIncreasesAndValues(t *testing.T) {
	t.Parallel()
	reg, outcomes, calls, ok := emfRegistry()
	var buf bytes.Buffer
	w := metrics.NewEMFWriter(&buf, reg, emfMetrics, map[string]string{"Stage": "prod"})
	ok.Set(1)
	outcomes.WithLabelValues("final").Add(2)
	calls.WithLabelValues("PutItem", "throttled").Add(3)
	calls.WithLabelValues("Query", "throttled").Add(4)

	steps := []struct {
		before func()
		want   map[string]float64
	}{
		{nil, map[string]float64{"t_messages_total outcome=final": 2, "t_messages_total outcome=succeeded": 0, "t_calls_total outcome=throttled": 7, "t_ok": 1}},
		{func() { outcomes.WithLabelValues("final").Inc(); ok.Set(0) },
			map[string]float64{"t_messages_total outcome=final": 1, "t_messages_total outcome=succeeded": 0, "t_calls_total outcome=throttled": 0, "t_ok": 0}},
		{nil, map[string]float64{"t_messages_total outcome=final": 0, "t_messages_total outcome=succeeded": 0, "t_calls_total outcome=throttled": 0, "t_ok": 0}},
	}
	for i, s := range steps {
		if s.before != nil {
			s.before()
		}
		got := flush(t, w, &buf)
		if len(got) != len(s.want) {
			t.Errorf("flush %d wrote %v, want %v", i+1, got, s.want)
		}
		for k, v := range s.want {
			if got[k].Value != v {
				t.Errorf("flush %d: %s = %v, want %v", i+1, k, got[k].Value, v)
			}
		}
		if u := got["t_ok"].Unit; u != "None" {
			t.Errorf("flush %d: t_ok unit %q, want None", i+1, u)
		}
	}
	if strings.Contains(buf.String(), "t_seconds") {
		t.Errorf("the histogram was written: %s", buf.String())
	}
}

// A family the writer cannot write is an error, and the others are still
// written: a histogram, a dimension that is neither a label nor static.
// A gauge that is not a number is left out.
func TestEMFRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		metric metrics.EMFMetric
		static map[string]string
		err    string
	}{
		"histogram":         {metrics.EMFMetric{Namespace: "T", Name: "t_seconds", Unit: "Seconds", Dimensions: []string{"Stage"}}, map[string]string{"Stage": "p"}, "t_seconds is a HISTOGRAM"},
		"no such dimension": {metrics.EMFMetric{Namespace: "T", Name: "t_ok", Unit: "None", Dimensions: []string{"Stage", "zone"}}, map[string]string{"Stage": "p"}, "dimension zone"},
		"no stage":          {metrics.EMFMetric{Namespace: "T", Name: "t_ok", Unit: "None", Dimensions: []string{"Stage"}}, nil, "dimension Stage"},
	} {
		reg, _, _, _ := emfRegistry()
		var buf bytes.Buffer
		ms := []metrics.EMFMetric{c.metric, emfMetrics[0]}
		err := metrics.NewEMFWriter(&buf, reg, ms, c.static).Flush(time.Now())
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: error %v, want one saying %q", name, err, c.err)
		}
		if c.static != nil && !strings.Contains(buf.String(), "t_messages_total") {
			t.Errorf("%s: the other metrics were not written: %q", name, buf.String())
		}
	}

	reg, _, _, ok := emfRegistry()
	ok.Set(math.NaN())
	var buf bytes.Buffer
	if err := metrics.NewEMFWriter(&buf, reg, emfMetrics[2:], map[string]string{"Stage": "p"}).Flush(time.Now()); err != nil || buf.Len() != 0 {
		t.Errorf("a NaN gauge: wrote %q, error %v; want nothing, no error", buf.String(), err)
	}
}

// ParseEMF refuses what CloudWatch would not turn into metrics, and skips
// plain log lines.
func TestParseEMFRefusesInvalidLines(t *testing.T) {
	t.Parallel()
	good := `{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"P","Dimensions":[["Stage"]],"Metrics":[{"Name":"m","Unit":"Count"}]}]},"Stage":"prod","m":3}`
	ds, err := metricstest.ParseEMF(strings.NewReader("time=… level=INFO msg=hello\n{\"msg\":\"json log\"}\n" + good + "\n"))
	if err != nil || len(ds) != 1 || ds[0].Value != 3 || ds[0].Dimensions["Stage"] != "prod" || ds[0].Unit != "Count" {
		t.Fatalf("a valid line among log lines: %+v, %v", ds, err)
	}
	for name, bad := range map[string]string{
		"no timestamp":      strings.Replace(good, `"Timestamp":1,`, "", 1),
		"unknown unit":      strings.Replace(good, `"Count"`, `"Counts"`, 1),
		"dimension missing": strings.Replace(good, `"Stage":"prod",`, "", 1),
		"value not numeric": strings.Replace(good, `"m":3`, `"m":"3"`, 1),
		"value missing":     strings.Replace(good, `,"m":3`, "", 1),
		"no namespace":      strings.Replace(good, `"Namespace":"P",`, "", 1),
	} {
		if _, err := metricstest.ParseEMF(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: %s was accepted", name, bad)
		}
	}
}
