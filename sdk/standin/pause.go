package standin

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
)

// The stand-ins a Stack can pause (Stack.Pause).
const (
	DynamoDB = "DynamoDB Local"
	SQS      = "local-aws-sqs"
	Postgres = "Postgres" // a private cluster (Config.PrivatePostgres); the whole cluster, backends too
)

// ErrNotStarted reports that a Stack did not start the stand-in it was
// asked to pause (a Postgres it found running is not its own).
var ErrNotStarted = errors.New("standin: not started by this stack")

// Pause stops the stand-in named (DynamoDB, SQS, Postgres) as a hung
// dependency stops: every process of its process group gets SIGSTOP, so
// its sockets stay open, the kernel still accepts connections and
// buffers requests, and nothing answers until resume (SIGCONT) is
// called. What was sent meanwhile is then processed: a call the client
// gave up on may still land. resume is safe to call more than once, and
// Close resumes a paused stand-in before stopping it. Pause only a
// stand-in no other test uses: a private Stack's.
func (s *Stack) Pause(name string) (resume func() error, err error) {
	var p *process
	for _, q := range s.procs {
		if q.name == name {
			p = q
		}
	}
	if p == nil || p.cmd == nil || p.cmd.Process == nil || p.exited() {
		return nil, fmt.Errorf("%w: %s", ErrNotStarted, name)
	}
	pgid := p.cmd.Process.Pid // startProcess makes each stand-in its group's leader
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("standin: pause %s: %w", name, err)
	}
	var once sync.Once
	resume = func() error {
		var err error
		once.Do(func() {
			if e := syscall.Kill(-pgid, syscall.SIGCONT); e != nil && !p.exited() {
				err = fmt.Errorf("standin: resume %s: %w", name, e)
			}
		})
		return err
	}
	p.paused = resume
	return resume, nil
}
