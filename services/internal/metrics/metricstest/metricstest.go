// Package metricstest reads and checks Pacer's metrics in tests: it scrapes
// a /metrics endpoint or gathers a registry, sums series by label, and
// checks every pacer_ family against the contract in docs/metrics.md
// (name, type, label names) and the Prometheus lint rules.
package metricstest

import (
	"bufio"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pacerhq/pacer/internal/repo"
)

// Families are metric families by name.
type Families map[string]*dto.MetricFamily

// Scrape reads url (a /metrics endpoint) in the text format.
func Scrape(t testing.TB, url string) Families {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: status %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	return fams
}

// Gather reads g.
func Gather(t testing.TB, g prometheus.Gatherer) Families {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	fams := Families{}
	for _, mf := range mfs {
		fams[mf.GetName()] = mf
	}
	return fams
}

// Value sums the series of name whose labels include labels (name, value
// pairs): a counter's or gauge's value, a histogram's sample count. It
// returns -1 if name has no such series.
func (f Families) Value(name string, labels ...string) float64 {
	mf, ok := f[name]
	if !ok {
		return -1
	}
	sum, found := 0.0, false
	for _, m := range mf.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	if !found {
		return -1
	}
	return sum
}

// Sum is the sum of the observations of histogram name over the series
// whose labels include labels (name=value pairs); -1 when there is none.
func (f Families) Sum(name string, labels ...string) float64 {
	sum, found := 0.0, false
	for _, m := range f[name].GetMetric() {
		if m.Histogram != nil && matches(m, labels) {
			sum, found = sum+m.Histogram.GetSampleSum(), true
		}
	}
	if !found {
		return -1
	}
	return sum
}

func matches(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		ok := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Contract is one metric of docs/metrics.md.
type Contract struct {
	Type   string   // counter, gauge, histogram
	Labels []string // sorted
}

var (
	rowName   = regexp.MustCompile("^\\| `(pacer_[a-z0-9_]+)` \\| (counter|gauge|histogram) \\| ([^|]*) \\|")
	backticks = regexp.MustCompile("`([^`]*)`")
	parens    = regexp.MustCompile(`\([^)]*\)`)
)

// Contracts parses the metric tables of docs/metrics.md.
func Contracts(t testing.TB) map[string]Contract {
	t.Helper()
	path, err := repo.File("docs", "metrics.md")
	if err != nil {
		t.Fatalf("the metric contract: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("the metric contract: %v", err)
	}
	defer f.Close()
	out := map[string]Contract{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := rowName.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		c := Contract{Type: m[2]}
		for _, l := range backticks.FindAllStringSubmatch(parens.ReplaceAllString(m[3], ""), -1) {
			c.Labels = append(c.Labels, l[1])
		}
		slices.Sort(c.Labels)
		out[m[1]] = c
	}
	if len(out) == 0 {
		t.Fatalf("no metrics found in %s", path)
	}
	return out
}

// Check lints fams (promlint) and checks that every pacer_ family is in
// the contract with its type and label names, and that each of want is
// there.
func Check(t testing.TB, fams Families, want ...string) {
	t.Helper()
	mfs := make([]*dto.MetricFamily, 0, len(fams))
	for _, mf := range fams {
		mfs = append(mfs, mf)
	}
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	contract := Contracts(t)
	for name, mf := range fams {
		if !strings.HasPrefix(name, "pacer_") {
			continue
		}
		c, ok := contract[name]
		if !ok {
			t.Errorf("%s is not in docs/metrics.md", name)
			continue
		}
		if typ := strings.ToLower(mf.GetType().String()); typ != c.Type {
			t.Errorf("%s is a %s, the contract says %s", name, typ, c.Type)
		}
		for _, m := range mf.GetMetric() {
			var got []string
			for _, lp := range m.GetLabel() {
				got = append(got, lp.GetName())
			}
			slices.Sort(got)
			if !slices.Equal(got, c.Labels) {
				t.Errorf("%s has labels %v, the contract says %v", name, got, c.Labels)
				break
			}
		}
	}
	for _, name := range want {
		if _, ok := fams[name]; !ok {
			t.Errorf("%s is not emitted", name)
		}
	}
}
