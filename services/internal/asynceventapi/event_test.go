package asynceventapi_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/auth"
)

// The create-event schema says what the domain enforces: capacity and
// winners are 1..MaxCapacity and 1..MaxWinners when present, and neither
// is required (each belongs to one event type).
func TestCreateEventSchemaBounds(t *testing.T) {
	e := newAPI(t, false)
	s := e.api.OpenAPI().Components.Schemas.Map()["NewEventBody"]
	if s == nil {
		t.Fatal("no NewEventBody schema")
	}
	for name, max := range map[string]float64{"capacityTotal": asyncevent.MaxCapacity, "winners": asyncevent.MaxWinners, "indexShards": asyncevent.MaxIndexShards} {
		p := s.Properties[name]
		if p == nil || p.Minimum == nil || *p.Minimum != 1 || p.Maximum == nil || *p.Maximum != max {
			t.Errorf("%s: schema %+v, want minimum 1, maximum %v", name, p, max)
		}
		if slices.Contains(s.Required, name) {
			t.Errorf("%s is required", name)
		}
	}
}

// An invalid event's 422 names the field, as schema errors do.
func TestInvalidEventNamesTheField(t *testing.T) {
	t.Parallel()
	e := newAPI(t, false)
	adm := token(t, "root", auth.RoleAdmin)
	future := time.Now().Add(time.Hour).UnixMilli()
	past := time.Now().Add(-time.Hour).UnixMilli()
	for _, c := range []struct {
		body     map[string]any
		location string
	}{
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME", "capacityTotal": 0}, "body.capacityTotal"},
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME"}, "body.capacityTotal"},
		{map[string]any{"eventId": "a", "eventType": "LOTTERY", "lotteryCutoffAt": future, "winners": 0}, "body.winners"},
		{map[string]any{"eventId": "a", "eventType": "LOTTERY", "lotteryCutoffAt": future}, "body.winners"},
		{map[string]any{"eventId": "a", "eventType": "LOTTERY", "lotteryCutoffAt": past, "winners": 1}, "body.lotteryCutoffAt"},
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME", "capacityTotal": 1, "winners": 3}, "body.winners"},
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME", "capacityTotal": 1, "closesAt": past}, "body.closesAt"},
		{map[string]any{"eventId": "a", "eventType": "LOTTERY", "lotteryCutoffAt": future, "winners": 1, "capacityTotal": 5}, "body.capacityTotal"},
		{map[string]any{"eventId": "a", "eventType": "LOTTERY", "lotteryCutoffAt": future, "winners": 1, "announcedAt": future - 1}, "body.announcedAt"},
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME", "capacityTotal": 1, "title": "a\u0085b"}, "body.title"},
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME", "capacityTotal": 1, "indexShards": 0}, "body.indexShards"},
		{map[string]any{"eventId": "a", "eventType": "FIRST_COME", "capacityTotal": 1, "indexShards": 33}, "body.indexShards"},
		{map[string]any{"eventId": "a", "eventType": "LOTTERY", "lotteryCutoffAt": future, "winners": 1, "indexShards": 4}, "body.indexShards"},
	} {
		resp := e.api.Post("/admin/events", adm, c.body)
		expect(t, resp, http.StatusUnprocessableEntity)
		p := decode[struct {
			Detail string
			Errors []struct{ Location, Message string }
		}](t, resp)
		if len(p.Errors) != 1 || p.Errors[0].Location != c.location || p.Errors[0].Message == "" {
			t.Errorf("%v: %s, want one error at %s", c.body, resp.Body.String(), c.location)
		}
	}
}
