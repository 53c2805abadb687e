package alarm

import (
	"fmt"
	"slices"
	"sort"
)

// Namespace is the CloudWatch namespace of Pacer's own metrics.
const Namespace = "Pacer"

// StageDimension is the dimension every custom metric carries: the stack's
// stage ({stage} in the alarms), so that the stages of one account do not
// read each other's metrics.
const StageDimension = "Stage"

// Custom is one of Pacer's own metrics as the processes ship it to
// CloudWatch (services/internal/metrics, in the Embedded Metric Format):
// the Prometheus family Name under the same name in Namespace, with Unit,
// one datapoint per flush and combination of dimension values. Its
// dimensions are StageDimension and labels of the family.
type Custom struct {
	Namespace, Name, Unit string
	// Dimensions are the dimension names, sorted: StageDimension and the
	// family's labels kept (a counter is summed over the others).
	Dimensions []string
}

// diagnostics are shipped though no alarm reads them: the runbooks read
// them in CloudWatch, where there is no Prometheus to ask.
var diagnostics = []Custom{
	// AWS calls by service and outcome (errors and throttles that the
	// SDK's retries did not absorb), summed over operations.
	{Namespace: Namespace, Name: "pacer_aws_calls_total", Unit: "Count", Dimensions: []string{StageDimension, "outcome", "service_name"}},
}

// Shipped returns the custom metrics the processes ship, by name: each one
// a CloudWatch signal of Signals(Defaults()) reads, and the diagnostics the
// runbooks read. Its error says when two signals read one metric with
// different units or dimension names, or one lacks StageDimension.
func Shipped() ([]Custom, error) {
	byName := map[string]Custom{}
	for _, d := range diagnostics {
		byName[d.Name] = d
	}
	for _, s := range Signals(Defaults()) {
		for _, m := range s.CloudWatch.Metrics {
			if m.Namespace != Namespace {
				continue
			}
			c := Custom{Namespace: m.Namespace, Name: m.Name, Unit: m.Unit}
			for k := range m.Dimensions {
				c.Dimensions = append(c.Dimensions, k)
			}
			sort.Strings(c.Dimensions)
			if !slices.Contains(c.Dimensions, StageDimension) {
				return nil, fmt.Errorf("alarm: signal %s reads %s without the %s dimension", s.Record, m.Name, StageDimension)
			}
			if prev, ok := byName[c.Name]; ok && (prev.Unit != c.Unit || !slices.Equal(prev.Dimensions, c.Dimensions)) {
				return nil, fmt.Errorf("alarm: %s is read as %s %v by signal %s and as %s %v elsewhere", c.Name, c.Unit, c.Dimensions, s.Record, prev.Unit, prev.Dimensions)
			}
			byName[c.Name] = c
		}
	}
	out := make([]Custom, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
