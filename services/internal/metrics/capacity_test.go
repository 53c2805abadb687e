package metrics_test

import (
	"testing"

	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
)

// The consumed-capacity setting: auto is off when the DynamoDB endpoint is
// local and on otherwise (AWS); an explicit value wins either way.
func TestConsumedCapacitySetting(t *testing.T) {
	for _, c := range []struct {
		endpoint, value string
		want            bool
	}{
		{"http://127.0.0.1:8000", "", false},
		{"http://localhost:8000", "auto", false},
		{"", "", true},
		{"https://dynamodb.eu-west-1.amazonaws.com", "", true},
		{"http://127.0.0.1:8000", "true", true},
		{"", "false", false},
	} {
		t.Setenv("AWS_ENDPOINT_URL", "")
		t.Setenv("AWS_ENDPOINT_URL_SQS", "")
		t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", c.endpoint)
		var on bool
		s := config.NewSet("test")
		metrics.DeclareConsumedCapacity(s, &on)
		env := map[string]string{"PACER_CONSUMED_CAPACITY": c.value}
		if err := s.Parse(nil, func(k string) string { return env[k] }); err != nil {
			t.Fatal(err)
		}
		if on != c.want {
			t.Errorf("endpoint %q, PACER_CONSUMED_CAPACITY=%q: consumed capacity %v, want %v", c.endpoint, c.value, on, c.want)
		}
	}
}
