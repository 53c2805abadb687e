package standin

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// startDynamoDB runs DynamoDB Local in memory on a free loopback port.
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
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(context.WithoutCancel(ctx), java,
		"-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.library.path="+filepath.Join(emu, "DynamoDBLocal_lib"),
		"-jar", jar,
		"-port", strconv.Itoa(port), "-inMemory", "-sharedDb", "-disableTelemetry")
	cmd.Dir = emu
	p, err := startProcess("DynamoDB Local", cmd, cfg.Log)
	if err != nil {
		return nil, "", err
	}
	endpoint := "http://" + hostPort(port)
	err = waitReady(ctx, p, cfg.StartTimeout, func(ctx context.Context) error {
		// Any HTTP answer to a DynamoDB call means the server is up.
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader("{}"))
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
		_ = p.stop()
		return nil, "", err
	}
	return p, endpoint, nil
}
