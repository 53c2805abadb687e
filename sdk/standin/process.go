package standin

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
	// fatal, when set, is closed once the process's output says it cannot
	// start; it may stay alive all the same (DynamoDB Local's JVM does when
	// its port is taken).
	fatal chan struct{}
	// paused, when set, resumes the process (Stack.Pause): a stopped
	// process ignores SIGTERM until it is continued.
	paused func() error
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

// failed reports whether the process has ended or said it cannot start.
func (p *process) failed() bool {
	if p.exited() {
		return true
	}
	if p.fatal == nil {
		return false
	}
	select {
	case <-p.fatal:
		return true
	default:
		return false
	}
}

// outputWatch is an io.Writer for a process's output that closes hit at the
// first line containing one of marks.
type outputWatch struct {
	marks []string
	hit   chan struct{}
	mu    sync.Mutex
	line  []byte
	done  bool
}

func newOutputWatch(marks ...string) *outputWatch {
	return &outputWatch{marks: marks, hit: make(chan struct{})}
}

func (w *outputWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range b {
		if c != '\n' {
			if len(w.line) < 4096 {
				w.line = append(w.line, c)
			}
			continue
		}
		for _, m := range w.marks {
			if !w.done && strings.Contains(string(w.line), m) {
				w.done = true
				close(w.hit)
			}
		}
		w.line = w.line[:0]
	}
	return len(b), nil
}

// stop sends SIGTERM to the process group, waits up to 5 s, then SIGKILLs it.
func (p *process) stop() error {
	p.once.Do(func() {
		if p.paused != nil {
			_ = p.paused()
		}
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

// pickPort picks the port for a server that must be told its port (tests
// replace it to hand out a taken one).
var pickPort = freePort

// portAttempts bounds the ports startOnFreePort tries.
const portAttempts = 3

// startOnFreePort starts a server that must be given its port: it picks a
// free port, starts the server on it with start, and waits until ready
// answers and the server itself listens on the port. The port is free when
// picked but bound only once the server is up, and something else (another
// test binary's stand-in, a test server) can take it in between; then the
// server exits before it is ready, or something else answers in its stead.
// Either way (start should set the process's fatal channel for a server
// that stays up after failing to bind) the server is stopped and started
// again on another port, up to portAttempts times.
func startOnFreePort(ctx context.Context, name string, timeout time.Duration, start func(port int) (*process, error), ready func(ctx context.Context, port int) error) (*process, int, error) {
	var err error
	for range portAttempts {
		var port int
		if port, err = pickPort(); err != nil {
			return nil, 0, err
		}
		var p *process
		if p, err = start(port); err != nil {
			return nil, 0, err
		}
		err = waitReady(ctx, p, timeout, func(ctx context.Context) error {
			if err := ready(ctx, port); err != nil {
				return err
			}
			return p.owns(port)
		})
		if err == nil {
			return p, port, nil
		}
		failed := p.failed()
		_ = p.stop()
		if !failed || ctx.Err() != nil {
			return nil, 0, err
		}
		err = fmt.Errorf("%w (tried port %d: taken?)", err, port)
	}
	return nil, 0, fmt.Errorf("standin: %s did not start on %d ports: %w", name, portAttempts, err)
}

// owns returns an error if something other than the process listens on
// port so far; nil if the process does, or if /proc cannot tell.
func (p *process) owns(port int) error {
	if listens, known := p.listensOn(port); known && !listens {
		return fmt.Errorf("%s does not listen on port %d (yet), something else answers there", p.name, port)
	}
	return nil
}

// listensOn reports whether the process holds a socket listening on port;
// known is false when /proc cannot tell.
func (p *process) listensOn(port int) (listens, known bool) {
	inodes, err := listeningSockets(port)
	if err != nil {
		return false, false
	}
	dir := filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true, true
		}
	}
	return false, true
}

// listeningSockets returns the inodes of the TCP sockets (IPv4 and IPv6)
// listening on port, from /proc/net.
func listeningSockets(port int) (map[string]bool, error) {
	inodes := map[string]bool{}
	read := 0
	var lastErr error
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			lastErr = err
			continue
		}
		read++
		lines := strings.Split(string(b), "\n")
		for _, line := range lines[min(1, len(lines)):] {
			// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
			fs := strings.Fields(line)
			if len(fs) < 10 || fs[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fs[1], ":")
			if n, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(n) == port {
				inodes[fs[9]] = true
			}
		}
	}
	if read == 0 {
		return nil, lastErr
	}
	return inodes, nil
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
		if p != nil && p.failed() {
			return fmt.Errorf("standin: %s failed to start (see its output)", p.name)
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
