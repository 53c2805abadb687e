package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/pacerhq/pacer/internal/repo"
)

// Source is what the images say of the source they were built from
// (their org.opencontainers.image.* labels), and Time, the one timestamp
// of every image: its creation time and every file's modification time.
type Source struct {
	URL      string // the repository, "https://github.com/pacerhq/pacer"
	Revision string // the commit; "" outside a git checkout
	Version  string // git describe: a tag, else the short commit, "-dirty" if changed
	Time     time.Time
}

// SourceOf reads the Source of the checkout at root from git. Time is
// SOURCE_DATE_EPOCH when set (reproducible-builds.org), else the commit's
// time, else the Unix epoch: never the clock, so the same source builds
// the same images. Outside a git checkout, Revision and Version are empty.
func SourceOf(ctx context.Context, root string) (Source, error) {
	s := Source{URL: "https://" + repo.Module, Time: time.Unix(0, 0).UTC()}
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	s.Revision = git("rev-parse", "HEAD")
	if s.Revision != "" {
		s.Version = git("describe", "--tags", "--always", "--abbrev=12", "--dirty")
		if sec, err := strconv.ParseInt(git("log", "-1", "--format=%ct"), 10, 64); err == nil {
			s.Time = time.Unix(sec, 0).UTC()
		}
	}
	if v, ok := os.LookupEnv("SOURCE_DATE_EPOCH"); ok {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil || sec < 0 {
			return s, fmt.Errorf("images: SOURCE_DATE_EPOCH=%q is not seconds since 1970", v)
		}
		s.Time = time.Unix(sec, 0).UTC()
	}
	return s, nil
}

// Labels are the OCI annotations of an image of binary built from s.
func (s Source) Labels(binary string) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":   binary,
		"org.opencontainers.image.source":  s.URL,
		"org.opencontainers.image.created": s.Time.Format(time.RFC3339),
	}
	if s.Revision != "" {
		l["org.opencontainers.image.revision"] = s.Revision
	}
	if s.Version != "" {
		l["org.opencontainers.image.version"] = s.Version
	}
	return l
}
