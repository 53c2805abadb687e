package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/standin"
)

// Config configures a run of the local stack.
type Config struct {
	// Addr is where the runner's own health endpoint listens, unless
	// Listener is set.
	Addr     string
	Listener net.Listener
	// Database is the name of the dev database created on the local
	// Postgres server; the stack owns it while it runs, and refuses to
	// start if another running stack does. Ignored when DATABASE_URL is set.
	Database string
	// PostgresURL is the Postgres server (a URL with rights to create
	// databases) that holds the dev database; empty means the one
	// sdk/standin finds or starts.
	PostgresURL string
	// StandinLog receives the stand-ins' output.
	StandinLog io.Writer
	// Out receives the start-up banner; Log the runner's and services' logs.
	Out io.Writer
	Log *slog.Logger
	// Services are the services to start (normally the package's services).
	Services []Service
	// OnReady, if set, is called with the health URL once everything runs.
	OnReady func(healthURL string)
}

// Shutdown budgets: the HTTP server and the services each get this long to
// finish what they are doing after Ctrl-C.
const (
	shutdownTimeout = 10 * time.Second
	serviceTimeout  = 15 * time.Second
)

// run starts the stand-ins, the services and the health endpoint, and runs
// until ctx is cancelled; then it stops everything it started.
func run(ctx context.Context, cfg Config) (err error) {
	began := time.Now()
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}

	ln, listeners, err := claimPorts(cfg)
	if err != nil {
		return err
	}
	defer ln.Close()
	defer closeListeners(listeners)

	// Health answers from now on: "starting" until everything is up.
	endpoint := newHealthEndpoint(cfg.Services, listeners)
	srv := newHealthServer(endpoint)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	defer srv.Close() // on an early return; normally shut down gracefully below

	dbURL, releaseDB, err := startDatabase(ctx, cfg, holderName(ln.Addr().String()))
	if err != nil {
		return err
	}
	defer releaseDB(&err)
	cloud, err := standin.Start(ctx, standin.Config{DynamoDB: true, SQS: true, Throughput: true, Log: cfg.StandinLog})
	if err != nil {
		return fmt.Errorf("start the stand-ins: %w", err)
	}
	defer func() {
		closeStandins(cloud, &err)
		cfg.Log.Info("stand-ins stopped")
	}()
	stack := &standin.Stack{DynamoDBEndpoint: cloud.DynamoDBEndpoint, SQSEndpoint: cloud.SQSEndpoint, DatabaseURL: dbURL}
	defer setenv(stack.Env())()

	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		return err
	}
	env := Env{
		DynamoDBEndpoint: stack.DynamoDBEndpoint,
		SQSEndpoint:      stack.SQSEndpoint,
		DatabaseURL:      dbURL,
		AWS:              awsCfg,
	}

	h := newHealth(awsCfg, env, endpoint.services)
	endpoint.h.Store(h)

	// Services run until ctx is cancelled or one of them fails.
	svcCtx, cancelServices := context.WithCancelCause(ctx)
	defer cancelServices(nil)
	readyc := make(chan struct{}, len(cfg.Services))
	var wg sync.WaitGroup
	startServices(svcCtx, cancelServices, cfg, env, listeners, h, readyc, &wg)

	// The banner comes once every service serves (or never, if one fails or
	// Ctrl-C comes first): the URLs it prints answer.
	healthURL := "http://" + ln.Addr().String() + "/healthz"
	if waitReady(svcCtx, readyc, len(cfg.Services)) {
		printBanner(cfg.Out, time.Since(began), healthURL, stack, env, h.services)
		cfg.Log.Info("stack up", "startup", time.Since(began).Round(time.Millisecond).String())
		if cfg.OnReady != nil {
			cfg.OnReady(healthURL)
		}
	}

	err = waitStop(svcCtx, serveErr)
	cancelServices(nil)
	fmt.Fprintln(cfg.Out, "Stopping...")
	shutdown(ctx, srv, &wg, &err)
	return err
}

// newHealthServer is the HTTP server of the runner's health endpoint.
func newHealthServer(endpoint *healthEndpoint) *http.Server {
	return &http.Server{
		Handler:           endpoint.routes(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
}

// newHealth is the health check of the running stack: the stand-ins it
// pings with awsCfg, env, and services' reports and readiness.
func newHealth(awsCfg aws.Config, env Env, services []serviceReport) *health {
	return &health{
		dynamo:   awsclient.DynamoDB(awsCfg),
		sqs:      awsclient.SQS(awsCfg),
		env:      env,
		services: services,
		ready:    make([]atomic.Bool, len(services)),
	}
}

// waitStop waits until the services stop (svcCtx ends) or the health
// server fails, and returns the server's error joined with the services'
// cause, unless that is a plain cancellation.
func waitStop(svcCtx context.Context, serveErr <-chan error) (err error) {
	select {
	case <-svcCtx.Done():
	case err = <-serveErr:
		err = fmt.Errorf("health server: %w", err)
	}
	if cause := context.Cause(svcCtx); cause != nil && !errors.Is(cause, context.Canceled) {
		err = errors.Join(err, cause)
	}
	return err
}

// claimPorts listens on the runner's health address (unless cfg.Listener
// is set) and on each service's address, before anything starts, and
// keeps the listeners: a second `make run` fails at once instead of after
// starting Java, and no other process can take a service's port while the
// stand-ins start. A service without an address has a nil listener. On an
// error it closes what it opened, and cfg.Listener.
func claimPorts(cfg Config) (ln net.Listener, listeners []net.Listener, err error) {
	ln = cfg.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			return nil, nil, portError("the dev runner's health endpoint", cfg.Addr, "PACER_DEV_ADDR or -addr", err)
		}
	}
	listeners = make([]net.Listener, len(cfg.Services))
	for i, s := range cfg.Services {
		if s.Addr == "" {
			continue
		}
		if listeners[i], err = net.Listen("tcp", s.Addr); err != nil {
			closeListeners(listeners)
			_ = ln.Close()
			return nil, nil, portError(s.Name, s.Addr, s.AddrVar, err)
		}
	}
	return ln, listeners, nil
}

// closeListeners closes the services' listeners that are open.
func closeListeners(listeners []net.Listener) {
	for _, l := range listeners {
		if l != nil {
			_ = l.Close() // the service normally closed it already
		}
	}
}

// newHealthEndpoint is the health endpoint of services, each with the URL
// of its listener (none for a service without one).
func newHealthEndpoint(services []Service, listeners []net.Listener) *healthEndpoint {
	endpoint := &healthEndpoint{services: make([]serviceReport, len(services))}
	for i, s := range services {
		endpoint.services[i] = serviceReport{Name: s.Name}
		if l := listeners[i]; l != nil {
			endpoint.services[i].URL = "http://" + l.Addr().String()
		}
	}
	return endpoint
}

// startDatabase starts Postgres first, so that a dev database another
// stack owns is refused before Java and Node start: the stand-in's
// Postgres unless cfg.PostgresURL is set, and the dev database on it
// (claimed for holder, recreated empty) unless DATABASE_URL is set. It
// returns the database's URL and release, which releases the database and
// stops the stand-in, adding their errors to *err.
func startDatabase(ctx context.Context, cfg Config, holder string) (dbURL string, release func(err *error), err error) {
	userDB := os.Getenv("DATABASE_URL") != ""
	adminURL := cfg.PostgresURL
	var pg *standin.Stack
	if adminURL == "" || userDB {
		if pg, err = standin.Start(ctx, standin.Config{Postgres: true, Log: cfg.StandinLog}); err != nil {
			return "", nil, fmt.Errorf("start the stand-ins: %w", err)
		}
		adminURL = pg.DatabaseURL
	}
	var db *devDatabase
	release = func(err *error) {
		if db != nil {
			*err = errors.Join(*err, db.release())
		}
		if pg != nil {
			closeStandins(pg, err)
		}
	}
	dbURL = adminURL
	if !userDB {
		if db, err = claimDatabase(ctx, adminURL, cfg.Database, holder); err != nil {
			release(&err)
			return "", nil, err
		}
		if dbURL, err = db.recreate(ctx); err != nil {
			release(&err)
			return "", nil, err
		}
	}
	return dbURL, release, nil
}

// startServices runs each service in its own goroutine on wg, with its
// listener, its logger and its ready signal (to readyc, once): a service
// that fails, or stops while svcCtx is live, cancels svcCtx with why.
func startServices(svcCtx context.Context, cancelServices context.CancelCauseFunc, cfg Config, env Env, listeners []net.Listener, h *health, readyc chan<- struct{}, wg *sync.WaitGroup) {
	for i, s := range cfg.Services {
		e := env
		e.Addr, e.Listener = s.Addr, listeners[i]
		if l := listeners[i]; l != nil {
			e.Addr = l.Addr().String()
		}
		e.Log = cfg.Log.With("service", s.Name)
		e.Advertise = h.advertise
		var once sync.Once
		e.Ready = func() {
			once.Do(func() {
				h.ready[i].Store(true)
				readyc <- struct{}{}
			})
		}
		wg.Go(func() {
			err := s.Run(svcCtx, e)
			switch {
			case err != nil:
				cancelServices(fmt.Errorf("%s: %w", s.Name, err))
			case svcCtx.Err() == nil && !h.ready[i].Load():
				cancelServices(fmt.Errorf("%s: stopped before it was ready", s.Name))
			case svcCtx.Err() == nil:
				// A service runs until the runner stops it.
				cancelServices(fmt.Errorf("%s: stopped unexpectedly", s.Name))
			}
		})
	}
}

// shutdown shuts the health server down and waits for the services to
// stop, each within its budget (shutdownTimeout, serviceTimeout), even
// after ctx is cancelled; it adds what failed to *err.
func shutdown(ctx context.Context, srv *http.Server, wg *sync.WaitGroup, err *error) {
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if serr := srv.Shutdown(shutCtx); serr != nil {
		*err = errors.Join(*err, fmt.Errorf("health server shutdown: %w", serr))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(serviceTimeout):
		*err = errors.Join(*err, fmt.Errorf("services did not stop within %s", serviceTimeout))
	}
}

// closeStandins stops a stack of stand-ins and adds its error to *err.
func closeStandins(s *standin.Stack, err *error) {
	if cerr := s.Close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("stop the stand-ins: %w", cerr))
	}
}

// setenv exports vars into this process (for code that reads the standard
// variables) and returns a function that restores the previous values.
func setenv(vars map[string]string) (restore func()) {
	type old struct {
		v  string
		ok bool
	}
	prev := map[string]old{}
	for k, v := range vars {
		o, ok := os.LookupEnv(k)
		prev[k] = old{o, ok}
		_ = os.Setenv(k, v)
	}
	return func() {
		for k, o := range prev {
			if o.ok {
				_ = os.Setenv(k, o.v)
			} else {
				_ = os.Unsetenv(k)
			}
		}
	}
}

// portError explains a failed listen on addr; how says which setting
// moves it.
func portError(what, addr, how string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s cannot listen on %s: the port is already in use (another `make run`?). Stop whatever holds it (ss -ltnp | grep %s) or choose another address (%s)", what, addr, portOf(addr), how)
	}
	return fmt.Errorf("%s cannot listen on %s: %w", what, addr, err)
}

func portOf(addr string) string {
	if _, p, err := net.SplitHostPort(addr); err == nil {
		return ":" + p
	}
	return addr
}

// waitReady waits until n services said they are ready, or ctx ends; it
// reports whether they all did.
func waitReady(ctx context.Context, readyc <-chan struct{}, n int) bool {
	for range n {
		select {
		case <-readyc:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func printBanner(w io.Writer, took time.Duration, healthURL string, stack *standin.Stack, env Env, svcs []serviceReport) {
	fmt.Fprintf(w, "Pacer dev stack up in %s\n\n", took.Round(10*time.Millisecond))
	fmt.Fprintf(w, "  %-18s %s\n", "health", healthURL)
	for _, s := range svcs {
		if s.URL != "" {
			fmt.Fprintf(w, "  %-18s %s\n", s.Name, s.URL)
		} else {
			fmt.Fprintf(w, "  %-18s (worker)\n", s.Name)
		}
	}
	fmt.Fprintf(w, "  %-18s %s\n", "DynamoDB", env.DynamoDBEndpoint)
	fmt.Fprintf(w, "  %-18s %s\n", "SQS", env.SQSEndpoint)
	fmt.Fprintf(w, "  %-18s %s\n", "Postgres", redact(env.DatabaseURL))
	fmt.Fprintln(w, "\nTo use them from another shell (e.g. the aws CLI or psql):")
	vars := stack.Env()
	vars["DATABASE_URL"] = env.DatabaseURL
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  export %s=%s\n", k, vars[k])
	}
	fmt.Fprintln(w, "\nPress Ctrl-C to stop")
}
