package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/pacerhq/pacer/services/internal/photoapi"
)

// make run's image server serves the previews to anyone and the originals
// only by a link signed with the run's key: not unsigned, not from the
// previews' folder.
func TestCDNServesOriginalsOnlyBySignedLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	previews, originals := filepath.Join(dir, "cdn"), filepath.Join(dir, "originals")
	const preview, original = "o/e/processed/1.jpg", "o/e/raw/DSC_0001.jpg"
	if err := photoapi.WriteDemoImages(previews, []string{preview}); err != nil {
		t.Fatal(err)
	}
	if err := photoapi.WriteDemoOriginals(originals, []string{original}); err != nil {
		t.Fatal(err)
	}
	secret := []byte("dev-cdn-test-key-dev-cdn-test-key")
	base, stop, err := serveCDN(previews, originals, secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	signed, err := (&photoapi.LocalOriginals{BaseURL: base + originalsPath, Key: secret}).Sign(context.Background(), original, time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want int
	}{
		{base + "/" + preview, 200},
		{signed, 200},
		{base + originalsPath + "/" + original, 403},
		{base + "/" + original, 404},
		// No folder is listed: the listing would name every photo.
		{base + "/", 404},
		{base + "/o/e/processed/", 404},
		{base + "/o/e/processed", 404},
	} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.url, resp.StatusCode, c.want)
		}
	}
}
