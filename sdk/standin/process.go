package standin

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// process is a child started in its own process group that dies with us.
type process struct {
	name    string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	cleanup func()
	once    sync.Once
	stdin   io.WriteCloser
}

// startProcess starts cmd in a new process group with Pdeathsig=SIGKILL, so
// the kernel kills it if this process dies without calling stop.
func startProcess(name string, cmd *exec.Cmd, log io.Writer) (*process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if cmd.Stdout == nil {
		cmd.Stdout = log
	}
	if cmd.Stderr == nil {
		cmd.Stderr = log
	}
	// A pipe on stdin that closes when we die: a second way for children
	// (the Node server) to notice that their parent is gone.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("standin: start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, done: make(chan struct{}), stdin: stdin}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to 5 s, then SIGKILLs it.
func (p *process) stop() error {
	p.once.Do(func() {
		if p.cmd != nil && p.cmd.Process != nil && !p.exited() {
			pgid := p.cmd.Process.Pid
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-p.done
			}
			// Anything left in the group (grandchildren) goes too.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		if p.stdin != nil {
			p.stdin.Close()
		}
		if p.cleanup != nil {
			p.cleanup()
		}
	})
	return nil
}

// freePort asks the kernel for a free loopback TCP port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls ready until it returns nil, the process exits, or the
// timeout passes.
func waitReady(ctx context.Context, p *process, timeout time.Duration, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if p != nil && p.exited() {
			return fmt.Errorf("standin: %s exited before it was ready: %v", p.name, p.waitErr)
		}
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		last = ready(rctx)
		rcancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("standin: %s not ready after %s: %v", p.name, timeout, last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// dialable reports whether addr accepts TCP connections.
func dialable(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// lookPath finds a program or returns an error saying how to install it.
func lookPath(prog, hint string) (string, error) {
	p, err := exec.LookPath(prog)
	if err != nil {
		return "", fmt.Errorf("%w: %q is not on PATH; %s", ErrNotInstalled, prog, hint)
	}
	return p, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
