package asyncevent

import (
	"log/slog"
	"time"
)

// The roles' configs share these defaults (applied by their withDefaults).

// defaultNow returns now, or time.Now when it is nil.
func defaultNow(now func() time.Time) func() time.Time {
	if now == nil {
		return time.Now
	}
	return now
}

// defaultLog returns log, or slog.Default() when it is nil.
func defaultLog(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.Default()
	}
	return log
}
