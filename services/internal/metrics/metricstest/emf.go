package metricstest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Lines is what a binary's EMF writer writes, kept for a test to read
// while it writes (safe for concurrent use).
type Lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *Lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Parse reads what was written so far as CloudWatch Logs would
// (ParseEMF), failing t on a line CloudWatch would refuse.
func (l *Lines) Parse(t testing.TB) []EMFDatum {
	t.Helper()
	ds, err := ParseEMF(strings.NewReader(l.String()))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// EMFDatum is one datapoint CloudWatch extracts from an Embedded Metric
// Format line: a metric of a directive under one of its dimension sets.
type EMFDatum struct {
	Namespace, Name, Unit string
	Dimensions            map[string]string
	Value                 float64
}

// emfUnits are the units CloudWatch accepts.
var emfUnits = strings.Fields("Seconds Microseconds Milliseconds Bytes Kilobytes Megabytes Gigabytes Terabytes Bits Kilobits Megabits Gigabits Terabits " +
	"Percent Count Bytes/Second Kilobytes/Second Megabytes/Second Gigabytes/Second Terabytes/Second Bits/Second Kilobits/Second Megabits/Second " +
	"Gigabits/Second Terabits/Second Count/Second None")

// ParseEMF reads lines as CloudWatch Logs reads them for metrics (the
// Embedded Metric Format specification): a line that is not a JSON object
// with an _aws member is a plain log line and is skipped; one with _aws
// must have a Timestamp (epoch milliseconds) and CloudWatchMetrics
// directives, each with a Namespace, Dimensions (sets of up to 30 names,
// each naming a string member) and Metrics (up to 100, each a Name naming
// a number member, or an array of up to 100 numbers, and an optional
// CloudWatch Unit). It returns every datapoint, or the first line
// CloudWatch would refuse.
func ParseEMF(r io.Reader) ([]EMFDatum, error) {
	var out []EMFDatum
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var doc map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &doc) != nil || doc["_aws"] == nil {
			continue
		}
		ds, err := parseEMFDoc(doc)
		if err != nil {
			return nil, fmt.Errorf("EMF line %d: %w: %s", n, err, sc.Text())
		}
		out = append(out, ds...)
	}
	return out, sc.Err()
}

func parseEMFDoc(doc map[string]json.RawMessage) ([]EMFDatum, error) {
	var meta struct {
		Timestamp         *float64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	}
	if err := json.Unmarshal(doc["_aws"], &meta); err != nil {
		return nil, fmt.Errorf("_aws: %w", err)
	}
	if meta.Timestamp == nil || *meta.Timestamp <= 0 {
		return nil, fmt.Errorf("_aws.Timestamp missing")
	}
	if len(meta.CloudWatchMetrics) == 0 {
		return nil, fmt.Errorf("_aws.CloudWatchMetrics empty")
	}
	var out []EMFDatum
	for _, d := range meta.CloudWatchMetrics {
		if d.Namespace == "" || len(d.Namespace) > 1024 {
			return nil, fmt.Errorf("namespace %q", d.Namespace)
		}
		if len(d.Metrics) == 0 || len(d.Metrics) > 100 {
			return nil, fmt.Errorf("%d metrics in a directive, want 1 to 100", len(d.Metrics))
		}
		sets, err := emfDimensionSets(doc, d.Dimensions)
		if err != nil {
			return nil, err
		}
		for _, m := range d.Metrics {
			if m.Unit != "" && !slices.Contains(emfUnits, m.Unit) {
				return nil, fmt.Errorf("metric %s: unit %q is not a CloudWatch unit", m.Name, m.Unit)
			}
			values, err := emfValues(doc[m.Name])
			if err != nil {
				return nil, fmt.Errorf("metric %s: %w", m.Name, err)
			}
			for _, dims := range sets {
				for _, v := range values {
					out = append(out, EMFDatum{Namespace: d.Namespace, Name: m.Name, Unit: m.Unit, Dimensions: dims, Value: v})
				}
			}
		}
	}
	return out, nil
}

// emfDimensionSets resolves each dimension set to its names' values.
func emfDimensionSets(doc map[string]json.RawMessage, sets [][]string) ([]map[string]string, error) {
	if sets == nil {
		return []map[string]string{{}}, nil
	}
	var out []map[string]string
	for _, set := range sets {
		if len(set) > 30 {
			return nil, fmt.Errorf("a dimension set of %d names, want at most 30", len(set))
		}
		dims := map[string]string{}
		for _, name := range set {
			var v string
			if err := json.Unmarshal(doc[name], &v); err != nil || v == "" {
				return nil, fmt.Errorf("dimension %s: no string member of that name", name)
			}
			dims[name] = v
		}
		out = append(out, dims)
	}
	return out, nil
}

// emfValues reads a metric member: a number or an array of numbers.
func emfValues(raw json.RawMessage) ([]float64, error) {
	var v float64
	if err := json.Unmarshal(raw, &v); err == nil && raw != nil {
		return []float64{v}, nil
	}
	var vs []float64
	if err := json.Unmarshal(raw, &vs); err != nil || len(vs) == 0 || len(vs) > 100 {
		return nil, fmt.Errorf("member %s is not a number or an array of 1 to 100 numbers", raw)
	}
	return vs, nil
}
