// Package asynceventevents runs the AsyncEvent analytics publisher: it reads
// AsyncEventTable's DynamoDB stream (sdk/ddb/stream, checkpointed in a
// table of its own), turns every Request change into the events of
// modules/asyncevent/analytics, and hands them to a sink: EventBridge
// (PutEvents, for AWS: a rule sends them to Firehose → S3) or the local
// file sink that writes Firehose's S3 layout (make run).
//
// Run it as one process per table (services/asyncevent-events; the dev
// runner runs one): the checkpoints carry no lease, and two publishers
// would each publish every event (harmless to the de-duplicating queries,
// but twice the cost). Delivery is at least once; a batch is checkpointed
// only after the sink took it. docs/events.md has the reasoning.
package asynceventevents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/pacerhq/pacer/modules/asyncevent"
	"github.com/pacerhq/pacer/modules/asyncevent/analytics"
	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/eventsink"
	"github.com/pacerhq/pacer/sdk/eventsink/ebsink"
	"github.com/pacerhq/pacer/sdk/eventsink/filesink"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/ops"
)

// Sink kinds (Config.SinkKind).
const (
	SinkEventBridge = "eventbridge"
	SinkFile        = "file"
)

// Config configures Run.
type Config struct {
	// Config names the table (and MaxReceives, for deadLettered) and
	// holds the AWS config, client overrides and logger.
	asynceventbackend.Config

	// CheckpointTable holds the stream checkpoints.
	CheckpointTable string
	// Consumer names this publisher's checkpoints.
	Consumer string
	// SinkKind is SinkEventBridge or SinkFile.
	SinkKind string
	// Bus is the EventBridge bus (SinkEventBridge).
	Bus string
	// Dir, BufferBytes and BufferInterval configure the file sink.
	Dir            string
	BufferBytes    int
	BufferInterval time.Duration
	// UserKey, when set, adds the keyed user hash to the events. It is a
	// secret: Run takes it from PACER_EVENTS_USER_KEY when empty, never
	// from a flag.
	UserKey string
	// Poll is the stream's idle poll interval.
	Poll time.Duration

	// OpsAddr is where /metrics (QueueDelay and E2EDelay, see Delays, and
	// the lag, see Lag),
	// /healthz and /readyz are served ("": no ops server); OpsListener,
	// if set, is used instead.
	OpsAddr     string
	OpsListener net.Listener

	// Streams and Sink override the clients built from AWS (tests).
	Streams stream.Client
	Sink    eventsink.Sink

	// Ready, if set, is called once the stream is found and reading starts.
	Ready func()
}

// Declare declares the publisher's settings, and the backend's, on s.
func (cfg *Config) Declare(s *config.Set) {
	cfg.Config.Declare(s)
	s.String(&cfg.CheckpointTable, "checkpoint-table", "PACER_EVENTS_CHECKPOINT_TABLE", "AsyncEventStreamCheckpoints", "DynamoDB table of the stream checkpoints")
	s.String(&cfg.Consumer, "consumer", "PACER_EVENTS_CONSUMER", "asyncevent-events", "name the checkpoints are saved under")
	s.String(&cfg.SinkKind, "sink", "PACER_EVENTS_SINK", SinkEventBridge, "where events go: eventbridge or file")
	s.String(&cfg.Bus, "bus", "PACER_EVENTS_BUS", "", "EventBridge bus name or ARN (empty: the default bus)")
	s.String(&cfg.Dir, "dir", "PACER_EVENTS_DIR", ".cache/dev/events", "folder of the file sink (it plays the S3 bucket)")
	s.Int(&cfg.BufferBytes, "buffer-bytes", "PACER_EVENTS_BUFFER_BYTES", 5<<20, "file sink: write an object when this many bytes are buffered")
	s.Duration(&cfg.BufferInterval, "buffer-interval", "PACER_EVENTS_BUFFER_INTERVAL", 300*time.Second, "file sink: write an object when its oldest event is this old")
	s.Duration(&cfg.Poll, "poll", "PACER_EVENTS_POLL", time.Second, "wait between reads of an idle stream shard")
	s.String(&cfg.OpsAddr, "ops-addr", "PACER_EVENTS_OPS_ADDR", DefaultOpsAddr, "where /metrics, /healthz and /readyz are served; -ops-addr= (empty) turns it off")
}

// DefaultOpsAddr is where the publisher serves /metrics, /healthz and
// /readyz unless told otherwise.
const DefaultOpsAddr = "127.0.0.1:9092"

// Run publishes until ctx is cancelled, then flushes the sink and returns.
// Unless OpsAddr is empty it also serves the ops endpoints there: the
// QueueDelay and E2EDelay histograms (Delays, docs/metrics.md), observed
// from the request changes it publishes; /readyz checks that the table's
// stream can be found.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Table == "" {
		cfg.Table = dynamostore.DefaultTable
	}
	if cfg.AWS == nil { // the stream and EventBridge clients are built from it
		c, err := awsclient.Load(ctx)
		if err != nil {
			return err
		}
		cfg.AWS = &c
	}
	dc := cfg.DynamoDB
	if dc == nil {
		dc = awsclient.DynamoDB(*cfg.AWS)
	}
	db := ddb.New(dc, ddb.Config{})
	cps := stream.NewDynamoCheckpoints(db, cfg.CheckpointTable)
	if cfg.Setup {
		if err := dynamostore.New(db.Table(cfg.Table, &dynamostore.Schema)).Ensure(ctx); err != nil {
			return fmt.Errorf("asynceventevents: %w", err)
		}
		if err := cps.Ensure(ctx); err != nil {
			return fmt.Errorf("asynceventevents: %w", err)
		}
	}
	table := db.Table(cfg.Table, &dynamostore.Schema)
	arn, err := table.StreamARN(ctx)
	if err != nil {
		return fmt.Errorf("asynceventevents: %w", err)
	}
	if arn == "" {
		return fmt.Errorf("asynceventevents: table %s has no stream: enable one with view type NEW_AND_OLD_IMAGES", cfg.Table)
	}
	sink, closeSink, err := openSink(cfg)
	if err != nil {
		return err
	}
	streams := cfg.Streams
	if streams == nil {
		streams = stream.NewClient(*cfg.AWS)
	}
	if cfg.UserKey == "" {
		cfg.UserKey = os.Getenv("PACER_EVENTS_USER_KEY")
	}
	mapper := analytics.Mapper{UserKey: []byte(cfg.UserKey), MaxReceives: cfg.MaxReceives}
	reg := metrics.NewRegistry()
	delays := NewDelays(reg)
	lag := NewLag(reg)
	stopEMF, err := cfg.EMF.Start(reg, cfg.Log)
	if err != nil {
		return errors.Join(err, closeSink())
	}
	defer stopEMF()
	octx, stopOps := context.WithCancel(ctx)
	defer stopOps()
	o := &ops.Server{Name: "asyncevent-events", Registry: reg, Ready: func(ctx context.Context) error {
		_, err := table.StreamARN(ctx)
		return err
	}}
	opsDone, err := o.Start(octx, cfg.OpsListener, cfg.OpsAddr, "-ops-addr", cfg.Log)
	if err != nil {
		return errors.Join(err, closeSink())
	}
	defer func() { stopOps(); <-opsDone }()
	cfg.Log.Info("asyncevent-events publishing", "table", cfg.Table, "stream", arn, "sink", cfg.SinkKind, "consumer", cfg.Consumer)
	if cfg.Ready != nil {
		cfg.Ready()
	}
	err = stream.Run(ctx, streams, stream.Config{
		Name: cfg.Consumer, StreamARN: arn, Checkpoints: cps, Poll: cfg.Poll, Log: cfg.Log, Progress: lag.Progress,
	}, Handler(mapper, sink, delays))
	return errors.Join(err, closeSink())
}

// Handler maps a batch of stream records to events and puts them in sink
// in one call (an error makes the stream deliver the batch again). Once
// the sink took them it observes the batch's delays on d (nil: none).
func Handler(m analytics.Mapper, sink eventsink.Sink, d *Delays) stream.Handler {
	type change struct{ old, cur *asyncevent.Request }
	return func(ctx context.Context, batch []stream.Record) error {
		var evs []eventsink.Envelope
		var changes []change
		for i := range batch {
			old, cur, ok, err := dynamostore.RequestChange(&batch[i])
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			e, err := m.Events(old, cur)
			if err != nil {
				return err
			}
			evs = append(evs, e...)
			changes = append(changes, change{old, cur})
		}
		if len(evs) > 0 {
			if err := sink.Put(ctx, evs); err != nil {
				return err
			}
		}
		if d != nil {
			for _, c := range changes {
				observeDelays(d, c.old, c.cur)
			}
		}
		return nil
	}
}

// observeDelays observes the two delays of one change of a request, from
// its stored times: QueueDelay when the change recorded startedAt, E2EDelay
// when it made the request terminal (a request that failed before it was
// queued has neither).
func observeDelays(d *Delays, old, cur *asyncevent.Request) {
	if cur == nil || cur.QueuedAt == 0 {
		return
	}
	t := string(cur.EventType)
	if cur.StartedAt != 0 && (old == nil || old.StartedAt != cur.StartedAt) {
		d.Queue(t, cur.QueuedAt, cur.StartedAt)
	}
	if cur.Status.Terminal() && cur.FinishedAt != 0 && (old == nil || !old.Status.Terminal()) {
		d.E2E(t, cur.QueuedAt, cur.FinishedAt)
	}
}

// openSink builds the configured sink and its close function.
func openSink(cfg Config) (eventsink.Sink, func() error, error) {
	if cfg.Sink != nil {
		return cfg.Sink, func() error { return nil }, nil
	}
	switch cfg.SinkKind {
	case SinkEventBridge:
		return ebsink.New(eventbridge.NewFromConfig(*cfg.AWS), ebsink.Config{Bus: cfg.Bus}), func() error { return nil }, nil
	case SinkFile:
		s, err := filesink.Open(filesink.Config{Dir: cfg.Dir, BufferBytes: cfg.BufferBytes, BufferInterval: cfg.BufferInterval})
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	}
	return nil, nil, fmt.Errorf("asynceventevents: sink %q: want %s or %s", cfg.SinkKind, SinkEventBridge, SinkFile)
}
