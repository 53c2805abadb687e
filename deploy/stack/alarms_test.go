package stack_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/alarm"
)

// awsMetric is what AWS documents of one of its metrics: the dimension
// sets it is published with, and the statistics that mean something.
type awsMetric struct {
	dims  [][]string // each sorted
	stats []string
}

var (
	countStats = []string{"Sum", "SampleCount"}
	gaugeStats = []string{"Average", "Maximum", "Minimum"}
	queueDims  = [][]string{{"QueueName"}}
	lbDims     = [][]string{{"LoadBalancer"}, {"AvailabilityZone", "LoadBalancer"}}
	tgDims     = [][]string{{"LoadBalancer", "TargetGroup"}, {"AvailabilityZone", "LoadBalancer", "TargetGroup"}}
	tableDims  = [][]string{{"TableName"}, {"GlobalSecondaryIndexName", "TableName"}}
)

// awsMetrics are the AWS metrics an alarm may read, as AWS's CloudWatch
// pages for each service list them (the load balancer's own 5xx have no
// target group: some are answered before a target is chosen).
var awsMetrics = map[string]awsMetric{
	"AWS/SQS ApproximateNumberOfMessagesVisible":    {queueDims, gaugeStats},
	"AWS/SQS ApproximateNumberOfMessagesNotVisible": {queueDims, gaugeStats},
	"AWS/SQS ApproximateAgeOfOldestMessage":         {queueDims, gaugeStats},
	"AWS/SQS NumberOfMessagesDeleted":               {queueDims, countStats},
	"AWS/ApplicationELB HTTPCode_Target_5XX_Count":  {append(slices.Clone(lbDims), tgDims...), countStats},
	"AWS/ApplicationELB RequestCount":               {append(slices.Clone(lbDims), tgDims...), countStats},
	"AWS/ApplicationELB HTTPCode_ELB_5XX_Count":     {lbDims, countStats},
	"AWS/ApplicationELB HealthyHostCount":           {tgDims, gaugeStats},
	"AWS/ApplicationELB UnHealthyHostCount":         {tgDims, gaugeStats},
	"AWS/ApplicationELB TargetResponseTime":         {append(slices.Clone(lbDims), tgDims...), append(slices.Clone(gaugeStats), "p50", "p90", "p95", "p99")},
	"AWS/DynamoDB ReadThrottleEvents":               {tableDims, countStats},
	"AWS/DynamoDB WriteThrottleEvents":              {tableDims, countStats},
	"AWS/Firehose DeliveryToS3.Success":             {[][]string{{"DeliveryStreamName"}}, []string{"Average", "Sum", "Minimum"}},
	"AWS/Firehose DeliveryToS3.DataFreshness":       {[][]string{{"DeliveryStreamName"}}, gaugeStats},
	"ECS/ContainerInsights RunningTaskCount":        {[][]string{{"ClusterName", "ServiceName"}}, gaugeStats},
}

// alarmMetric is one metric an alarm of a template reads.
type alarmMetric struct {
	alarm, namespace, name, stat, missing string
	dims                                  []string // sorted
}

// alarmMetrics lists every metric every alarm of tpl reads.
func alarmMetrics(tpl map[string]any) []alarmMetric {
	var out []alarmMetric
	for id, r := range asMap(tpl["Resources"]) {
		if asMap(r)["Type"] != "AWS::CloudWatch::Alarm" {
			continue
		}
		props := asMap(asMap(r)["Properties"])
		for _, q := range asList(props["Metrics"]) {
			ms := asMap(asMap(q)["MetricStat"])
			if ms == nil {
				continue
			}
			m := asMap(ms["Metric"])
			am := alarmMetric{alarm: id, namespace: fmt.Sprint(m["Namespace"]), name: fmt.Sprint(m["MetricName"]),
				stat: fmt.Sprint(ms["Stat"]), missing: fmt.Sprint(props["TreatMissingData"])}
			for _, d := range asList(m["Dimensions"]) {
				am.dims = append(am.dims, fmt.Sprint(asMap(d)["Name"]))
			}
			sort.Strings(am.dims)
			out = append(out, am)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].alarm+out[i].name < out[j].alarm+out[j].name })
	return out
}

// awsMetricProblems says which alarm reads an AWS metric AWS does not
// publish: an unknown name, a dimension set it is not published with, a
// statistic that means nothing for it; or a namespace that is neither
// AWS's nor Pacer's (whose metrics services/dev's EMF test checks).
func awsMetricProblems(ms []alarmMetric) []string {
	var out []string
	for _, m := range ms {
		if m.namespace == alarm.Namespace {
			continue
		}
		doc, ok := awsMetrics[m.namespace+" "+m.name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s reads %s %s, which is not a documented AWS metric", m.alarm, m.namespace, m.name))
		case !slices.ContainsFunc(doc.dims, func(d []string) bool { return slices.Equal(d, m.dims) }):
			out = append(out, fmt.Sprintf("%s reads %s with dimensions %v; AWS publishes it with %v", m.alarm, m.name, m.dims, doc.dims))
		case !slices.Contains(doc.stats, m.stat):
			out = append(out, fmt.Sprintf("%s reads the %s of %s; meaningful: %v", m.alarm, m.stat, m.name, doc.stats))
		}
		if m.missing == "breaching" {
			out = append(out, fmt.Sprintf("%s treats missing data as breaching, but AWS publishes %s only when there is something to count", m.alarm, m.name))
		}
	}
	return out
}

// Every alarm of the committed template reads an AWS metric the way AWS
// publishes it, or one of Pacer's (services/dev's TestEveryAlarmReadsAnEmittedMetric).
func TestAlarmsReadPublishedAWSMetrics(t *testing.T) {
	ms := alarmMetrics(readTemplateNumbers(t))
	if len(ms) == 0 {
		t.Fatal("the template has no alarm")
	}
	for _, p := range awsMetricProblems(ms) {
		t.Error(p)
	}
}

// The check refuses an alarm on a metric AWS does not publish that way.
func TestAWSMetricCheckRefusesMistakes(t *testing.T) {
	good := alarmMetric{alarm: "A", namespace: "AWS/ApplicationELB", name: "HTTPCode_ELB_5XX_Count", stat: "Sum", missing: "notBreaching", dims: []string{"LoadBalancer"}}
	if p := awsMetricProblems([]alarmMetric{good}); len(p) > 0 {
		t.Fatalf("a valid metric is refused: %v", p)
	}
	for name, mutate := range map[string]func(*alarmMetric){
		"a target group on the load balancer's own 5xx": func(m *alarmMetric) { m.dims = []string{"LoadBalancer", "TargetGroup"} },
		"a misspelt name":                    func(m *alarmMetric) { m.name = "HTTPCode_ELB_5xx_Count" },
		"an unknown namespace":               func(m *alarmMetric) { m.namespace = "AWS/ELB" },
		"the average of a count":             func(m *alarmMetric) { m.stat = "Average" },
		"missing AWS data counted breaching": func(m *alarmMetric) { m.missing = "breaching" },
	} {
		m := good
		mutate(&m)
		if p := awsMetricProblems([]alarmMetric{m}); len(p) == 0 {
			t.Errorf("%s: accepted (%+v)", name, m)
		}
	}
}

// Each alert has its alarms: one per public service when it reads a
// target group, one per table when it reads a table, else one.
func TestAlarmPerScope(t *testing.T) {
	tpl := readTemplateNumbers(t)
	ids := map[string]bool{}
	for id, r := range asMap(tpl["Resources"]) {
		if asMap(r)["Type"] == "AWS::CloudWatch::Alarm" {
			ids[id] = true
		}
	}
	for _, want := range []string{
		"APINoHealthyTargetAsyncEventApiAlarm", "APINoHealthyTargetPhotoApiAlarm",
		"DynamoDBThrottledAsyncEventTableAlarm", "DynamoDBThrottledPhotoTableAlarm", "DynamoDBThrottledCheckpointTableAlarm",
		"LoadBalancer5xxRatioHighAlarm", "CapacityInvariantBrokenAlarm", "EventsPublisherLagHighAlarm",
		"APILatencyHighAsyncEventApiAlarm", "APILatencyHighPhotoApiAlarm", "APITargetsUnhealthyPhotoApiAlarm",
		"HTTP401RatioHighAsyncEventApiAlarm", "HTTP401RatioHighPhotoApiAlarm", "HTTP4xxRatioHighPhotoApiAlarm",
		"DynamoDBSystemErrorsAlarm", "WorkersAtMaximumAlarm", "AuthKeySetMissingAlarm", "AuthKeySetRefreshFailingAlarm", "HumanCheckUnavailableAlarm",
	} {
		if !ids[want] {
			t.Errorf("no alarm %s", want)
		}
	}
	n, tables := 0, 0
	for id := range ids {
		if strings.HasPrefix(id, "DynamoDBThrottled") {
			n++
		}
	}
	for _, r := range asMap(tpl["Resources"]) {
		if asMap(r)["Type"] == "AWS::DynamoDB::Table" {
			tables++
		}
	}
	if n != tables || tables < 4 {
		t.Errorf("%d DynamoDBThrottled alarms, want one per table (%d: the three of the data and the replicas')", n, tables)
	}
}
