package photobackend

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// A database that does not admit the task (a security group drops the
// connection; here a listener that never answers) fails start-up within
// the start timeout, naming the host and what to check, and never the
// password; one that refuses the connection fails at once.
func TestOpenFailsFastWhenPostgresDoesNotAnswer(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept, then say nothing: the startup message waits
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	for _, c := range []struct {
		name, addr string
		within     time.Duration
	}{
		{"silent", silent.Addr().String(), 5 * time.Second},
		{"refused", closedAddr, 5 * time.Second},
	} {
		start := time.Now()
		_, err := OpenAPI(context.Background(), Config{
			DatabaseURL:  "postgres://pacer:s3cret-password@" + c.addr + "/pacer?sslmode=disable",
			StartTimeout: 500 * time.Millisecond,
		})
		took := time.Since(start)
		if err == nil {
			t.Fatalf("%s: OpenAPI succeeded against %s", c.name, c.addr)
		}
		msg := err.Error()
		host, _, _ := net.SplitHostPort(c.addr)
		for _, want := range []string{"cannot reach " + host, "DatabaseSecurityGroupId", "docs/deploy.md"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", c.name, msg, want)
			}
		}
		if strings.Contains(msg, "s3cret-password") {
			t.Errorf("%s: the error shows the password: %s", c.name, msg)
		}
		if took > c.within {
			t.Errorf("%s: failed after %s, want within %s", c.name, took, c.within)
		}
	}
}
