package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// With PACER_DEV_TEST_MAIN=1 the test binary runs main() instead of the
// tests, so a test can run the real command as a subprocess; with
// PACER_DEV_TEST_CLAIM it only claims a dev database (claimHelper).
func TestMain(m *testing.M) {
	if os.Getenv("PACER_DEV_TEST_MAIN") == "1" {
		os.Args = append([]string{"dev"}, strings.Fields(os.Getenv("PACER_DEV_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	if spec := os.Getenv("PACER_DEV_TEST_CLAIM"); spec != "" {
		claimHelper(spec)
	}
	// asyncevent-events' file sink writes here, not into the source tree
	// (the subprocesses inherit it).
	events, err := os.MkdirTemp("", "pacer-dev-events-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("PACER_EVENTS_DIR", events)
	code := m.Run()
	os.RemoveAll(events)
	os.Exit(code)
}

func uniqueDB() string { return fmt.Sprintf("pacer_dev_test_%d", time.Now().UnixNano()) }

func getHealth(t *testing.T, url string) healthReport {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var rep healthReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	return rep
}

func checkReport(t *testing.T, rep healthReport, wantServices int) {
	t.Helper()
	if rep.Status != "ok" || len(rep.Errors) != 0 {
		t.Errorf("status %q, errors %v", rep.Status, rep.Errors)
	}
	for name, v := range map[string]string{"dynamodb": rep.DynamoDB, "sqs": rep.SQS} {
		if !strings.HasPrefix(v, "http://127.0.0.1:") {
			t.Errorf("%s endpoint %q is not a loopback URL", name, v)
		}
	}
	if _, _, err := net.SplitHostPort(rep.Postgres); err != nil {
		t.Errorf("postgres %q is not host:port: %v", rep.Postgres, err)
	}
	if len(rep.Services) != wantServices {
		t.Errorf("services %v, want %d", rep.Services, wantServices)
	}
}

// In-process: the runner serves health after pinging each stand-in, runs the
// registered services with the stand-ins' env, and on cancel stops them and
// leaves no stand-in process behind.
func TestRunHealthAndShutdown(t *testing.T) {
	dbBefore, hadDB := os.LookupEnv("DATABASE_URL")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	var gotEnv atomic.Pointer[Env]
	var stopped atomic.Bool
	svc := Service{
		Name: "fake",
		Addr: "127.0.0.1:0",
		Run: func(ctx context.Context, env Env) error {
			gotEnv.Store(&env)
			if !strings.HasPrefix(env.Addr, "127.0.0.1:") || env.Addr == "127.0.0.1:0" {
				t.Errorf("service Addr %q: want the bound port", env.Addr)
			}
			srv := &http.Server{Handler: http.NotFoundHandler()}
			go func() { _ = srv.Serve(env.Listener) }()
			env.Ready()
			<-ctx.Done()
			_ = srv.Close()
			stopped.Store(true)
			return nil
		},
	}
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, Config{Addr: "127.0.0.1:0", Database: uniqueDB(), Services: []Service{svc}, OnReady: func(u string) { ready <- u }})
	}()
	var url string
	select {
	case url = <-ready:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("runner not ready after 90s")
	}

	rep := getHealth(t, url)
	checkReport(t, rep, 1)
	env := gotEnv.Load()
	if env == nil || len(rep.Services) != 1 {
		t.Fatalf("service env %+v, health services %+v", env, rep.Services)
	}
	if rep.Services[0].URL != "http://"+env.Addr {
		t.Errorf("health reports service URL %q, want http://%s", rep.Services[0].URL, env.Addr)
	}
	// The listener the runner bound and handed over is the one that serves.
	if resp, err := http.Get("http://" + env.Addr + "/"); err != nil {
		t.Errorf("service listener: %v", err)
	} else {
		resp.Body.Close()
	}
	if env.DynamoDBEndpoint == "" || env.SQSEndpoint == "" || env.DatabaseURL == "" || env.Log == nil {
		t.Errorf("service got env %+v", env)
	}
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != env.DynamoDBEndpoint {
		t.Errorf("AWS_ENDPOINT_URL_DYNAMODB not exported")
	}

	standins := children(os.Getpid(), "java", "node")
	if len(standins) < 2 {
		t.Fatalf("found %d stand-in children (java, node), want 2: %+v", len(standins), standins)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("run after cancel: %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("runner did not stop within 40s of cancel")
	}
	if !stopped.Load() {
		t.Error("service was not stopped")
	}
	waitGone(t, standins, 5*time.Second)
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Error("health endpoint still answers after shutdown")
	}
	if db, ok := os.LookupEnv("DATABASE_URL"); db != dbBefore || ok != hadDB {
		t.Errorf("DATABASE_URL not restored: %q, want %q", db, dbBefore)
	}
}

// A busy port fails at once, with a clear message, before any stand-in
// starts.
func TestRunPortBusy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start := time.Now()
	err = run(context.Background(), Config{Addr: l.Addr().String(), Database: uniqueDB()})
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("run on a busy port: %v, want an 'already in use' error", err)
	}
	if took := time.Since(start); took > 10*time.Second { // generous: CI machines are loaded
		t.Errorf("failing took %s: it should fail before starting anything", took)
	}
	if ps := children(os.Getpid(), "java", "node"); len(ps) != 0 {
		t.Errorf("stand-ins started anyway: %+v", ps)
	}
}

// A busy service port names the setting that moves it.
func TestRunServicePortBusyNamesItsSetting(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = run(context.Background(), Config{Addr: "127.0.0.1:0", Database: uniqueDB(), Services: []Service{
		{Name: "photo-api", Addr: l.Addr().String(), AddrVar: "PACER_PHOTO_ADDR", Run: func(context.Context, Env) error { return nil }},
	}})
	if err == nil || !strings.Contains(err.Error(), "photo-api cannot listen on "+l.Addr().String()) ||
		!strings.Contains(err.Error(), "(PACER_PHOTO_ADDR)") || strings.Contains(err.Error(), "PACER_DEV_ADDR") {
		t.Fatalf("run with photo-api's port busy: %v, want it to name PACER_PHOTO_ADDR", err)
	}
}

// Health answers from the moment the runner holds its port: 503 "starting"
// at stage "stand-ins" while they start, never a refused or hanging
// connection, then stage "services", then ok.
func TestHealthAnswersWhileTheStandinsStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/healthz"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	announced := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, Config{Listener: ln, Database: uniqueDB(), OnReady: func(string) { close(announced) },
			Services: []Service{{Name: "svc", Run: func(ctx context.Context, env Env) error { env.Ready(); <-ctx.Done(); return nil }}}})
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	stages := map[string]bool{}
	for done := false; !done; {
		select {
		case <-announced:
			done = true
		case err := <-errc:
			t.Fatalf("run: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("health while starting: %v", err)
		}
		var rep healthReport
		derr := json.NewDecoder(resp.Body).Decode(&rep)
		resp.Body.Close()
		if derr != nil {
			t.Fatal(derr)
		}
		switch {
		case resp.StatusCode == http.StatusOK && rep.Status == "ok" && len(rep.Services) == 1 && rep.Services[0].Ready:
			// Every service is ready; the banner may still be printing.
		case resp.StatusCode == http.StatusServiceUnavailable && rep.Status == "starting" && (rep.Stage == "stand-ins" || rep.Stage == "services"):
			stages[rep.Stage] = true
			if len(rep.Services) != 1 || rep.Services[0].Name != "svc" || rep.Services[0].Ready {
				t.Fatalf("services while starting: %+v", rep.Services)
			}
		default:
			t.Fatalf("health %d %+v", resp.StatusCode, rep)
		}
	}
	if !stages["stand-ins"] {
		t.Fatalf("never saw stage stand-ins while the stand-ins started (saw %v)", stages)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// A service that returns without error before saying it is ready stops
// the runner with a clear error instead of leaving it waiting.
func TestRunServiceStoppedBeforeReady(t *testing.T) {
	err := run(context.Background(), Config{
		Addr:     "127.0.0.1:0",
		Database: uniqueDB(),
		Services: []Service{{Name: "quitter", Run: func(context.Context, Env) error { return nil }}},
	})
	if err == nil || !strings.Contains(err.Error(), "quitter: stopped before it was ready") {
		t.Fatalf("run = %v, want the service named as stopped before ready", err)
	}
}

// A service that returns while the runner runs, even after it was ready,
// stops the runner: health must never say ok for a service that is gone.
func TestRunServiceStoppedAfterReady(t *testing.T) {
	err := run(context.Background(), Config{
		Addr:     "127.0.0.1:0",
		Database: uniqueDB(),
		Services: []Service{{Name: "brief", Run: func(_ context.Context, env Env) error { env.Ready(); return nil }}},
	})
	if err == nil || !strings.Contains(err.Error(), "brief: stopped unexpectedly") {
		t.Fatalf("run = %v, want the service named as stopped unexpectedly", err)
	}
}

// Until every service is ready, health answers 503 "starting" and says
// which service is not ready yet; the runner announces itself only after.
func TestHealthSaysStartingUntilReady(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/healthz"
	slowStarted := make(chan func(), 1)
	announced := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, Config{
			Listener: ln, Database: uniqueDB(), OnReady: func(string) { close(announced) },
			Services: []Service{
				{Name: "fast", Run: func(ctx context.Context, env Env) error { env.Ready(); <-ctx.Done(); return nil }},
				{Name: "slow", Run: func(ctx context.Context, env Env) error { slowStarted <- env.Ready; <-ctx.Done(); return nil }},
			},
		})
	}()
	var slowReady func()
	select {
	case slowReady = <-slowStarted:
	case err := <-errc:
		t.Fatalf("run: %v", err)
	case <-time.After(90 * time.Second):
		t.Fatal("slow service never started")
	}
	// fast may not have run yet: wait until health shows it ready.
	var rep healthReport
	asyncWait(t, 30*time.Second, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		rep = healthReport{}
		if json.NewDecoder(resp.Body).Decode(&rep) != nil || resp.StatusCode != http.StatusServiceUnavailable {
			return false
		}
		return len(rep.Services) == 2 && rep.Services[0].Ready
	})
	if rep.Status != "starting" || rep.Services[1].Name != "slow" || rep.Services[1].Ready {
		t.Fatalf("health while slow starts: %+v", rep)
	}
	select {
	case <-announced:
		t.Fatal("runner announced itself while a service was not ready")
	default:
	}
	slowReady()
	select {
	case <-announced:
	case <-time.After(30 * time.Second):
		t.Fatal("runner not ready after the slow service said so")
	}
	checkReport(t, getHealth(t, url), 2)
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// asyncWait polls cond every 50 ms until it holds or within passes.
func asyncWait(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A service that fails stops the whole runner with its error.
func TestRunServiceFailure(t *testing.T) {
	boom := errors.New("boom")
	err := run(context.Background(), Config{
		Addr:     "127.0.0.1:0",
		Database: uniqueDB(),
		Services: []Service{{Name: "bad", Run: func(context.Context, Env) error { return boom }}},
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("run = %v, want the service's error", err)
	}
}

// The real command: prints its URLs and "Press Ctrl-C to stop", answers on
// health, and on SIGTERM shuts down, exits 0 and leaves no stand-in
// process behind.
func TestCommandSIGTERM(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	// Every service on a port the kernel picks, so neither a `make run` on
	// this machine nor a parallel test can collide with it; the banner says
	// which.
	cmd.Env = append(os.Environ(), "PACER_DEV_TEST_MAIN=1",
		"PACER_ASYNCEVENT_ADDR=127.0.0.1:0", "PACER_PHOTO_ADDR=127.0.0.1:0",
		"PACER_DEV_TEST_ARGS=-addr 127.0.0.1:0 -standin-log - -db "+uniqueDB())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()

	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var url string
	var out []string
	urls := map[string]string{}
	timeout := time.After(90 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("command exited early:\n%s\n%s", strings.Join(out, "\n"), stderr.String())
			}
			out = append(out, l)
			if f := strings.Fields(l); len(f) == 2 && strings.HasPrefix(f[1], "http://") {
				urls[f[0]] = f[1]
			}
			if l == "Press Ctrl-C to stop" {
				break wait
			}
		case <-timeout:
			t.Fatalf("no 'Press Ctrl-C to stop' after 90s:\n%s\n%s", strings.Join(out, "\n"), stderr.String())
		}
	}
	banner := strings.Join(out, "\n")
	for _, want := range []string{"stack up in", "DynamoDB", "SQS", "Postgres", "AWS_ENDPOINT_URL_DYNAMODB"} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	// The banner comes only once every service serves: health says all are
	// ready, and each API answers at the URL printed, at once.
	url = urls["health"]
	rep := getHealth(t, url)
	checkReport(t, rep, len(services))
	if rep.Advertised["asyncevent.table"] == "" {
		t.Errorf("health advertises no asyncevent.table: %v", rep.Advertised)
	}
	for _, s := range rep.Services {
		if !s.Ready {
			t.Errorf("service %s not ready after the banner", s.Name)
		}
	}
	for _, name := range []string{"asyncevent-api", "photo-api"} {
		u := urls[name]
		if u == "" || strings.HasSuffix(u, ":0") {
			t.Fatalf("banner has no bound URL for %s: %q\n%s", name, u, banner)
		}
		resp, err := http.Get(u + "/openapi.json")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s/openapi.json: %s", u, resp.Status)
		}
	}

	standins := children(cmd.Process.Pid, "java", "node")
	if len(standins) < 2 {
		t.Fatalf("found %d stand-in children of the command, want 2: %+v", len(standins), standins)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("command exited with %v after SIGTERM:\n%s", err, stderr.String())
		}
	case <-time.After(40 * time.Second):
		t.Fatalf("command still running 40s after SIGTERM:\n%s", stderr.String())
	}
	waitGone(t, standins, 5*time.Second)
}
