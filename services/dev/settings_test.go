package main

import (
	"os"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/photoapi"
)

// docs/settings.md's tables are the ones the binaries declare (and print
// with -h): one source, so the two cannot drift.
func TestSettingsDocMatchesTheBinaries(t *testing.T) {
	readme, err := os.ReadFile("../../docs/settings.md")
	if err != nil {
		t.Fatal(err)
	}
	var api asynceventapi.Config
	var worker asynceventworker.Config
	var photo photoapi.Config
	var events asynceventevents.Config
	var dev flags
	for _, b := range []struct {
		name    string
		declare func(*config.Set)
	}{
		{"asyncevent-api", api.Declare},
		{"asyncevent-worker", worker.Declare},
		{"asyncevent-events", events.Declare},
		{"photo-api", photo.Declare},
		{"pacer-dev", dev.Declare},
	} {
		s := config.NewSet(b.name)
		b.declare(s)
		block := "<!-- settings: " + b.name + " -->\n" + s.Markdown() + "<!-- end settings -->\n"
		if !strings.Contains(string(readme), block) {
			t.Errorf("docs/settings.md lacks the settings of %s as the binary declares them; replace its block with:\n%s", b.name, block)
		}
	}
}
