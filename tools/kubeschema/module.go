package kubeschema

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// downloadModule fetches path@version into the Go module cache with `go
// mod download` (the proxy, verified against the checksum database) and
// returns its folder there. It runs outside any module, so that no go.mod
// or go.sum changes.
func downloadModule(ctx context.Context, path, version string) (string, error) {
	tmp, err := os.MkdirTemp("", "kubeschema")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", path+"@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		return "", fmt.Errorf("kubeschema: go mod download %s@%s: %s", path, version, m.Error)
	}
	if err != nil {
		return "", fmt.Errorf("kubeschema: go mod download %s@%s: %w: %s", path, version, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if m.Dir == "" {
		return "", fmt.Errorf("kubeschema: go mod download %s@%s gave no folder: %s", path, version, out)
	}
	return m.Dir, nil
}
