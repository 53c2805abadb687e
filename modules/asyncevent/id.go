package asyncevent

import (
	"crypto/rand"
	"sync"

	"github.com/oklog/ulid/v2"
)

var entropy = ulid.Monotonic(rand.Reader, 0)
var entropyMu sync.Mutex

// newID returns a new ULID: 26 characters, sortable by creation time.
func newID(now int64) string {
	entropyMu.Lock()
	defer entropyMu.Unlock()
	return ulid.MustNew(uint64(now), entropy).String()
}
