// Package proctest runs a service in a separate process for a test, so the
// test can SIGKILL it, or stop it with SIGTERM, as a deployment would. The
// test binary re-executes itself: the copy's TestMain (Main) sees a marker
// variable and runs the service, configured from the environment like the
// real binary, instead of the tests. It is imported by tests only.
//
//	func TestMain(m *testing.M) {
//		var cfg asynceventworker.Config
//		proctest.Main(m, standin.Config{DynamoDB: true, SQS: true}, "test-worker", cfg.Declare,
//			func(ctx context.Context, aws aws.Config) error {
//				cfg.AWS = &aws
//				return asynceventworker.Run(ctx, cfg)
//			})
//	}
//
//	child := proctest.Start(t, "PACER_WORKER_CONCURRENCY=10") // in a test
//	...
//	child.Kill()
package proctest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/standin"
	"github.com/pacerhq/pacer/services/internal/config"
)

// marker, set to "1", tells the re-executed test binary to run the service.
const marker = "PACER_TEST_CHILD"

// Main is the body of TestMain for a package whose tests start children.
// In a child it loads the AWS configuration (sdk/awsclient) and the
// settings declare declares from the environment (config.FromEnv, under
// name), then calls run with a context that SIGTERM cancels, and exits:
// with status 1 and the error on stderr if any step fails, else 0.
// Otherwise it runs the tests against the stand-ins standins names
// (standin.RunTests).
func Main(m *testing.M, standins standin.Config, name string, declare func(*config.Set), run func(ctx context.Context, aws aws.Config) error) {
	if os.Getenv(marker) != "1" {
		standin.RunTests(m, standins)
		return
	}
	if err := serve(name, declare, run); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serve is a child's life: configuration, then run until SIGTERM.
func serve(name string, declare func(*config.Set), run func(context.Context, aws.Config) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		return err
	}
	if err := config.FromEnv(name, declare); err != nil {
		return err
	}
	return run(ctx, awsCfg)
}

// Child is a running child process.
type Child struct {
	t   testing.TB
	cmd *exec.Cmd
}

// Start starts a child: the test binary, running no test, with the test's
// environment plus env ("NAME=value" each) and the test's stderr. The
// child is SIGKILLed when the test process dies, and at the end of the test
// if it is still running.
func Start(t testing.TB, env ...string) *Child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), marker+"=1"), env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // it may be dead already
	return &Child{t: t, cmd: cmd}
}

// Kill SIGKILLs the child, as a crash would, and waits until it is gone.
// It fails the test if the signal cannot be sent.
func (c *Child) Kill() {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatal(err)
	}
	_ = c.cmd.Wait() // "signal: killed", as intended
}

// Stop sends the child SIGTERM, as a deployment stopping it would, and
// returns how it exited: nil after a graceful stop. It fails the test if
// the signal cannot be sent.
func (c *Child) Stop() error {
	c.t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.t.Fatal(err)
	}
	return c.cmd.Wait()
}
