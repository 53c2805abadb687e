package asyncevent

import (
	"context"
	"time"
)

// runKicked is the loop of a role that works on the events its process
// is told of (kicks): every `every`, it runs run for each event kicked
// (last: when it was last kicked), and forgets the event when run says
// not to keep it, until ctx ends. The Allocator and the LineKeeper run
// it.
func runKicked(ctx context.Context, kicks <-chan string, every time.Duration, run func(id string, last time.Time) (keep bool)) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	active := map[string]time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-kicks:
			active[id] = time.Now()
			continue
		case <-tick.C:
		}
		for id, last := range active {
			if !run(id, last) {
				delete(active, id)
			}
		}
	}
}
