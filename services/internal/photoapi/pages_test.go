package photoapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/phototest"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/testkit/browsertest"
)

// The demo data behind the pages, with images served from a folder
// standing in for the CDN.
func pagesStack(t *testing.T) (*phototest.Env, *httptest.Server, Demo) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	k := phototest.New(ctx, t)
	d, err := SeedDemo(ctx, k.Directory, k.Ingest, k.Timing)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteDemoImages(dir, d.Keys); err != nil {
		t.Fatal(err)
	}
	cdn := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(cdn.Close)
	v, err := auth.NewVerifier(ctx, auth.Config{HS256Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	NewAPI(mux, kitDeps(k), v, true)
	if err := RegisterPages(mux, true, cdn.URL, nil); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return k, srv, d
}

// ulidsDescending is a script: the gallery's photos are newest first.
const ulidsDescending = `(() => { const u = [...document.querySelectorAll("#gallery figure")].map(f => f.dataset.ulid);
  return u.every((x, i) => i === 0 || u[i-1] > x); })()`

// A runner finds a bib's photos, newest first, page by page, and sees the
// images; an unknown event says so.
func TestRunnerPage(t *testing.T) {
	_, srv, d := pagesStack(t)
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/?event=" + d.Event + "&bib=1001&limit=2")
	b.WaitFor(20*time.Second, "the first page", `document.querySelectorAll("#gallery figure").length === 2 && !document.querySelector("#more").hidden`)
	b.Click("#more")
	b.WaitFor(20*time.Second, "the second page", `document.querySelectorAll("#gallery figure").length === 4`)
	if !browsertest.Eval[bool](b, ulidsDescending) {
		t.Error("photos are not newest first")
	}
	b.WaitFor(20*time.Second, "the images to load", `[...document.querySelectorAll("#gallery img")].every(i => i.complete && i.naturalWidth === 160)`)
	for !browsertest.Eval[bool](b, `document.querySelector("#more").hidden`) {
		n := browsertest.Eval[int](b, `document.querySelectorAll("#gallery figure").length`)
		b.Click("#more")
		b.WaitFor(20*time.Second, "the next page", `document.querySelectorAll("#gallery figure").length > `+strconv.Itoa(n))
	}
	b.WaitText(5*time.Second, "#message", "photos.")
	if !browsertest.Eval[bool](b, ulidsDescending) {
		t.Error("photos are not newest first across pages")
	}
	b.Navigate(srv.URL + "/ui/?event=no-such-event&bib=1001")
	b.WaitText(20*time.Second, "#message", "No such event")
	b.NoErrors()
}

// An organizer searches by bib (the runner's hostile name shows as text),
// by photographer, and the gallery.
func TestOrganizerPage(t *testing.T) {
	k, srv, d := pagesStack(t)
	const name = `<img src=x onerror="window.__xss=1"><b>Mallory</b>`
	if _, err := k.Directory.ImportRunners(context.Background(), d.Org, d.Event, []photo.Runner{{Bib: "1001", Name: name}}); err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/organizer.html?kind=bib&event=" + d.Event + "&term=1001&limit=3")
	b.WaitText(20*time.Second, "#heading", "Mallory")
	if got := b.Text("#heading"); got != "Bib 1001: "+name {
		t.Errorf("heading %q", got)
	}
	if browsertest.Eval[bool](b, `!!document.querySelector("#heading img, #heading b") || window.__xss === 1`) {
		t.Error("the runner's name was rendered as HTML")
	}
	b.Navigate(srv.URL + "/ui/organizer.html?kind=photographer&term=" + d.Photographers[0] + "&limit=5")
	b.WaitFor(20*time.Second, "the photographer's photos", `document.querySelectorAll("#gallery figure").length === 5`)
	if cap := b.Text("#gallery figcaption"); !strings.Contains(cap, "Studio Kim") {
		t.Errorf("caption %q does not name the photographer", cap)
	}
	b.Navigate(srv.URL + "/ui/organizer.html?kind=gallery&event=" + d.Event + "&limit=10")
	b.WaitFor(20*time.Second, "the gallery", `document.querySelectorAll("#gallery figure").length === 10 && !document.querySelector("#more").hidden`)
	if !browsertest.Eval[bool](b, ulidsDescending) {
		t.Error("gallery is not newest first")
	}
	b.NoErrors()
}

// A runner's "photos near my times": the photos taken when the bib passed
// each camera, those without the bib among them, each naming its timing
// point; a bib hidden at the runner's request finds none.
func TestRunnerPageNearMyTimes(t *testing.T) {
	k, srv, d := pagesStack(t)
	// The demo loads again unchanged (make run on a stack that has it).
	if again, err := SeedDemo(context.Background(), k.Directory, k.Ingest, k.Timing); err != nil || again.Photos != d.Photos {
		t.Fatalf("seeding the demo again: %d photos, %v", again.Photos, err)
	}
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/?event=" + d.Event + "&bib=" + d.Bibs[0])
	b.WaitFor(20*time.Second, "the photos near the runner's times", `document.querySelectorAll("#nearby-gallery figure").length >= 2`)
	if !browsertest.Eval[bool](b, `[...document.querySelectorAll("#nearby-gallery figure")].some(f => f.dataset.hasBib === "false" && f.dataset.point === "10k")`) {
		t.Error("no photo without the bib, found by time at 10 km")
	}
	if cap := b.Text("#nearby-gallery figcaption"); !strings.Contains(cap, "near ") || !strings.Contains(cap, "found by your time") {
		t.Errorf("caption %q does not say how it was found", cap)
	}
	b.WaitFor(20*time.Second, "the images to load", `[...document.querySelectorAll("#nearby-gallery img")].every(i => i.complete && i.naturalWidth === 160)`)
	if _, err := k.Privacy.RemoveBib(context.Background(), d.Org, d.Event, d.Bibs[0], photo.HideMode); err != nil {
		t.Fatal(err)
	}
	b.Navigate(srv.URL + "/ui/?event=" + d.Event + "&bib=" + d.Bibs[0])
	b.WaitText(20*time.Second, "#nearby-message", "No photos found.")
	if n := browsertest.Eval[int](b, `document.querySelectorAll("#nearby-gallery figure").length`); n != 0 {
		t.Errorf("a hidden bib shows %d photos near its times", n)
	}
	b.NoErrors()
}

// A runner finds their bib by name (with a typo) where the organizer
// allows it, and follows it to their photos; where not, the page has no
// name box. An organizer searches runners by name.
func TestNameSearchBox(t *testing.T) {
	k, srv, d := pagesStack(t)
	b := browsertest.New(t)
	b.Navigate(srv.URL + "/ui/?event=" + d.Event + "&name=" + "%EA%B9%80%EB%AF%BC%EC%91%A4") // 김민쑤
	b.WaitFor(20*time.Second, "the runners found", `document.querySelectorAll("#runners li").length > 0`)
	if browsertest.Eval[bool](b, `document.querySelector("#namebox").hidden`) {
		t.Error("the name box is hidden on an event that allows it")
	}
	if got := browsertest.Eval[string](b, `document.querySelector("#runners li").dataset.bib`); got != "1001" {
		t.Errorf("first runner found: bib %q, want 1001 (김민수)", got)
	}
	if txt := b.Text("#runners li"); !strings.Contains(txt, "김민수") || !strings.Contains(txt, "photo") {
		t.Errorf("first runner %q", txt)
	}
	b.Navigate(browsertest.Eval[string](b, `document.querySelector("#runners li a").href`)) // following the link
	b.WaitFor(20*time.Second, "the bib's photos", `document.querySelectorAll("#gallery figure").length > 0`)

	b.Navigate(srv.URL + "/ui/organizer.html?kind=name&event=" + d.Event + "&term=Jiyeon")
	b.WaitFor(20*time.Second, "the organizer's name search", `document.querySelectorAll("#runners li").length > 0`)
	if txt := b.Text("#runners li"); !strings.Contains(txt, "Jiyeon") {
		t.Errorf("organizer's first runner %q", txt)
	}

	off := false
	if _, err := k.Directory.UpdateEvent(context.Background(), d.Org, d.Event, photo.EventPatch{PublicNameSearch: &off}); err != nil {
		t.Fatal(err)
	}
	b.Navigate(srv.URL + "/ui/?event=" + d.Event + "&name=Kim")
	b.WaitText(20*time.Second, "#message", "bib number")
	if !browsertest.Eval[bool](b, `document.querySelector("#namebox").hidden && document.querySelectorAll("#runners li").length === 0`) {
		t.Error("the name box shows, or runners were listed, on an event that does not allow it")
	}
	b.NoErrors()
}
