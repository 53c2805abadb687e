package asynceventapi_test

import (
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
)

// deps are the API's Deps over env's roles, as the API process builds
// them (asynceventbackend.OpenAPI).
func deps(env *asynceventtest.Env) asynceventapi.Deps {
	return asynceventapi.Deps{Ingest: env.Ingest, Query: env.Query, Admin: env.Admin, Operations: env.Operations}
}

func asyncevent_firstCome(id string) asyncevent.NewEvent {
	return asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: 10, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}
}
