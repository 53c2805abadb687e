package asynceventapi_test

import (
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

func asyncevent_firstCome(id string) asyncevent.NewEvent {
	return asyncevent.NewEvent{EventID: id, EventType: asyncevent.FirstCome, Capacity: 10, ClosesAt: time.Now().Add(time.Hour).UnixMilli()}
}
