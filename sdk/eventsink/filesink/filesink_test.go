package filesink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pacerhq/pacer/sdk/eventsink"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
)

func batch(t *testing.T, from, n int) []eventsink.Envelope {
	var out []eventsink.Envelope
	for i := from; i < from+n; i++ {
		ev, err := eventsink.New(fmt.Sprintf("id-%03d", i), "test", "Thing", time.Unix(1700000000, 0), map[string]int{"n": i})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

// objects reads every object under dir/events: path (below events/) →
// envelopes. Every line must be a whole JSON envelope.
func objects(t *testing.T, dir string) map[string][]eventsink.Envelope {
	t.Helper()
	objs, err := filesink.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]eventsink.Envelope{}
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Path, "events/")
		for _, line := range o.Lines {
			var ev eventsink.Envelope
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("%s: a line that is not an envelope: %q", rel, line)
			}
			out[rel] = append(out[rel], ev)
		}
	}
	return out
}

func ids(objs map[string][]eventsink.Envelope) map[string]int {
	out := map[string]int{}
	for _, evs := range objs {
		for _, ev := range evs {
			out[ev.ID]++
		}
	}
	return out
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Objects appear when the buffer is full, in the partition of their oldest
// record's arrival (UTC), and nothing is visible before.
func TestBuffersBySizeIntoPartitions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := &clock{t: time.Date(2026, 11, 26, 23, 59, 58, 0, time.FixedZone("KST", 9*3600))}
	s, err := filesink.Open(filesink.Config{Dir: dir, BufferBytes: 1500, BufferInterval: time.Hour, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, batch(t, 0, 3)); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, dir); len(got) != 0 {
		t.Fatalf("objects before the buffer is full: %v", got)
	}
	if err := s.Put(ctx, batch(t, 3, 10)); err != nil { // > 1500 bytes
		t.Fatal(err)
	}
	got := objects(t, dir)
	if len(got) != 1 {
		t.Fatalf("%d objects, want 1", len(got))
	}
	for path, evs := range got {
		if want := "dt=2026-11-26/hour=14/pacer-events-1-2026-11-26-14-59-58-"; path[:len(want)] != want || len(evs) != 13 {
			t.Errorf("object %s with %d events; want %s… with 13", path, len(evs), want)
		}
	}
	clk.add(2 * time.Hour)
	if err := s.Put(ctx, batch(t, 13, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got = objects(t, dir)
	if len(got) != 2 || len(ids(got)) != 14 {
		t.Fatalf("after Close: %d objects holding %d events, want 2 holding 14", len(got), len(ids(got)))
	}
	for path := range got {
		if filepath.Dir(path) != "dt=2026-11-26/hour=14" && filepath.Dir(path) != "dt=2026-11-26/hour=16" {
			t.Errorf("object in %s", path)
		}
	}
}

// The interval flushes a buffer that never fills.
func TestFlushesOnInterval(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := &clock{t: time.Now()}
	s, err := filesink.Open(filesink.Config{Dir: dir, BufferInterval: 40 * time.Millisecond, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(context.Background(), batch(t, 0, 2)); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for len(objects(t, dir)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no object 10 s after the buffer interval passed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fullDisk fails writes once more than limit bytes were written, after
// writing part of them, as a full disk does.
type fullDisk struct {
	*os.File
	limit   *atomic.Int64
	written int64
}

func (f *fullDisk) Write(b []byte) (int, error) {
	room := f.limit.Load() - f.written
	if int64(len(b)) <= room {
		n, err := f.File.Write(b)
		f.written += int64(n)
		return n, err
	}
	n, _ := f.File.Write(b[:max(room, 0)])
	f.written += int64(n)
	return n, syscall.ENOSPC
}

func (f *fullDisk) Truncate(size int64) error {
	f.written = size
	if err := f.File.Truncate(size); err != nil {
		return err
	}
	_, err := f.File.Seek(size, 0)
	return err
}

// A full disk fails the Put and leaves no partial line; the batch sent
// again once there is room is written once, whole.
func TestFullDiskLeavesWholeLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	limit := &atomic.Int64{}
	limit.Store(300)
	s, err := filesink.Open(filesink.Config{Dir: dir, Create: func(name string) (filesink.File, error) {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		return &fullDisk{File: f, limit: limit}, err
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Put(ctx, batch(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, batch(t, 1, 5)); err == nil {
		t.Fatal("a write to a full disk succeeded")
	}
	limit.Store(1 << 20)
	if err := s.Put(ctx, batch(t, 1, 5)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got := ids(objects(t, dir))
	for i := range 6 {
		if id := fmt.Sprintf("id-%03d", i); got[id] != 1 {
			t.Errorf("%s written %d times", id, got[id])
		}
	}
}

// A spool file left by a process that died is published at the next
// Open, cut to its last whole line.
func TestOpenRecoversTheSpool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".spool"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(batch(t, 0, 1)[0])
	body := append(append(b, '\n'), []byte(`{"version":"0","id":"half`)...)
	if err := os.WriteFile(filepath.Join(dir, ".spool", "pacer-events-1-2026-01-02-03-04-05-abc"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := filesink.Open(filesink.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := objects(t, dir)
	if evs := got["dt=2026-01-02/hour=03/pacer-events-1-2026-01-02-03-04-05-abc"]; len(got) != 1 || len(evs) != 1 || evs[0].ID != "id-000" {
		t.Fatalf("recovered %v", got)
	}
}
