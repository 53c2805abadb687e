package standin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// startDynamoDB runs DynamoDB Local in memory on a free port (it cannot
// pick one itself: -port 0 is refused).
func startDynamoDB(ctx context.Context, cfg Config) (*process, string, error) {
	emu := filepath.Join(cfg.Dir, "dynamodb-local")
	jar := filepath.Join(emu, "DynamoDBLocal.jar")
	if !fileExists(jar) {
		return nil, "", fmt.Errorf("%w: %s is missing; run `make deps` (or %s)", ErrNotInstalled, jar, filepath.Join(cfg.Dir, "install.sh"))
	}
	java, err := lookPath("java", "install a Java 17+ runtime (Debian: apt-get install openjdk-17-jre-headless)")
	if err != nil {
		return nil, "", err
	}
	p, port, err := startOnFreePort(ctx, "DynamoDB Local", cfg.StartTimeout, func(port int) (*process, error) {
		args := append(jvmFlags(cfg.Throughput),
			"-Djava.library.path="+filepath.Join(emu, "DynamoDBLocal_lib"),
			"-jar", jar,
			"-port", strconv.Itoa(port), "-inMemory", "-sharedDb", "-disableTelemetry")
		cmd := exec.CommandContext(context.WithoutCancel(ctx), java, args...)
		cmd.Dir = emu
		// On a taken port Jetty's bind fails in the main thread and the JVM
		// stays up; its output says so.
		watch := newOutputWatch("Failed to bind", `Exception in thread "main"`)
		out := io.MultiWriter(cfg.Log, watch)
		cmd.Stdout, cmd.Stderr = out, out
		p, err := startProcess("DynamoDB Local", cmd, cfg.Log)
		if err == nil {
			p.fatal = watch.hit
		}
		return p, err
	}, func(ctx context.Context, port int) error {
		// Any HTTP answer to a DynamoDB call means a server is up.
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+hostPort(port), strings.NewReader("{}"))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810.ListTables")
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	endpoint := "http://" + hostPort(port)
	return p, endpoint, nil
}

// jvmFlags are DynamoDB Local's JVM settings: quick start-up (C1 only,
// serial GC, small heap) for tests, or peak throughput (Config.Throughput).
func jvmFlags(throughput bool) []string {
	if throughput {
		return []string{"-Xms512m", "-XX:+UseParallelGC"}
	}
	return []string{"-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"}
}
