// Package filesink writes eventsink envelopes to a folder exactly as a
// Kinesis Data Firehose delivery stream (with an EventBridge rule as its
// source) writes them to S3: one JSON object per line, in objects under
//
//	events/dt=YYYY-MM-DD/hour=HH/
//
// (the prefix events/dt=!{timestamp:yyyy-MM-dd}/hour=!{timestamp:HH}/, UTC,
// from the arrival time of the oldest record in the object), named like
// Firehose's objects: <stream>-1-YYYY-MM-DD-HH-MM-SS-<random>.
//
// Like Firehose it buffers: an object is written when the buffer reaches
// Config.BufferBytes or its oldest record is Config.BufferInterval old
// (Firehose's buffering hints), and on Close. The buffer itself is on disk
// (under .spool/, which no reader globbing events/ sees): each Put appends
// its lines and fsyncs before it returns, so a Put that returned is never
// lost, even if the process dies. An object appears atomically, by a rename
// of the fsynced spool file; a reader never sees a half-written line. A
// failed write (a full disk) is cut back to the last complete line and
// reported, so the caller can send the batch again. Open promotes spool
// files left by a process that died.
package filesink

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pacerhq/pacer/sdk/eventsink"
)

// File is the part of *os.File the sink writes through (a test replaces
// it to simulate a full disk).
type File interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Config configures a Sink.
type Config struct {
	// Dir is the folder that plays the S3 bucket.
	Dir string
	// Stream names the objects, as a delivery stream's name does (default
	// "pacer-events").
	Stream string
	// BufferBytes and BufferInterval are the buffering hints (defaults
	// 5 MiB and 300 s, Firehose's defaults).
	BufferBytes    int
	BufferInterval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Create opens a new spool file (default os.OpenFile, 0644).
	Create func(name string) (File, error)
}

// Prefix is the object prefix Firehose is configured with.
const Prefix = "events/dt=!{timestamp:yyyy-MM-dd}/hour=!{timestamp:HH}/"

// Sink is the file sink. It is safe for concurrent use.
type Sink struct {
	cfg   Config
	spool string

	mu     sync.Mutex
	f      File
	name   string    // spool file name
	oldest time.Time // arrival of the oldest buffered record
	size   int64
	closed bool

	stop chan struct{}
	done chan struct{}
}

var _ eventsink.Sink = (*Sink)(nil)

// Open returns a sink writing under cfg.Dir, after promoting spool files
// a previous process left behind. Close it to write what is buffered.
func Open(cfg Config) (*Sink, error) {
	if cfg.Dir == "" {
		return nil, errors.New("filesink: Config.Dir is empty")
	}
	if cfg.Stream == "" {
		cfg.Stream = "pacer-events"
	}
	if cfg.BufferBytes <= 0 {
		cfg.BufferBytes = 5 << 20
	}
	if cfg.BufferInterval <= 0 {
		cfg.BufferInterval = 300 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Create == nil {
		cfg.Create = func(name string) (File, error) {
			return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		}
	}
	s := &Sink{cfg: cfg, spool: filepath.Join(cfg.Dir, ".spool"), stop: make(chan struct{}), done: make(chan struct{})}
	if err := os.MkdirAll(s.spool, 0o755); err != nil {
		return nil, fmt.Errorf("filesink: %w", err)
	}
	if err := s.recover(); err != nil {
		return nil, err
	}
	go s.timer()
	return s, nil
}

// Put implements eventsink.Sink: the events are on disk when it returns.
func (s *Sink) Put(_ context.Context, events []eventsink.Envelope) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one object and a newline each
	for i := range events {
		if err := enc.Encode(&events[i]); err != nil {
			return fmt.Errorf("filesink: encode %s: %w", events[i].ID, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("filesink: closed")
	}
	if s.f == nil {
		now := s.cfg.Now().UTC()
		s.name = fmt.Sprintf("%s-1-%s-%s", s.cfg.Stream, now.Format("2006-01-02-15-04-05"), random())
		f, err := s.cfg.Create(filepath.Join(s.spool, s.name))
		if err != nil {
			return fmt.Errorf("filesink: %w", err)
		}
		s.f, s.oldest, s.size = f, now, 0
	}
	_, err := s.f.Write(buf.Bytes())
	if err == nil {
		err = s.f.Sync()
	}
	if err != nil {
		// Cut the partial write off, so the spool holds whole lines only.
		if terr := s.f.Truncate(s.size); terr != nil {
			err = errors.Join(err, terr)
		}
		return fmt.Errorf("filesink: write: %w", err)
	}
	s.size += int64(buf.Len())
	if s.size >= int64(s.cfg.BufferBytes) {
		return s.flush()
	}
	return nil
}

// Flush writes the buffered records as an object now.
func (s *Sink) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flush()
}

// Close writes what is buffered and stops the sink.
func (s *Sink) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	return s.Flush()
}

// flush promotes the spool file to an object (s.mu held).
func (s *Sink) flush() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	if err != nil {
		return fmt.Errorf("filesink: %w", err)
	}
	return s.promote(s.name, s.oldest, s.size)
}

// promote renames a spool file into its partition (or removes it when
// empty) and fsyncs the partition folder.
func (s *Sink) promote(name string, oldest time.Time, size int64) error {
	src := filepath.Join(s.spool, name)
	if size == 0 {
		return os.Remove(src)
	}
	dir := filepath.Join(s.cfg.Dir, "events", "dt="+oldest.Format("2006-01-02"), "hour="+oldest.Format("15"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("filesink: %w", err)
	}
	if err := os.Rename(src, filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("filesink: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("filesink: %w", err)
	}
	defer d.Close()
	return d.Sync()
}

// timer flushes the buffer once its oldest record is BufferInterval old.
func (s *Sink) timer() {
	defer close(s.done)
	t := time.NewTicker(min(s.cfg.BufferInterval/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if s.f != nil && s.cfg.Now().Sub(s.oldest) >= s.cfg.BufferInterval {
				_ = s.flush() // a failure is retried by the next Put's flush or Close
			}
			s.mu.Unlock()
		}
	}
}

// recover promotes the spool files of a process that died, cut to their
// last complete line.
func (s *Sink) recover() error {
	ents, err := os.ReadDir(s.spool)
	if err != nil {
		return fmt.Errorf("filesink: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(s.spool, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("filesink: %w", err)
		}
		keep := bytes.LastIndexByte(b, '\n') + 1
		if keep < len(b) {
			if err := os.Truncate(path, int64(keep)); err != nil {
				return fmt.Errorf("filesink: %w", err)
			}
		}
		oldest, err := spoolTime(s.cfg.Stream, name)
		if err != nil {
			return err
		}
		if err := s.promote(name, oldest, int64(keep)); err != nil {
			return err
		}
	}
	return nil
}

// spoolTime is the creation time written in a spool file's name.
func spoolTime(stream, name string) (time.Time, error) {
	rest, ok := strings.CutPrefix(name, stream+"-1-")
	if !ok || len(rest) < len("2006-01-02-15-04-05") {
		return time.Time{}, fmt.Errorf("filesink: unexpected spool file %q", name)
	}
	return time.Parse("2006-01-02-15-04-05", rest[:len("2006-01-02-15-04-05")])
}

func random() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
