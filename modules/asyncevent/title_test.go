package asyncevent_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
)

// A title's 200-character limit counts characters (code points), as the
// API's schema (maxLength) does, not bytes: 200 Hangul syllables (600
// bytes), emoji (800 bytes) or letters with a combining mark (two code
// points each) are accepted, one more character is refused.
func TestTitleLimitCountsCharacters(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	for i, c := range []struct {
		name  string
		title string
		ok    bool
	}{
		{"200 Hangul", strings.Repeat("가", 200), true},
		{"200 emoji", strings.Repeat("👍", 200), true},
		{"100 e + combining acute", strings.Repeat("e\u0301", 100), true},
		{"201 Hangul", strings.Repeat("가", 201), false},
		{"101 e + combining acute", strings.Repeat("e\u0301", 101), false},
	} {
		_, err := env.Admin.CreateEvent(ctx, asyncevent.NewEvent{
			EventID: "t" + string(rune('a'+i)), EventType: asyncevent.FirstCome, Capacity: 1, Title: c.title,
			ClosesAt: time.Now().Add(time.Hour).UnixMilli(),
		})
		var ee *asyncevent.EventError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && (!errors.As(err, &ee) || ee.Field != "title" || !strings.Contains(ee.Reason, "200 characters")):
			t.Errorf("%s: %v, want an EventError for title naming 200 characters", c.name, err)
		}
	}
}
