package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// pipeline measures the raw loops as a run has them: the ingest loop and
// the worker loop at the same time, on a queue and an event of their own
// (in the measurement's table), and, when the run polls while it ingests
// (pollInflight > 0), the clients' polls of each request (rawPoller), so
// that ingest shares the stand-ins with the workers' writes and the
// clients' reads as the product's ingest does. It sets
// r.PipelineIngestRPS, r.PipelineIngestP95Ms, r.PipelineWorkerRPS and
// r.PipelinePolls. It is what the separate
// loops cannot say: how much of the stand-ins one ingest gets while the
// workers drain.
func (s *standins) pipeline(ctx context.Context, name, ordering string, conc, workerConc, total int, r *RawRates) error {
	q, err := s.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("pacer-load-raw-" + s.tag + "-" + name + "-p")})
	if err != nil {
		return fmt.Errorf("raw rates: create the pipeline's scratch queue: %w", err)
	}
	defer s.sqs.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) //nolint:errcheck // scratch
	event := "raw-" + s.tag + "-" + name + "-p"
	w := &rawWorker{s: s, queue: aws.ToString(q.QueueUrl), event: event, total: int64(total), conc: workerConc}
	wctx, cancel := context.WithTimeout(ctx, workerTimeout)
	defer cancel()
	werr := make(chan error, 1)
	go func() {
		if ordering == "delivery" {
			werr <- w.delivery(wctx)
			return
		}
		werr <- w.arrival(wctx, int64(max(1, total/2)))
	}()
	// The clients' polls, when the run polls while it ingests.
	var answered func(rawReq)
	var polls *rawPoller
	pctx, stopPolls := context.WithCancel(wctx)
	defer stopPolls()
	if s.pollInflight > 0 {
		polls = newRawPoller(s, s.pollInflight)
		answered = func(r rawReq) { polls.poll(pctx, r) }
	}
	in := s.ingest(ctx, aws.ToString(q.QueueUrl), event, name+"p", conc, total, answered)
	if in.n < int64(total) {
		// Failed ingests sent no message: the worker cannot reach total.
		time.AfterFunc(30*time.Second, cancel)
	}
	err = <-werr
	if polls != nil {
		// A request decided last is read once more at most 4 s later.
		time.AfterFunc(5*time.Second, stopPolls)
		polls.wg.Wait()
		r.PipelinePolls = int(polls.reads.Load())
	}
	if err != nil {
		return err
	}
	r.PipelineIngestRPS = float64(in.n) / max(in.took.Seconds(), 1e-9)
	r.PipelineIngestP95Ms = in.op.pct(.95)
	r.PipelineWorkerRPS = float64(w.done.Load()) / max(w.took.Seconds(), 1e-9)
	r.Errors += int(in.errs) + int(w.errs.n.Load())
	for _, e := range []error{in.first, w.errs.first} {
		if e != nil && r.Error == "" {
			r.Error = e.Error()
		}
	}
	return nil
}
