package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// EMFMetric names one metric an EMFWriter writes: the Prometheus family
// Name, written under the same name in Namespace with Unit (a CloudWatch
// unit: "Count", "Seconds", "None"). Its Dimensions are label names of the
// family and names of the writer's static dimensions; a counter is summed
// over its other labels.
type EMFMetric struct {
	Namespace, Name, Unit string
	Dimensions            []string
}

// EMFWriter writes metrics of a Prometheus registry as CloudWatch Embedded
// Metric Format lines: one JSON object per line, which CloudWatch Logs
// turns into metrics when a log driver (ECS's awslogs) ships the line, with
// no agent. Each Flush writes, for every combination of dimension values,
// a counter's increase since the previous Flush (so CloudWatch's Sum over a
// period is the count in that period) and a gauge's value. Histograms are
// not written.
type EMFWriter struct {
	out     io.Writer
	g       prometheus.Gatherer
	metrics map[string]EMFMetric
	static  map[string]string

	mu   sync.Mutex
	last map[string]float64 // counters' values at the previous Flush, by series key
}

// NewEMFWriter returns a writer of metrics from g to out, with static
// dimension values (e.g. the stage) for the dimensions that are not
// labels.
func NewEMFWriter(out io.Writer, g prometheus.Gatherer, metrics []EMFMetric, static map[string]string) *EMFWriter {
	w := &EMFWriter{out: out, g: g, metrics: map[string]EMFMetric{}, static: static, last: map[string]float64{}}
	for _, m := range metrics {
		w.metrics[m.Name] = m
	}
	return w
}

// emfGroup is one line: the datapoints sharing a namespace and dimension
// values.
type emfGroup struct {
	namespace string
	dims      []string
	values    map[string]string
	metrics   map[string]float64
	units     map[string]string
}

// Flush gathers the registry and writes one line per namespace and
// combination of dimension values, stamped now. A family it cannot write
// (a histogram, a dimension that is neither a label nor static) is an
// error; the others are written.
func (w *EMFWriter) Flush(now time.Time) error {
	mfs, gatherErr := w.g.Gather()
	w.mu.Lock()
	defer w.mu.Unlock()
	groups := map[string]*emfGroup{}
	var errs []string
	if gatherErr != nil {
		errs = append(errs, gatherErr.Error())
	}
	for _, mf := range mfs {
		m, ok := w.metrics[mf.GetName()]
		if !ok {
			continue
		}
		if err := w.add(groups, m, mf); err != nil {
			errs = append(errs, err.Error())
		}
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line, err := groups[k].line(now)
		if err == nil {
			_, err = w.out.Write(line)
		}
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("metrics: EMF: %s", strings.Join(errs, "; "))
	}
	return nil
}

// add adds mf's series to their groups: a counter's increase since the
// last Flush, summed over the labels that are no dimension; a gauge's
// value.
func (w *EMFWriter) add(groups map[string]*emfGroup, m EMFMetric, mf *dto.MetricFamily) error {
	counter := mf.GetType() == dto.MetricType_COUNTER
	if !counter && mf.GetType() != dto.MetricType_GAUGE && mf.GetType() != dto.MetricType_UNTYPED {
		return fmt.Errorf("%s is a %s: only counters and gauges are written", m.Name, mf.GetType())
	}
	dims := slices.Sorted(slices.Values(m.Dimensions))
	for _, s := range mf.GetMetric() {
		values := map[string]string{}
		labels := map[string]string{}
		for _, lp := range s.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for _, d := range dims {
			v, ok := labels[d]
			if !ok {
				v, ok = w.static[d]
			}
			if !ok || v == "" {
				return fmt.Errorf("%s: dimension %s is neither a label nor set", m.Name, d)
			}
			values[d] = v
		}
		key := m.Namespace + "\x00" + strings.Join(dims, "\x00")
		for _, d := range dims {
			key += "\x00" + values[d]
		}
		g := groups[key]
		if g == nil {
			g = &emfGroup{namespace: m.Namespace, dims: dims, values: values, metrics: map[string]float64{}, units: map[string]string{}}
			groups[key] = g
		}
		g.units[m.Name] = m.Unit
		if !counter {
			if s.Gauge != nil {
				g.metrics[m.Name] += s.Gauge.GetValue()
			} else {
				g.metrics[m.Name] += s.Untyped.GetValue()
			}
			continue
		}
		series := m.Name + "\x00" + seriesKey(labels)
		v, prev := s.Counter.GetValue(), w.last[series]
		if v < prev { // a reset: it counted v since
			prev = 0
		}
		g.metrics[m.Name] += v - prev
		w.last[series] = v
	}
	return nil
}

// seriesKey identifies a series by its labels.
func seriesKey(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for n := range labels {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + "=" + labels[n] + "\x00")
	}
	return b.String()
}

// line is g as one EMF object and a newline: the _aws metadata (timestamp
// in milliseconds, and one directive naming the namespace, the dimension
// set and the metrics with their units), the dimension values and the
// metric values as top-level members. A value that is not finite is left
// out (JSON has no NaN).
func (g *emfGroup) line(now time.Time) ([]byte, error) {
	doc := map[string]any{}
	for d, v := range g.values {
		doc[d] = v
	}
	type metric struct {
		Name string `json:"Name"`
		Unit string `json:"Unit,omitempty"`
	}
	var metrics []metric
	for name, v := range g.metrics {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		doc[name] = v
		metrics = append(metrics, metric{Name: name, Unit: g.units[name]})
	}
	if len(metrics) == 0 {
		return nil, nil
	}
	sort.Slice(metrics, func(i, j int) bool { return metrics[i].Name < metrics[j].Name })
	doc["_aws"] = map[string]any{
		"Timestamp": now.UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace": g.namespace, "Dimensions": [][]string{g.dims}, "Metrics": metrics,
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
