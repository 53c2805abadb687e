package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"

	_ "github.com/pacerhq/pacer/services/internal/server" // installs the clipping huma.NewError
)

// A problem response does not echo a huge offending value back whole.
func TestProblemClipsEchoedValues(t *testing.T) {
	_, api := humatest.New(t)
	huma.Register(api, huma.Operation{OperationID: "echo", Method: http.MethodPost, Path: "/echo"},
		func(ctx context.Context, in *struct {
			Body struct {
				Name string   `json:"name" maxLength:"10"`
				Tags []string `json:"tags" maxItems:"2"`
			}
		}) (*struct{}, error) {
			return nil, nil
		})
	long := strings.Repeat("é", 5000)
	tags := `["` + strings.Repeat(`a","`, 999) + `a"]`
	resp := api.Post("/echo", strings.NewReader(`{"name":"`+long+`","tags":`+tags+`}`))
	body := resp.Body.String()
	if resp.Code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d: %.300s", resp.Code, body)
	}
	if len(body) > 2000 {
		t.Fatalf("problem response is %d bytes: the value was echoed whole", len(body))
	}
	for _, want := range []string{"body.name", "body.tags", "(10000 bytes)", "(1000 items)"} {
		if !strings.Contains(body, want) {
			t.Errorf("response lacks %q: %s", want, body)
		}
	}
}
