package stack

import (
	"math"
	"time"

	"github.com/pacerhq/pacer/deploy/alarm"
	"github.com/pacerhq/pacer/sdk/autoscale"
)

// A second-by-second simulation of the worker pool under a spike on AWS,
// as the template scales it: the spike policy (workers publishing
// sdk/autoscale's held recommendation, the awslogs driver's flushes,
// CloudWatch Logs' extraction, the 10-second alarm on 10-second buckets,
// ExactCapacity with its cooldown), target tracking on one-minute
// backlog-per-task datapoints (three breaching ones to scale out, fifteen
// low ones to scale in), the pre-scale's scheduled minimum, ECS starting
// and stopping tasks, and the tasks draining the queue. Periodic processes
// tick at a phase the caller picks; a tick sees only what happened at
// earlier seconds, so the spike, arriving at second 0 after its ticks,
// waits 1 s to a whole period for each. spike_test.go runs it over every
// phase and compares with the model (spike.go).

// simPhases places the periodic processes: their ticks fall at seconds
// equal to the phase modulo the period.
type simPhases struct {
	publish, flush, alarm int // spike policy: PublishEvery, awslogsFlush, highResEvaluation
	minute, evaluate      int // tracking: where the minute buckets start, and its alarms' evaluations
}

// simResult is what one run measured, in seconds from the spike.
type simResult struct {
	firstNew int   // the first task beyond those running at the spike takes messages (0 if one already did)
	drained  int   // the queue is empty again
	atMin    int   // the desired count is back to Min for good
	desired  []int // the desired counts in order (consecutive repeats dropped)
}

// simulation is one run's state.
type simulation struct {
	cfg              autoscale.Config
	ctl              *autoscale.Controller
	ph               simPhases
	spikePolicy      bool
	min              int // the scalable target's MinCapacity now
	backlog, running int
	launching        []int // when each starting task will run
	desired          int
	initial          int // tasks running at the spike
	res              simResult
	clock            time.Time

	lines  []int        // published values not shipped yet, with their seconds
	linesT []int        // (parallel to lines)
	points map[int][]dp // 10-s buckets' values by start second
	high   alarmState   // the spike alarm
	end    alarmState   // the spike-end alarm
	minute map[int]*mb  // tracking's minute buckets by start second
	hi, lo alarmState   // tracking's AlarmHigh and AlarmLow

	lastOut, lastIn int // last scale-out and scale-in (cooldowns)
	pending         []action
}

// dp is a value of a 10-s bucket and when the alarm can first see it.
type dp struct{ value, available int }

// mb is a one-minute bucket: the highest backlog and the task-seconds.
type mb struct{ maxBacklog, taskSeconds, seconds int }

type alarmState struct {
	on         bool
	lastInvoke int
}

// action is a new desired count from a policy, applied handoff later.
type action struct{ at, desired int }

const (
	simFrom = -400 // before the spike (the pre-scale starts at -300)
	simTo   = 1800
	noTime  = math.MinInt32
)

// simulate runs the spike (messages at second 0) with the given policies;
// prescale, if above 0, is the pre-scale's minimum from second -300.
func simulate(messages int, spikePolicy bool, prescale int, ph simPhases) simResult {
	cfg := alarm.Defaults().Scaling
	s := &simulation{cfg: cfg, ph: ph, spikePolicy: spikePolicy, min: cfg.Min, running: cfg.Min, desired: cfg.Min,
		points: map[int][]dp{}, minute: map[int]*mb{}, lastOut: noTime, lastIn: noTime,
		clock: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	s.ctl, _ = autoscale.NewController(cfg, func() time.Time { return s.clock })
	s.res = simResult{firstNew: noTime, drained: noTime, atMin: noTime}
	for t := simFrom; t < simTo; t++ {
		s.clock = s.clock.Add(time.Second)
		if prescale > 0 && t == -300 { // PrescaleAt
			s.min = prescale
			s.pending = append(s.pending, action{t + int(handoff/time.Second), max(s.desired, prescale)})
		}
		if prescale > 0 && t == 600 { // PrescaleUntil
			s.min = s.cfg.Min
		}
		s.ticks(t)
		s.apply(t)
		if t == 0 {
			s.initial = s.running
			s.backlog += messages
		}
		s.drain(t)
	}
	return s.res
}

// ticks runs the periodic processes due at t, in pipeline order.
func (s *simulation) ticks(t int) {
	if s.spikePolicy {
		if mod(t-s.ph.flush, int(awslogsFlush/time.Second)) == 0 {
			s.ship(t)
		}
		if mod(t-s.ph.publish, int(autoscale.PublishEvery/time.Second)) == 0 {
			s.lines = append(s.lines, s.ctl.Hold(autoscale.Load{Visible: s.backlog, Running: s.running}))
			s.linesT = append(s.linesT, t)
		}
		if mod(t-s.ph.alarm, int(highResEvaluation/time.Second)) == 0 {
			s.spikeAlarm(t)
		}
	}
	if mod(t-s.ph.evaluate, int(minutePeriod/time.Second)) == 0 {
		s.trackingAlarms(t)
	}
}

// ship is an awslogs flush at t: the lines written so far (before t:
// ticks runs it before the publication of the same second) become
// datapoints of their 10-s buckets, available emfExtraction later.
func (s *simulation) ship(t int) {
	for i, v := range s.lines {
		at := s.linesT[i]
		b := at - mod(at, int(spikeAlarmPeriod/time.Second))
		s.points[b] = append(s.points[b], dp{v, t + int(emfExtraction/time.Second)})
	}
	s.lines, s.linesT = s.lines[:0], s.linesT[:0]
}

// spikeAlarm evaluates the spike and spike-end alarms at t on the last
// complete buckets available before t, and invokes their step policies on
// entering ALARM and once a minute while in it.
func (s *simulation) spikeAlarm(t int) {
	// The last spikeAlarmPeriods complete buckets that have data: with
	// TreatMissingData missing, CloudWatch looks back past empty ones
	// (here up to as many again).
	period := int(spikeAlarmPeriod / time.Second)
	var values []int // newest first
	for b := t - mod(t, period) - period; len(values) < spikeAlarmPeriods && b > t-3*spikeAlarmPeriods*period; b -= period {
		v, ok := 0, false // the bucket's Maximum of what has arrived
		for _, p := range s.points[b] {
			if p.available < t {
				v, ok = max(v, p.value), true
			}
		}
		if ok {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return // missing data: the state stays
	}
	breaching, atMin, latest := 0, 0, values[0]
	for _, v := range values {
		if v > s.cfg.Min {
			breaching++
		} else {
			atMin++
		}
	}
	invoke := func(a *alarmState, on bool, k int) {
		if on && (!a.on || t-a.lastInvoke >= int(minutePeriod/time.Second)) {
			a.lastInvoke = t
			s.exact(t, k)
		}
		a.on = on
	}
	invoke(&s.high, breaching >= spikeAlarmDatapoints, min(max(latest, s.cfg.Min+1), s.cfg.Max))
	invoke(&s.end, atMin == spikeAlarmPeriods, s.cfg.Min)
}

// exact is the step policy's ExactCapacity: out at once, in only after
// its cooldown since the last scaling.
func (s *simulation) exact(t, k int) {
	k = max(k, s.min)
	switch {
	case k > s.target():
		s.lastOut = t
		s.pending = append(s.pending, action{t + int(handoff/time.Second), k})
	case k < s.target() && t-max(s.lastOut, s.lastIn) >= int(spikeCooldown/time.Second):
		s.lastIn = t
		s.pending = append(s.pending, action{t + int(handoff/time.Second), k})
	}
}

// target is the desired count once the pending actions apply.
func (s *simulation) target() int {
	if len(s.pending) > 0 {
		return s.pending[len(s.pending)-1].desired
	}
	return s.desired
}

// trackingAlarms evaluates target tracking's two alarms at t on the
// minute buckets published before t.
func (s *simulation) trackingAlarms(t int) {
	per := int(minutePeriod / time.Second)
	target := s.cfg.TargetBacklogPerWorker()
	var values []float64 // newest first
	for b := s.lastMinute(t); len(values) < 15; b -= per {
		m := s.minute[b]
		if m == nil || m.seconds < per {
			break
		}
		values = append(values, float64(m.maxBacklog)/math.Max(1, float64(m.taskSeconds)/float64(per)))
	}
	all := func(n int, ok func(float64) bool) bool {
		if len(values) < n {
			return false
		}
		for _, v := range values[:n] {
			if !ok(v) {
				return false
			}
		}
		return true
	}
	s.hi.on = all(trackingDatapoints, func(v float64) bool { return v > target })
	s.lo.on = all(15, func(v float64) bool { return v < 0.9*target })
	if len(values) == 0 {
		return
	}
	want := min(max(int(math.Ceil(float64(s.target())*values[0]/target)), s.min), s.cfg.Max)
	switch {
	case s.hi.on && want > s.target() && t-s.lastOut >= int(scaleOutCooldown/time.Second):
		s.lastOut = t
		s.pending = append(s.pending, action{t + int(handoff/time.Second), want})
	case s.lo.on && want < s.target() && t-max(s.lastIn, s.lastOut) >= int(s.cfg.ScaleInWindow/time.Second):
		s.lastIn = t
		s.pending = append(s.pending, action{t + int(handoff/time.Second), want})
	}
}

// lastMinute is the start of the last minute bucket whose datapoint is
// published before t.
func (s *simulation) lastMinute(t int) int {
	per := int(minutePeriod / time.Second)
	start := t - per - int(metricDelay/time.Second) - 1 // published at start+per+delay, before t
	return start - mod(start-s.ph.minute, per)
}

// apply applies the actions due at t and has ECS start and stop tasks:
// starting ones run fargateStart later; stopping takes the newest first.
func (s *simulation) apply(t int) {
	for len(s.pending) > 0 && s.pending[0].at <= t {
		s.desired = s.pending[0].desired
		s.pending = s.pending[1:]
		if len(s.res.desired) == 0 || s.res.desired[len(s.res.desired)-1] != s.desired {
			s.res.desired = append(s.res.desired, s.desired)
		}
	}
	for s.running+len(s.launching) < s.desired {
		s.launching = append(s.launching, t+int(fargateStart/time.Second))
	}
	for s.running+len(s.launching) > s.desired {
		if n := len(s.launching); n > 0 {
			s.launching = s.launching[:n-1]
		} else {
			s.running--
		}
	}
	for len(s.launching) > 0 && s.launching[0] <= t {
		s.launching = s.launching[1:]
		s.running++
		if t >= 0 && s.res.firstNew == noTime && s.running > s.initial {
			s.res.firstNew = t
		}
	}
	if t == 0 && s.running > s.cfg.Min {
		s.res.firstNew = 0 // pre-scaled: new tasks are already there
	}
}

// drain has the running tasks work for second t, and records the
// tracking metric's minute bucket and the milestones.
func (s *simulation) drain(t int) {
	rate := s.cfg.Concurrency * int(time.Second/s.cfg.ProcessingTime)
	b := t - mod(t-s.ph.minute, int(minutePeriod/time.Second))
	m := s.minute[b]
	if m == nil {
		m = &mb{}
		s.minute[b] = m
	}
	m.maxBacklog, m.taskSeconds, m.seconds = max(m.maxBacklog, s.backlog), m.taskSeconds+s.running, m.seconds+1
	s.backlog = max(0, s.backlog-s.running*rate)
	if t > 0 && s.backlog == 0 && s.res.drained == noTime {
		s.res.drained = t
	}
	if s.desired == s.cfg.Min && len(s.pending) == 0 {
		if s.res.atMin == noTime && s.res.drained != noTime {
			s.res.atMin = t
		}
	} else {
		s.res.atMin = noTime
	}
}

func mod(a, b int) int { return ((a % b) + b) % b }
