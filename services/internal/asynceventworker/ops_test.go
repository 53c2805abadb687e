package asynceventworker_test

import (
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
)

// startWorker runs a worker on env's table and queue with its ops server
// on a free port (serving profiles if pprof), checks that it is alive and
// ready, and returns the ops base URL.
func startWorker(t *testing.T, env *asynceventtest.Env, concurrency int, pprof bool) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- asynceventworker.Run(ctx, asynceventworker.Config{
			Config:      asynceventbackend.Config{Table: env.DDB.Table.Name(), Queue: env.QueueName, AWS: &awsCfg},
			Concurrency: concurrency, Batch: 10, Wait: time.Second, OpsListener: l, Pprof: pprof,
			Ready: func() { close(ready) },
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker: %v", err)
		}
	})
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("worker stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("worker not ready after 30s")
	}
	base := "http://" + l.Addr().String()
	for _, probe := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, base+probe); code != http.StatusOK {
			t.Fatalf("%s: %d %s", probe, code, body)
		}
	}
	return base
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The ops port serves liveness, readiness and the worker's metrics (as the
// contract names them, every outcome at 0 before any message); readiness
// fails once the queue is gone.
func TestOpsPortQueueGone(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	base := startWorker(t, env, 3, false)
	fams := metricstest.Scrape(t, base+"/metrics")
	metricstest.Check(t, fams, "pacer_worker_messages_total", "pacer_worker_in_flight", "pacer_worker_concurrency",
		"pacer_aws_calls_total", "pacer_aws_call_duration_seconds", "go_goroutines", "process_cpu_seconds_total")
	for _, o := range []string{"succeeded", "rejected", "retryable", "waiting", "final"} {
		if v := fams.Value("pacer_worker_messages_total", "outcome", o); v != 0 {
			t.Errorf("outcome %s starts at %v", o, v)
		}
	}
	if v := fams.Value("pacer_worker_concurrency"); v != 3 {
		t.Errorf("concurrency %v, want 3", v)
	}
	awsCfg, err := awsclient.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := awsclient.SQS(awsCfg).DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(env.Queue.URL())}); err != nil {
		t.Fatal(err)
	}
	notReady(t, base, "queue")
}

// Readiness fails once the table is gone.
func TestOpsPortTableGone(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	base := startWorker(t, env, 1, false)
	if _, err := env.DDB.Client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(env.DDB.Table.Name())}); err != nil {
		t.Fatal(err)
	}
	notReady(t, base, "table")
}

// notReady waits (readiness is cached for a moment) for /readyz to answer
// 503 naming what, while /healthz still answers 200.
func notReady(t *testing.T, base, what string) {
	t.Helper()
	asynceventtest.Eventually(t, 15*time.Second, "readyz to fail on the "+what, func() (bool, error) {
		code, body := get(t, base+"/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, what), nil
	})
	if code, _ := get(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz %d once the %s is gone: the process is alive", code, what)
	}
}

// Profiles are served on the ops port only when the worker is told to
// (make run does): a CPU profile of the running worker is a valid pprof
// file, and a worker without the setting answers 404.
func TestOpsPortPprof(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	base := startWorker(t, env, 1, true)
	if code, body := get(t, base+"/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Fatalf("/debug/pprof/: %d %.200s", code, body)
	}
	code, body := get(t, base+"/debug/pprof/profile?seconds=1")
	if code != http.StatusOK {
		t.Fatalf("/debug/pprof/profile: %d %.200s", code, body)
	}
	// A profile is a gzipped protocol buffer.
	zr, err := gzip.NewReader(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/debug/pprof/profile is not gzipped: %v", err)
	}
	if raw, err := io.ReadAll(zr); err != nil || len(raw) == 0 {
		t.Fatalf("/debug/pprof/profile: %d bytes, %v", len(raw), err)
	}
	off := startWorker(t, env, 1, false)
	if code, _ := get(t, off+"/debug/pprof/"); code != http.StatusNotFound {
		t.Fatalf("/debug/pprof/ without -pprof: %d, want 404", code)
	}
}
