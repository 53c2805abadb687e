package dynamostore

import (
	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
)

// RequestChange decodes a record of the table's stream. For a Request item
// it returns the request before the change (nil when it was created) and
// after it (nil when it was deleted) and ok; any other item is not ok.
func RequestChange(rec *stream.Record) (old, cur *asyncevent.Request, ok bool, err error) {
	if rec.String(entityTypeAttr) != RequestType {
		return nil, nil, false, nil
	}
	var before, after RequestItem
	hasOld, err := rec.DecodeOld(&before)
	if err != nil {
		return nil, nil, false, err
	}
	hasNew, err := rec.DecodeNew(&after)
	if err != nil {
		return nil, nil, false, err
	}
	if hasOld && rec.Kind != stream.Insert {
		old = before.request()
	}
	if hasNew {
		cur = after.request()
	}
	return old, cur, true, nil
}
