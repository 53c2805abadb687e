// Package schematest checks events against the published contract,
// docs/events.schema.json, with a JSON Schema (2020-12) validator, and
// checks what the schema cannot say: detail-type equals detail.eventKind
// and the envelope id equals detail.id.
package schematest

import (
	"bytes"
	"encoding/json"
	"os"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pacerhq/pacer/internal/repo"
	"github.com/pacerhq/pacer/sdk/eventsink"
)

// Path is the schema file's path (docs/events.schema.json in the
// repository), or "" when the repository is not above the working
// directory (loading it then fails, naming the cause).
func Path() string {
	p, err := repo.File("docs", "events.schema.json")
	if err != nil {
		return ""
	}
	return p
}

var (
	once     sync.Once
	compiled *jsonschema.Schema
	errLoad  error
)

func schema() (*jsonschema.Schema, error) {
	once.Do(func() {
		f, err := os.Open(Path())
		if err != nil {
			errLoad = err
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			errLoad = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if errLoad = c.AddResource("events.schema.json", doc); errLoad != nil {
			return
		}
		compiled, errLoad = c.Compile("events.schema.json")
	})
	return compiled, errLoad
}

// ValidateJSON checks one event, as the JSON line a sink writes.
func ValidateJSON(line []byte) error {
	s, err := schema()
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		return err
	}
	if err := s.Validate(inst); err != nil {
		return err
	}
	var ev struct {
		ID         string `json:"id"`
		DetailType string `json:"detail-type"`
		Detail     struct {
			ID        string `json:"id"`
			EventKind string `json:"eventKind"`
		} `json:"detail"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return err
	}
	if ev.DetailType != ev.Detail.EventKind || ev.ID != ev.Detail.ID {
		return &mismatch{line: string(line)}
	}
	return nil
}

type mismatch struct{ line string }

func (m *mismatch) Error() string {
	return "detail-type differs from detail.eventKind or id from detail.id: " + m.line
}

// Validate fails t for every event of evs that breaks the contract.
func Validate(t testing.TB, evs []eventsink.Envelope) {
	t.Helper()
	for _, ev := range evs {
		b, err := json.Marshal(&ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateJSON(b); err != nil {
			t.Errorf("event %s (%s) breaks docs/events.schema.json: %v", ev.ID, ev.DetailType, err)
		}
	}
}
