// Package eventsink is the port through which Pacer publishes analytics
// events: an Envelope in Amazon EventBridge's event shape, and a Sink that
// delivers batches of them. ebsink publishes to EventBridge (PutEvents);
// filesink writes the newline-delimited JSON objects a Kinesis Data
// Firehose delivery stream writes to S3, on the local disk.
//
// Delivery is at least once: a Sink that returns an error may have
// delivered part of the batch, and the caller sends the whole batch again.
// Each event's ID is deterministic, so readers de-duplicate on it.
package eventsink

import (
	"context"
	"encoding/json"
	"time"
)

// Envelope is one event as EventBridge delivers it to its targets (and so
// as a Firehose target writes it to S3). PutEvents sets Version, Account,
// Region and its own ID; a publisher sets ID for the sinks that keep it,
// and repeats it inside Detail for the ones that do not.
type Envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       time.Time       `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// New returns an envelope of the given id, source, detail type and time
// (truncated to the second, as EventBridge keeps it, in UTC) whose detail
// is detail marshalled to JSON.
func New(id, source, detailType string, at time.Time, detail any) (Envelope, error) {
	b, err := json.Marshal(detail)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{
		Version: "0", ID: id, Source: source, DetailType: detailType,
		Time: at.UTC().Truncate(time.Second), Resources: []string{}, Detail: b,
	}, nil
}

// Sink delivers events. Put returns nil once every event is delivered
// (durably, for a sink that buffers); an error means some may not be, and
// the caller should retry the batch.
type Sink interface {
	Put(ctx context.Context, events []Envelope) error
}
