package stack

import (
	"fmt"
	"math"
	"testing"
)

// stepProblems checks a spike policy's adjustments for an alarm whose
// threshold is min: contiguous bands from 0 up, the last open-ended, at
// most maxStepAdjustments of them, and for every desired count v the
// workers can publish (min+1..max, and min, which a policy invoked on an
// older breaching datapoint reads) a band setting at least v tasks;
// exactly v while the counts fit one band each.
func stepProblems(min, max int, steps []any) []string {
	var problems []string
	if len(steps) > maxStepAdjustments {
		problems = append(problems, fmt.Sprintf("%d adjustments, the quota is %d", len(steps), maxStepAdjustments))
	}
	prev := 0.0
	for i, st := range steps {
		st := st.(map[string]any)
		lo, _ := st["MetricIntervalLowerBound"].(float64)
		hi, hasHi := st["MetricIntervalUpperBound"].(float64)
		if lo != prev || (i < len(steps)-1) != hasHi {
			problems = append(problems, fmt.Sprintf("band %d [%v, %v) does not follow %v, or its upper bound is wrong", i, lo, st["MetricIntervalUpperBound"], prev))
		}
		prev = hi
	}
	for v := min; v <= max; v++ {
		excess := float64(v - min)
		got := -1
		for i, st := range steps {
			st := st.(map[string]any)
			lo, _ := st["MetricIntervalLowerBound"].(float64)
			hi, ok := st["MetricIntervalUpperBound"].(float64)
			if !ok {
				hi = math.Inf(1)
			}
			if excess >= lo && excess < hi {
				got = max
				if i < len(steps)-1 {
					got = st["ScalingAdjustment"].(int)
				}
				break
			}
		}
		exact := max-min <= maxStepAdjustments && v > min
		if got < v || (exact && got != v) || got < min+1 {
			problems = append(problems, fmt.Sprintf("desired %d sets %d tasks", v, got))
		}
	}
	return problems
}

func TestSpikeSteps(t *testing.T) {
	for _, c := range [][2]int{{1, 20}, {1, 2}, {2, 5}, {1, 21}, {1, 45}, {3, 100}} {
		if p := stepProblems(c[0], c[1], spikeSteps(c[0], c[1], c[1])); len(p) > 0 {
			t.Errorf("spikeSteps(%d, %d): %v", c[0], c[1], p)
		}
	}
	// The check finds wrong adjustments: a band setting one task too few,
	// a gap between bands, and one adjustment too many.
	short := spikeSteps(1, 20, 20)
	short[4].(map[string]any)["ScalingAdjustment"] = 5
	gap := spikeSteps(1, 20, 20)
	gap[7].(map[string]any)["MetricIntervalLowerBound"] = 8.0
	var many []any // 21 exact bands for 2..22
	for k := 2; k <= 22; k++ {
		st := map[string]any{"MetricIntervalLowerBound": float64(k-1) - 0.5, "ScalingAdjustment": k}
		if k == 2 {
			st["MetricIntervalLowerBound"] = 0.0
		}
		if k < 22 {
			st["MetricIntervalUpperBound"] = float64(k-1) + 0.5
		}
		many = append(many, st)
	}
	for name, c := range map[string]struct {
		max   int
		steps []any
	}{"short": {20, short}, "gap": {20, gap}, "many": {22, many}} {
		if p := stepProblems(1, c.max, c.steps); len(p) == 0 {
			t.Errorf("%s: no problem found", name)
		} else {
			t.Logf("%s: %v", name, p)
		}
	}
}
