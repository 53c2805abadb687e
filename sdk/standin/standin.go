// Package standin starts Pacer's local stand-ins for AWS and Postgres and
// tears them down again: DynamoDB Local (AWS's own emulator, on Java), the
// local-aws-sqs server (on Node) and a Postgres server.
//
// Every stand-in speaks the real wire protocol, so code under test uses the
// real aws-sdk-go-v2 and pgx clients. The npm packages and the DynamoDB Local
// jar are installed by tools/standin/install.sh (run by `make deps`, which
// `make test` and `make run` call).
//
// Processes are started in their own process group with Pdeathsig, so they
// die with the process that started them, even when it is killed; Close
// stops them explicitly.
//
// In tests, call RunTests from TestMain: it starts the stack once per test
// package and exports its endpoints through the standard environment
// variables (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, DATABASE_URL),
// which sdk/awsclient and pgx read.
package standin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Config says which stand-ins to start and where they are installed.
type Config struct {
	// Dir is the folder holding install.sh, node_modules and dynamodb-local.
	// Empty means $PACER_STANDIN_DIR, else tools/standin found by walking up
	// from the working directory.
	Dir string

	DynamoDB bool // start DynamoDB Local
	SQS      bool // start local-aws-sqs
	Postgres bool // find or start a Postgres server

	// PrivatePostgres, with Postgres, starts a throwaway cluster with the
	// machine's initdb even when DATABASE_URL is set or a server answers on
	// 127.0.0.1:5432.
	PrivatePostgres bool

	// Throughput tunes DynamoDB Local's JVM for a long-lived stack under
	// load (make run, the load tool's target): the JIT's optimising tier
	// and a parallel collector with a larger heap, instead of the quick
	// start-up settings the tests' short-lived instances use (C1 only,
	// serial GC). It starts a little slower and takes requests faster once
	// warm.
	Throughput bool

	// Log receives the stand-ins' output. Nil discards it.
	Log io.Writer

	// StartTimeout bounds the wait for each stand-in to become ready.
	// Zero means 60 s.
	StartTimeout time.Duration
}

// Stack is a running set of stand-ins.
type Stack struct {
	// DynamoDBEndpoint is DynamoDB Local's base URL, e.g. http://127.0.0.1:40123.
	DynamoDBEndpoint string
	// SQSEndpoint is the SQS server's base URL.
	SQSEndpoint string
	// DatabaseURL is a Postgres URL with rights to create databases.
	DatabaseURL string

	procs []*process
}

// ErrNotInstalled reports that a stand-in's files are missing; its message
// says how to install them.
var ErrNotInstalled = errors.New("standin: not installed")

// Start starts the stand-ins that cfg asks for and waits until each is ready.
// On error, whatever was started is stopped again.
func Start(ctx context.Context, cfg Config) (*Stack, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	s := &Stack{}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	if cfg.DynamoDB || cfg.SQS {
		dir, err := findDir(cfg.Dir)
		if err != nil {
			return nil, err
		}
		cfg.Dir = dir
	}
	if cfg.DynamoDB {
		p, endpoint, err := startDynamoDB(ctx, cfg)
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, p)
		s.DynamoDBEndpoint = endpoint
	}
	if cfg.SQS {
		p, endpoint, err := startSQS(ctx, cfg)
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, p)
		s.SQSEndpoint = endpoint
	}
	if cfg.Postgres {
		p, url, err := startPostgres(ctx, cfg)
		if err != nil {
			return nil, err
		}
		if p != nil {
			s.procs = append(s.procs, p)
		}
		s.DatabaseURL = url
	}
	ok = true
	return s, nil
}

// Env returns the environment variables that point the AWS SDK and pgx at
// this stack, with static fake credentials.
func (s *Stack) Env() map[string]string {
	env := map[string]string{}
	if s.DynamoDBEndpoint != "" || s.SQSEndpoint != "" {
		env["AWS_ACCESS_KEY_ID"] = "local"
		env["AWS_SECRET_ACCESS_KEY"] = "local"
		env["AWS_REGION"] = "us-east-1"
		env["AWS_EC2_METADATA_DISABLED"] = "true"
	}
	if s.DynamoDBEndpoint != "" {
		env["AWS_ENDPOINT_URL_DYNAMODB"] = s.DynamoDBEndpoint
	}
	if s.SQSEndpoint != "" {
		env["AWS_ENDPOINT_URL_SQS"] = s.SQSEndpoint
	}
	if s.DatabaseURL != "" {
		env["DATABASE_URL"] = s.DatabaseURL
	}
	return env
}

// Setenv exports Env into this process.
func (s *Stack) Setenv() {
	for k, v := range s.Env() {
		os.Setenv(k, v)
	}
}

// Close stops every process the stack started (their whole process groups)
// and removes their temporary files. It is safe to call more than once.
func (s *Stack) Close() error {
	var errs []error
	for i := len(s.procs) - 1; i >= 0; i-- {
		errs = append(errs, s.procs[i].stop())
	}
	s.procs = nil
	return errors.Join(errs...)
}

// findDir locates the installed stand-ins.
func findDir(dir string) (string, error) {
	if dir == "" {
		dir = os.Getenv("PACER_STANDIN_DIR")
	}
	if dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "tools", "standin")
		if _, err := os.Stat(filepath.Join(cand, "package.json")); err == nil {
			return cand, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("%w: no tools/standin folder above %s; set PACER_STANDIN_DIR to the folder holding install.sh", ErrNotInstalled, wd)
}
