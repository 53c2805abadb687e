package main

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/services/internal/ops"
)

// health answers GET /healthz after pinging every stand-in through the real
// clients and checking that every service said it is ready.
type health struct {
	dynamo   *dynamodb.Client
	sqs      *sqs.Client
	env      Env
	services []serviceReport // Ready is filled in per request from ready
	ready    []atomic.Bool   // set by each service's Env.Ready

	mu         sync.Mutex
	advertised map[string]string // set by the services' Env.Advertise
}

// advertise records a value for the report's "advertised".
func (h *health) advertise(key, value string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.advertised == nil {
		h.advertised = map[string]string{}
	}
	h.advertised[key] = value
}

// healthEndpoint serves GET /healthz from the moment the runner holds its
// port: 503 "starting" (stage "stand-ins") while the stand-ins start, then
// the full report of the health it is given.
type healthEndpoint struct {
	h        atomic.Pointer[health]
	services []serviceReport
}

func (e *healthEndpoint) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", e.serve)
	mux.HandleFunc("GET /{$}", e.serve)
	// The APIs and the events publisher run in this one process: these
	// are their CPU and heap profiles (go tool pprof
	// URL/debug/pprof/profile). The workers are child processes with
	// profiles of their own (PACER_WORKER_PPROF, on their ops ports).
	// Dev only: pacer-dev serves loopback, never in AWS.
	ops.Pprof(mux)
	return mux
}

func (e *healthEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	if h := e.h.Load(); h != nil {
		h.serve(w, r)
		return
	}
	writeReport(w, http.StatusServiceUnavailable, healthReport{Status: "starting", Stage: "stand-ins", Services: e.services})
}

// healthReport is the body of GET /healthz.
type healthReport struct {
	Status   string          `json:"status"`          // "ok", "starting" (a service is not ready yet) or "unavailable"
	Stage    string          `json:"stage,omitempty"` // while starting: "stand-ins", then "services"
	DynamoDB string          `json:"dynamodb"`
	SQS      string          `json:"sqs"`
	Postgres string          `json:"postgres"` // host:port
	Services []serviceReport `json:"services"`
	// Advertised are values the services publish for tools (Env.Advertise):
	// "asyncevent.table" (the AsyncEvent table's name) and
	// "asyncevent.workers" (the autoscaler's GET /workers URL, which lists
	// the running worker processes and their /metrics).
	Advertised map[string]string `json:"advertised,omitempty"`
	Errors     map[string]string `json:"errors,omitempty"`
}

type serviceReport struct {
	Name  string `json:"name"`
	URL   string `json:"url,omitempty"`
	Ready bool   `json:"ready"`
}

func (h *health) serve(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	rep := healthReport{
		Status:   "ok",
		DynamoDB: h.env.DynamoDBEndpoint,
		SQS:      h.env.SQSEndpoint,
		Postgres: hostPort(h.env.DatabaseURL),
		Services: []serviceReport{},
	}
	h.mu.Lock()
	if len(h.advertised) > 0 {
		rep.Advertised = maps.Clone(h.advertised)
	}
	h.mu.Unlock()
	starting := false
	for i, sr := range h.services {
		sr.Ready = h.ready[i].Load()
		starting = starting || !sr.Ready
		rep.Services = append(rep.Services, sr)
	}

	checks := map[string]func(context.Context) error{
		"dynamodb": func(ctx context.Context) error {
			_, err := h.dynamo.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
			return err
		},
		"sqs": func(ctx context.Context) error {
			_, err := h.sqs.ListQueues(ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1)})
			return err
		},
		"postgres": func(ctx context.Context) error {
			conn, err := pgx.Connect(ctx, h.env.DatabaseURL)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			return conn.Ping(ctx)
		},
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, check := range checks {
		wg.Go(func() {
			if err := check(ctx); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if rep.Errors == nil {
					rep.Errors = map[string]string{}
				}
				rep.Errors[name] = err.Error()
			}
		})
	}
	wg.Wait()

	code := http.StatusOK
	switch {
	case len(rep.Errors) > 0:
		rep.Status = "unavailable"
		code = http.StatusServiceUnavailable
	case starting:
		rep.Status, rep.Stage = "starting", "services"
		code = http.StatusServiceUnavailable
	}
	writeReport(w, code, rep)
}

func writeReport(w http.ResponseWriter, code int, rep healthReport) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rep)
}

// hostPort returns the host:port of a Postgres URL or keyword/value string.
func hostPort(dbURL string) string {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
}

// redact hides a password in a URL.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}
