package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// The images are the four binaries the committed template deploys, with
// the ports their task definitions map.
func TestDeployedBinaries(t *testing.T) {
	bins, err := Deployed(filepath.Join(repoRoot(t), TemplateFile))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(bins), "[{asyncevent-api [8081]} {asyncevent-events [9092]} {asyncevent-worker [9091]} {photo-api [8082]}]"; got != want {
		t.Errorf("Deployed: %s, want %s", got, want)
	}
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(repoRoot(t), "services", b.Name, "main.go")); err != nil {
			t.Errorf("%s: no services/%s/main.go: %v", b.Name, b.Name, err)
		}
	}
}

// A template without task definitions, or with one whose container is
// not one named binary, is refused.
func TestDeployedRefusesOtherTemplates(t *testing.T) {
	for name, tpl := range map[string]string{
		"no task definition": `{"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}`,
		"two containers":     `{"Resources": {"T": {"Type": "AWS::ECS::TaskDefinition", "Properties": {"ContainerDefinitions": [{"Name": "a"}, {"Name": "b"}]}}}}`,
		"unnamed container":  `{"Resources": {"T": {"Type": "AWS::ECS::TaskDefinition", "Properties": {"ContainerDefinitions": [{"PortMappings": [{"ContainerPort": 1}]}]}}}}`,
		"not JSON":           `Resources: {}`,
	} {
		path := filepath.Join(t.TempDir(), "t.json")
		if err := os.WriteFile(path, []byte(tpl), 0o600); err != nil {
			t.Fatal(err)
		}
		if bins, err := Deployed(path); err == nil {
			t.Errorf("%s: %v, no error", name, bins)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	for in, want := range map[string]string{
		"linux/amd64,linux/arm64": "[linux/amd64 linux/arm64]",
		"linux/arm64":             "[linux/arm64]",
		"linux":                   "error",
		"linux/arm/v7":            "error",
		"linux/amd64,linux/amd64": "error",
		"/amd64":                  "error",
		"":                        "error",
	} {
		ps, err := parsePlatforms(in)
		got := fmt.Sprint(ps)
		if err != nil {
			got = "error"
		}
		if got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
