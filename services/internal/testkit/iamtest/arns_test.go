package iamtest

import "testing"

func TestARNs(t *testing.T) {
	a := testARNs
	for got, want := range map[string]string{
		a.Table("T"):         "arn:aws:dynamodb:us-east-1:000000000000:table/T",
		a.Index("T", "GSI1"): "arn:aws:dynamodb:us-east-1:000000000000:table/T/index/GSI1",
		a.Stream("T"):        "arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/1970-01-01T00:00:00.000",
		a.Queue("q"):         "arn:aws:sqs:us-east-1:000000000000:q",
		a.Bus("b"):           "arn:aws:events:us-east-1:000000000000:event-bus/b",
		a.Bus(""):            "arn:aws:events:us-east-1:000000000000:event-bus/default",
		ARNs{"aws-cn", "cn-north-1", "1"}.Table("T"): "arn:aws-cn:dynamodb:cn-north-1:1:table/T",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

// Names, URLs and ARNs from inputs map to the canonical ARNs, whatever
// region, account or stream label they carry.
func TestCanonical(t *testing.T) {
	a := testARNs
	cases := []struct {
		name string
		f    func(string) (string, error)
		in   string
		want string // "" for an error
	}{
		{"table name", a.table, "T", a.Table("T")},
		{"table ARN", a.table, "arn:aws:dynamodb:ddblocal:000000000000:table/T", a.Table("T")},
		{"not a table ARN", a.table, "arn:aws:sqs:us-east-1:0:T", ""},
		{"empty table", a.table, "", ""},
		{"stream ARN", a.stream, "arn:aws:dynamodb:ddblocal:000000000000:table/T/stream/2024-02-12T18:57:26.492", a.Stream("T")},
		{"table ARN as a stream", a.stream, "arn:aws:dynamodb:us-east-1:0:table/T", ""},
		{"local queue URL", a.queueURL, "http://127.0.0.1:9324/000000000000/q", a.Queue("q")},
		{"AWS queue URL", a.queueURL, "https://sqs.eu-west-1.amazonaws.com/123456789012/q", a.Queue("q")},
		{"queue name as a URL", a.queueURL, "q", ""},
		{"queue ARN", a.queueARN, "arn:aws:sqs:eu-west-1:123456789012:dlq", a.Queue("dlq")},
		{"table ARN as a queue", a.queueARN, "arn:aws:dynamodb:us-east-1:0:table/T", ""},
		{"bus name", a.bus, "b", a.Bus("b")},
		{"no bus", a.bus, "", a.Bus("default")},
		{"bus ARN", a.bus, "arn:aws:events:eu-west-1:123456789012:event-bus/b", a.Bus("b")},
		{"rule ARN as a bus", a.bus, "arn:aws:events:eu-west-1:123456789012:rule/r", ""},
	}
	for _, c := range cases {
		got, err := c.f(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: %q gives %s, want an error", c.name, c.in, got)
		case c.want != "" && (err != nil || got != c.want):
			t.Errorf("%s: %q gives %s, %v; want %s", c.name, c.in, got, err, c.want)
		}
	}
}
