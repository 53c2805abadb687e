package stack

import (
	"sort"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/alarm"
)

// The namespace's file is applied first, whatever the binaries are
// called: Manifests refuses a file that would sort before it.
func TestManifestsApplyTheNamespaceFirst(t *testing.T) {
	spec := func(names ...string) *Spec {
		s := &Spec{Scaling: alarm.Defaults().Scaling, Queue: Queue{Name: "q"}}
		for i, n := range names {
			s.Services = append(s.Services, Service{Name: n, Port: 8080, HealthPath: "/healthz", ReadyPath: "/healthz", Public: true, Scaled: i == 0})
		}
		return s
	}
	files, err := spec("asyncevent-worker", "photo-api").Manifests()
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	if names[0] != NamespaceFile || !strings.Contains(string(files[NamespaceFile]), "kind: Namespace") {
		t.Errorf("files in apply order %v: want %s, holding the Namespace, first", names, NamespaceFile)
	}
	if _, err := spec("asyncevent-worker", "0-api").Manifests(); err == nil {
		t.Error("Manifests wrote 0-api.yaml, which kubectl applies before the namespace exists")
	}
}
