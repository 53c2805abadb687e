package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/deploy/stack"
)

// Every image parameter takes an image by digest only (what make images
// builds and crane push prints), with the pattern the template declares;
// a tag, a digest that is not sha256 or not 64 lowercase hex digits, or
// two references in one value are refused.
func TestImageParametersTakeDigests(t *testing.T) {
	tpl := committedTemplate(t)
	params := tpl["Parameters"].(map[string]any)
	digest := strings.Repeat("0123456789abcdef", 4)
	cases := []struct {
		value string
		ok    bool
	}{
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/pacer/asyncevent-api@sha256:" + digest, true},
		{"registry.local:5000/pacer/worker@sha256:" + digest, true},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/pacer/asyncevent-api:v1", false},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/pacer/asyncevent-api:v1@sha256:" + digest[:63], false},
		{"pacer/asyncevent-api@sha256:" + strings.ToUpper(digest), false},
		{"pacer/asyncevent-api@sha512:" + digest + digest, false},
		{"pacer/asyncevent-api@sha256:" + digest + "\n", false},
		{"pacer/a pi@sha256:" + digest, false},
		{"a@b@sha256:" + digest, false},
		{"@sha256:" + digest, false},
	}
	var images []string
	for _, sv := range resources(tpl, "AWS::ECS::TaskDefinition") {
		c := sv["ContainerDefinitions"].([]any)[0].(map[string]any)
		images = append(images, c["Image"].(map[string]any)["Ref"].(string))
	}
	if len(images) != 4 {
		t.Fatalf("the task definitions' images are %v; want the four binaries'", images)
	}
	for _, name := range images {
		p := params[name].(map[string]any)
		if p["AllowedPattern"] != stack.ImageByDigest || !strings.Contains(p["Description"].(string), "by digest") {
			t.Errorf("%s: AllowedPattern %v, Description %q; want %s and a description saying by digest", name, p["AllowedPattern"], p["Description"], stack.ImageByDigest)
		}
	}
	re := regexp.MustCompile(stack.ImageByDigest)
	for _, c := range cases {
		if got := re.MatchString(c.value); got != c.ok {
			t.Errorf("%q: accepted %v, want %v", c.value, got, c.ok)
		}
	}
}

// Every task definition runs Linux on the CPU the CpuArchitecture
// parameter names: ARM64 (Graviton) unless X86_64 is chosen.
func TestTaskDefinitionsRunOnTheChosenCPU(t *testing.T) {
	tpl := committedTemplate(t)
	p := tpl["Parameters"].(map[string]any)[stack.ParamCPU].(map[string]any)
	if p["Default"] != "ARM64" || fmt.Sprint(p["AllowedValues"]) != "[ARM64 X86_64]" {
		t.Errorf("%s: default %v, allowed %v; want ARM64 of [ARM64 X86_64]", stack.ParamCPU, p["Default"], p["AllowedValues"])
	}
	tds := resources(tpl, "AWS::ECS::TaskDefinition")
	if len(tds) != 4 {
		t.Fatalf("%d task definitions, want 4", len(tds))
	}
	for id, td := range tds {
		rp, _ := td["RuntimePlatform"].(map[string]any)
		cpu, _ := rp["CpuArchitecture"].(map[string]any)
		if rp["OperatingSystemFamily"] != "LINUX" || cpu["Ref"] != stack.ParamCPU {
			t.Errorf("%s: RuntimePlatform %v; want LINUX on {Ref %s}", id, rp, stack.ParamCPU)
		}
	}
}
