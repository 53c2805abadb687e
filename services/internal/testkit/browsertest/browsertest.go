// Package browsertest is the test kit for the services' pages: it starts
// headless Chromium (Debian's chromium, which `make deps` installs;
// PACER_CHROMIUM names another binary) through chromedp, with the flags
// that keep it off the network, records console errors, uncaught
// exceptions and CSP violations, and saves a screenshot when the test
// fails (under .cache/browser-artifacts/, git-ignored; the path is
// logged). A missing Chromium fails the test: it is never skipped.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser is one Chromium with one tab, for one test.
type Browser struct {
	t   testing.TB
	ctx context.Context

	mu     sync.Mutex
	errors []string
}

// Path finds the Chromium binary: $PACER_CHROMIUM, else chromium or
// chromium-browser on PATH.
func Path() (string, error) {
	if p := os.Getenv("PACER_CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("browsertest: Chromium not found (neither chromium nor chromium-browser is on PATH, and PACER_CHROMIUM is unset); `make deps` installs it (Debian's chromium package)")
}

// New starts Chromium for t with a fresh profile; it stops when t ends.
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := Path()
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{t: t, ctx: ctx}
	t.Cleanup(cancelAlloc)
	t.Cleanup(cancel)
	// The first run starts the browser, which lives as long as ctx: no
	// timeout on it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("browsertest: start %s: %v", path, err)
	}
	messages := chromedp.Console(ctx)
	go b.record(messages)
	t.Cleanup(b.screenshotOnFailure) // runs before the cancels above
	return b
}

// record keeps the page's errors: console.error calls, uncaught
// exceptions and browser log errors such as CSP violations. A 4xx the
// page asked for and handles (an unknown event, a closed one) is logged by
// Chromium as a network error: not a page error.
func (b *Browser) record(messages iter.Seq2[chromedp.ConsoleMessage, error]) {
	for m, err := range messages {
		if err != nil {
			return
		}
		if (m.Type == chromedp.ConsoleError && m.Source != "network") || m.IsException() {
			b.mu.Lock()
			b.errors = append(b.errors, m.String())
			b.mu.Unlock()
		}
	}
}

// Do runs steps in the tab, failing the test after timeout.
func (b *Browser) Do(timeout time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browsertest: %v", err)
	}
}

// Navigate opens url and waits for its body.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Do(30*time.Second, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
}

// Click clicks the element sel (a CSS selector) once it is visible.
func (b *Browser) Click(sel string) {
	b.t.Helper()
	b.Do(15*time.Second, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// SetValue sets the value of the input sel.
func (b *Browser) SetValue(sel, value string) {
	b.t.Helper()
	if !Eval[bool](b, fmt.Sprintf(`(e => !!e && (e.value = %q, true))(document.querySelector(%q))`, value, sel)) {
		b.t.Fatalf("browsertest: no input %s", sel)
	}
}

// Eval evaluates expr (JavaScript) in b's page and returns its value.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browsertest: evaluate %s: %v", expr, err)
	}
	return v
}

// Text is the textContent of the first element matching sel ("" if none).
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	return Eval[string](b, fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent`, sel))
}

// WaitFor waits until the JavaScript expression cond is truthy, failing
// the test with what after timeout.
func (b *Browser) WaitFor(timeout time.Duration, what, cond string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		b.t.Fatalf("browsertest: waiting %s for %s: %v\n(#message says %q)", timeout, what, err, b.Text("#message"))
	}
}

// WaitText waits until the textContent of sel contains want.
func (b *Browser) WaitText(timeout time.Duration, sel, want string) {
	b.t.Helper()
	b.WaitFor(timeout, fmt.Sprintf("%s to contain %q", sel, want),
		fmt.Sprintf(`(document.querySelector(%q) || {textContent: ""}).textContent.includes(%q)`, sel, want))
}

// Errors are the console errors, uncaught exceptions and CSP violations
// seen so far.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// NoErrors fails the test if the page logged an error.
func (b *Browser) NoErrors() {
	b.t.Helper()
	if errs := b.Errors(); len(errs) > 0 {
		b.t.Errorf("the page logged errors:\n  %s", strings.Join(errs, "\n  "))
	}
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

func (b *Browser) screenshotOnFailure() {
	if !b.t.Failed() {
		return
	}
	dir, err := artifactDir()
	if err != nil {
		b.t.Logf("browsertest: no screenshot: %v", err)
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		b.t.Logf("browsertest: no screenshot: %v", err)
		return
	}
	html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))) // the screenshot is what matters
	base := filepath.Join(dir, unsafeName.ReplaceAllString(b.t.Name(), "_"))
	if err := os.WriteFile(base+".png", png, 0o644); err != nil {
		b.t.Logf("browsertest: no screenshot: %v", err)
		return
	}
	_ = os.WriteFile(base+".html", []byte(html), 0o644) // the screenshot is what matters
	b.t.Logf("browsertest: screenshot of the failed page: %s.png (and its DOM in %s.html)", base, base)
}

// artifactDir is .cache/browser-artifacts at the module root.
func artifactDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			out := filepath.Join(dir, ".cache", "browser-artifacts")
			return out, os.MkdirAll(out, 0o755)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
