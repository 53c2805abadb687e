package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// placeholder is an envsubst placeholder of the manifests.
var placeholder = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]*)\}`)

// checkPlaceholders finds each `$` of the files that does not begin a
// ${NAME} placeholder (envsubst would replace or mangle it), and each
// placeholder that the Kubernetes section of docs/deploy.md does not set
// (NAME=).
func checkPlaceholders(files map[string][]byte, doc string) []string {
	var problems []string
	names := map[string]bool{}
	for f, b := range files {
		text := string(b)
		if n := strings.Count(text, "$"); n != len(placeholder.FindAllString(text, -1)) {
			problems = append(problems, problemf("%s has a $ that begins no ${NAME} placeholder", f))
		}
		for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
			names[m[1]] = true
		}
	}
	for n := range names {
		if !strings.Contains(doc, n+"=") {
			problems = append(problems, problemf("docs/deploy.md's Kubernetes section does not set the placeholder %s", n))
		}
	}
	sort.Strings(problems)
	return problems
}

// kubernetesSection is the section of docs/deploy.md on Kubernetes.
func kubernetesSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Deploy to Kubernetes")
	if !ok {
		t.Fatal(`docs/deploy.md has no section "## Deploy to Kubernetes"`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// Every placeholder is one the docs tell how to fill.
func TestK8sPlaceholdersAreDocumented(t *testing.T) {
	files, doc := committedManifests(t), kubernetesSection(t)
	for _, p := range checkPlaceholders(files, doc) {
		t.Error(p)
	}
	for _, c := range []struct {
		breaks string
		files  map[string][]byte
		doc    string
	}{
		{"an undocumented placeholder", map[string][]byte{"x.yaml": []byte("host: ${ADMIN_HOST}\n")}, doc},
		{"a bare $VAR", map[string][]byte{"x.yaml": []byte("home: $HOME\n")}, doc},
		{"docs without the certificate", files, strings.ReplaceAll(doc, "TLS_CERTIFICATE_ARN=", "")},
	} {
		if len(checkPlaceholders(c.files, c.doc)) == 0 {
			t.Errorf("the check passed %s", c.breaks)
		}
	}
}
