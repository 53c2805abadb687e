// Package workerpool runs AsyncEvent workers as separate OS processes —
// the real asyncevent-worker binary, like ECS tasks — and scales them on
// queue depth with sdk/autoscale's Controller. `make run` (services/dev)
// uses it: each worker has its own ops port (/metrics, /healthz, /readyz),
// a worker killed from outside is noticed and replaced at the next
// evaluation, and the others finish its messages after their visibility
// timeout.
package workerpool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"
)

// Config says how to start a worker process.
type Config struct {
	// Command is the worker binary; Args its arguments.
	Command string
	Args    []string
	// Env is added to the parent's environment for each worker (table,
	// queue, concurrency…); the pool adds PACER_WORKER_OPS_ADDR.
	Env []string
	// StopTimeout is how long a worker told to stop (SIGTERM) may take to
	// finish its messages before it is killed (default 20 s).
	StopTimeout time.Duration
	// Stderr receives the workers' output (default io.Discard).
	Stderr io.Writer
	// Log receives the pool's own lines (default: discarded).
	Log *slog.Logger
}

// Proc is a running worker process.
type Proc struct {
	PID int
	// OpsAddr is where its /metrics, /healthz and /readyz are.
	OpsAddr string

	cmd    *exec.Cmd
	exited chan struct{}
}

// Pool is a set of worker processes. Its methods are safe for concurrent
// use.
type Pool struct {
	cfg Config

	mu    sync.Mutex
	procs []*Proc // oldest first
	wg    sync.WaitGroup
}

// New returns an empty pool.
func New(cfg Config) *Pool {
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = 20 * time.Second
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Pool{cfg: cfg}
}

// Procs returns the live workers, oldest first.
func (p *Pool) Procs() []Proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Proc, len(p.procs))
	for i, pr := range p.procs {
		out[i] = Proc{PID: pr.PID, OpsAddr: pr.OpsAddr}
	}
	return out
}

// Running is how many workers are alive.
func (p *Pool) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.procs)
}

// Scale starts workers or stops the newest ones until n run. Stopping is
// graceful (SIGTERM: a worker finishes and deletes what it holds) and
// Scale waits for it, up to StopTimeout, then kills it.
func (p *Pool) Scale(n int) error {
	var errs []error
	for p.Running() < n {
		if err := p.start(); err != nil {
			return err
		}
	}
	p.mu.Lock()
	var victims []*Proc
	if len(p.procs) > n {
		victims = slices.Clone(p.procs[n:])
		p.procs = p.procs[:n]
	}
	p.mu.Unlock()
	// Stop them together, as ECS stops tasks.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, pr := range victims {
		wg.Go(func() {
			if err := p.stop(pr); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Close stops every worker.
func (p *Pool) Close() error {
	err := p.Scale(0)
	p.wg.Wait()
	return err
}

// start starts one worker on a free loopback ops port.
func (p *Pool) start() error {
	addr, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.Command(p.cfg.Command, p.cfg.Args...)
	cmd.Env = append(append(os.Environ(), p.cfg.Env...), "PACER_WORKER_OPS_ADDR="+addr)
	cmd.Stdout, cmd.Stderr = p.cfg.Stderr, p.cfg.Stderr
	// The workers die with the parent, as ECS tasks die with their service.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("workerpool: start %s: %w", p.cfg.Command, err)
	}
	pr := &Proc{PID: cmd.Process.Pid, OpsAddr: addr, cmd: cmd, exited: make(chan struct{})}
	p.mu.Lock()
	p.procs = append(p.procs, pr)
	p.mu.Unlock()
	p.cfg.Log.Info("worker started", "pid", pr.PID, "ops", "http://"+addr+"/metrics")
	p.wg.Go(func() {
		err := cmd.Wait()
		close(pr.exited)
		p.mu.Lock()
		gone := false
		for i, q := range p.procs {
			if q == pr { // it died on its own: it no longer runs
				p.procs = append(p.procs[:i], p.procs[i+1:]...)
				gone = true
				break
			}
		}
		p.mu.Unlock()
		if gone {
			p.cfg.Log.Warn("worker exited", "pid", pr.PID, "err", err)
		}
	})
	return nil
}

// stop stops one worker gracefully, killing it after StopTimeout.
func (p *Pool) stop(pr *Proc) error {
	_ = pr.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-pr.exited:
		p.cfg.Log.Info("worker stopped", "pid", pr.PID)
		return nil
	case <-time.After(p.cfg.StopTimeout):
		_ = pr.cmd.Process.Kill()
		<-pr.exited
		return fmt.Errorf("workerpool: worker %d did not stop within %s; killed", pr.PID, p.cfg.StopTimeout)
	}
}

// freePort returns a loopback address nobody listens on now.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("workerpool: ops port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// Wait blocks until ctx is done.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
