package dynamostore

import (
	"context"
	"iter"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// The open events are listed in one base-table partition, so that the
// capacity check finds them with a Query instead of scanning the table
// (EventConfig items may carry no index keys: GSIs are on Request items
// only). An event's OpenEvent item is written with the event (events are
// created OPEN) and deleted in the same write that moves it out of OPEN
// (a close, or the start of a draw), so it is exact by construction. The
// partition takes one write per event created and one per event closed.
//
//	OpenEvent  EVENTS#OPEN / EVENT#<eventId>
var (
	openPK = "EVENTS#OPEN"
	openSK = ddb.MustFormat("EVENT#{eventId}")
)

// OpenEventItem is an OpenEvent item: an event that is OPEN.
type OpenEventItem struct {
	EventID   string               `dynamodbav:"eventId"`
	EventType asyncevent.EventType `dynamodbav:"eventType"`
	// EndsAt is the event's EventConfig.EndsAt (epoch millis).
	EndsAt int64 `dynamodbav:"endsAt"`
	// TTL is the event's: the item goes with it if it is never closed.
	TTL int64 `dynamodbav:"ttl,omitempty"`
}

func openKey(eventID string) ddb.Key { return ddb.Key{PK: openPK, SK: openSK.Build(eventID)} }

// OpenEvents implements asyncevent.CapacityReader with a Query of the open
// events' partition.
func (s *Store) OpenEvents(ctx context.Context, eventType asyncevent.EventType) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for it, err := range s.open.Query("", openPK).BeginsWith(openSK.Prefix()).Limit(ddb.MaxPageSize).All(ctx) {
			if err != nil {
				yield("", err)
				return
			}
			if it.EventType == eventType && !yield(it.EventID, nil) {
				return
			}
		}
	}
}
