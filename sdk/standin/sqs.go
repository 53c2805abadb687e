package standin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startSQS runs local-aws-sqs on a loopback port the kernel picks when the
// server binds it (sqs-server.mjs reports it in its READY line), so no other
// process can take the port between a pick and the bind.
func startSQS(ctx context.Context, cfg Config) (*process, string, error) {
	if !fileExists(filepath.Join(cfg.Dir, "node_modules", "local-aws-sqs", "package.json")) {
		return nil, "", fmt.Errorf("%w: local-aws-sqs is not in %s/node_modules; run `make deps` (or %s)", ErrNotInstalled, cfg.Dir, filepath.Join(cfg.Dir, "install.sh"))
	}
	node, err := lookPath("node", "install Node.js 20+ (Debian: apt-get install nodejs npm)")
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(context.WithoutCancel(ctx), node, filepath.Join(cfg.Dir, "sqs-server.mjs"), "0")
	cmd.Dir = cfg.Dir
	pr, pw := io.Pipe()
	cmd.Stdout = io.MultiWriter(pw, cfg.Log)
	p, err := startProcess("local-aws-sqs", cmd, cfg.Log)
	if err != nil {
		return nil, "", err
	}
	ready := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				port, err := strconv.Atoi(strings.TrimSpace(rest))
				if err == nil && port > 0 {
					ready <- port
					break
				}
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() { <-p.done; pw.Close() }()
	var port int
	select {
	case port = <-ready:
	case <-p.done:
		return nil, "", fmt.Errorf("standin: local-aws-sqs exited before it was ready: %v", p.waitErr)
	case <-time.After(cfg.StartTimeout):
		_ = p.stop()
		return nil, "", fmt.Errorf("standin: local-aws-sqs not ready after %s", cfg.StartTimeout)
	}
	addr := hostPort(port)
	if err := waitReady(ctx, p, cfg.StartTimeout, func(ctx context.Context) error { return dialable(ctx, addr) }); err != nil {
		_ = p.stop()
		return nil, "", err
	}
	return p, "http://" + addr, nil
}
