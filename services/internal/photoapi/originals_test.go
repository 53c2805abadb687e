package photoapi

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/testkit/iamtest"
)

// A signed link to a local original works until it expires; an expired,
// altered or otherwise signed link is 403.
func TestLocalOriginalLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const key = "o/e/raw/DSC_0001.jpg"
	if err := WriteDemoOriginals(dir, []string{key}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	secret := []byte("local-originals-test-key-of-32-bytes!")
	srv := httptest.NewServer(http.StripPrefix("/originals", OriginalsHandler(dir, secret, func() time.Time { return now })))
	t.Cleanup(srv.Close)
	signer := &LocalOriginals{BaseURL: srv.URL + "/originals", Key: secret}
	sign := func(s *LocalOriginals, k string, exp time.Time) string {
		u, err := s.Sign(context.Background(), k, exp)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	get := func(u string) (int, []byte) {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.Bytes()
	}
	valid := sign(signer, key, now.Add(time.Minute))
	if code, b := get(valid); code != 200 || !bytes.HasPrefix(b, []byte{0xff, 0xd8}) {
		t.Fatalf("valid link: %d, %d bytes", code, len(b))
	}
	u, _ := url.Parse(valid)
	q := u.Query()
	alter := func(f func(u *url.URL, q url.Values)) string {
		c := *u
		cq := url.Values{}
		for k, v := range q {
			cq[k] = append([]string(nil), v...)
		}
		f(&c, cq)
		c.RawQuery = cq.Encode()
		return c.String()
	}
	for name, link := range map[string]string{
		"expired":      sign(signer, key, now),
		"expiry moved": alter(func(_ *url.URL, q url.Values) { q.Set("expires", "1900000000") }),
		"signature altered": alter(func(_ *url.URL, q url.Values) {
			s := []byte(q.Get("signature"))
			s[0] ^= 1
			q.Set("signature", string(s))
		}),
		"no signature":        alter(func(_ *url.URL, q url.Values) { q.Del("signature") }),
		"another original":    alter(func(u *url.URL, _ url.Values) { u.Path = strings.Replace(u.Path, "DSC_0001", "DSC_0002", 1) }),
		"signed with another": sign(&LocalOriginals{BaseURL: signer.BaseURL, Key: []byte("another-key-another-key-another-k")}, key, now.Add(time.Minute)),
	} {
		if code, _ := get(link); code != http.StatusForbidden {
			t.Errorf("%s link: %d, want 403", name, code)
		}
	}
}

// The presigned GET carries its expiry and signature, and signing calls
// nothing.
func TestS3PresignCallsNothing(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	s3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	t.Cleanup(s3.Close)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(s3.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}
	// Under a policy enforced as AWS would (iamtest), the presign is the
	// call that needs s3:GetObject on the object: without it, no link.
	policy, err := iamtest.ParsePolicy(map[string]any{"Version": "2012-10-17", "Statement": []any{
		map[string]any{"Effect": "Allow", "Action": []any{"s3:GetObject"}, "Resource": []any{"arn:aws:s3:::pacer-photos/*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	enf := iamtest.New(policy, iamtest.ARNs{Region: "us-east-1", Account: "123456789012"})
	cfg = enf.Attach(cfg)
	now := time.Now()
	o := NewS3Originals(cfg, "pacer-photos")
	o.Now = func() time.Time { return now }
	link, err := o.Sign(context.Background(), "o/e/raw/DSC 0001.jpg", now.Add(10*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("X-Amz-Expires") != "600" || !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(q.Get("X-Amz-Signature")) ||
		!strings.HasPrefix(q.Get("X-Amz-Credential"), "AKIDEXAMPLE/") || !strings.Contains(u.Path, "o/e/raw/DSC 0001.jpg") && !strings.Contains(u.EscapedPath(), "o/e/raw/DSC%200001.jpg") {
		t.Fatalf("presigned %s", link)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("signing made %d calls", n)
	}
	if cs := enf.Checks(); len(cs) != 1 || cs[0].Action != "s3:GetObject" || cs[0].Resource != "arn:aws:s3:::pacer-photos/o/e/raw/DSC 0001.jpg" || !cs[0].Allowed {
		t.Fatalf("the presign was authorized as %v, want s3:GetObject on the object", cs)
	}
	enf.SetPolicy(policy.Without("s3:GetObject"))
	if _, err := o.Sign(context.Background(), "o/e/raw/DSC 0001.jpg", now.Add(10*time.Minute)); !iamtest.IsAccessDenied(err) {
		t.Fatalf("presign without s3:GetObject: %v, want access denied", err)
	}
}

// Organizers get a signed link to an original, which serves it; without an
// originals store the route says so (503); another organizer's photo is
// not found.
func TestOrganizerGetsOriginal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secret := []byte("local-originals-test-key-of-32-bytes!")
	files := httptest.NewServer(http.StripPrefix("/originals", OriginalsHandler(dir, secret, nil)))
	t.Cleanup(files.Close)
	e := newEnvWith(t, func(d *Deps) {
		d.Originals, d.OriginalTTL = &LocalOriginals{BaseURL: files.URL + "/originals", Key: secret}, time.Minute
	})
	e.setup("o1", "e1", "p1", true)
	tok := orgToken(t, "o1")
	r := rec(1, "p1", "1000")
	e.do("POST", "/events/e1/photos", 201, tok, r)
	if err := WriteDemoOriginals(dir, []string{r["rawKey"].(string)}); err != nil {
		t.Fatal(err)
	}
	got := decode[struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expiresAt"`
	}](t, body(e.do("GET", "/events/e1/photos/"+r["ulid"].(string)+"/original", 200, tok)))
	if d := time.Until(got.ExpiresAt); d < 50*time.Second || d > time.Minute {
		t.Errorf("expires in %v, want about a minute", d)
	}
	resp, err := http.Get(got.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(got.URL, r["rawKey"].(string)) {
		t.Fatalf("original %s: %d", got.URL, resp.StatusCode)
	}
	e.do("GET", "/events/e1/photos/"+r["ulid"].(string)+"/original", 404, orgToken(t, "o2"))
	bare := newEnv(t)
	bare.setup("o1", "e1", "p1", true)
	bare.do("POST", "/events/e1/photos", 201, tok, r)
	bare.do("GET", "/events/e1/photos/"+r["ulid"].(string)+"/original", 503, tok)
}

// Every public route, taken from the spec (a new one is covered without
// being named here), answers without an original's key or link: the
// photos' rawKey, or any URL of an original, never reaches the public.
func TestPublicRoutesShowNoOriginal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.nameSetup(true, map[string]any{"publicNameSearch": true})
	var photos []map[string]any
	for i := range 3 {
		r := rec(10+i, "", "1", "5")
		r["rawKey"] = "originals/SECRET-RAW-" + r["ulid"].(string) + ".cr3"
		r["originalFilename"] = "SECRET-FILENAME.cr3"
		e.do("POST", "/events/e/photos", 201, tok, r)
		photos = append(photos, r)
	}
	// A value for each path and query parameter a public route may have;
	// a route with another one fails here until it is taught.
	values := map[string]string{"eventId": "e", "bib": "1", "name": "김민수", "ulid": photos[0]["ulid"].(string)}
	paths := e.raw.OpenAPI().Paths
	var walked []string
	for p, item := range paths {
		if !strings.HasPrefix(p, "/public") {
			continue
		}
		for method, op := range map[string]*huma.Operation{"GET": item.Get, "POST": item.Post, "PUT": item.Put, "PATCH": item.Patch, "DELETE": item.Delete} {
			if op == nil {
				continue
			}
			path := p
			q := url.Values{}
			for _, prm := range op.Parameters {
				v, ok := values[prm.Name]
				if !ok && (prm.Required || prm.In == "path") {
					t.Fatalf("%s %s: no test value for its %s parameter %q: add one", method, p, prm.In, prm.Name)
				}
				switch {
				case prm.In == "path":
					path = strings.ReplaceAll(path, "{"+prm.Name+"}", url.PathEscape(v))
				case prm.In == "query" && ok:
					q.Set(prm.Name, v)
				}
			}
			if len(q) > 0 {
				path += "?" + q.Encode()
			}
			res := e.api.Do(method, path)
			if res.Code != 200 {
				t.Errorf("%s %s: %d, want 200 (the walk must see a full answer): %s", method, path, res.Code, res.Body.String())
			}
			b := res.Body.String()
			for _, leak := range []string{"SECRET-RAW", "rawKey", "originals/", "SECRET-FILENAME", "X-Amz-Signature", "signature="} {
				if strings.Contains(b, leak) {
					t.Errorf("%s %s shows %q: %s", method, path, leak, b)
				}
			}
			walked = append(walked, method+" "+p)
		}
	}
	sort.Strings(walked)
	if len(walked) < 3 {
		t.Fatalf("walked only %v", walked)
	}
	t.Logf("walked %v", walked)
}

// The demo previews carry a visible watermark that the originals do not.
func TestDemoPreviewsAreWatermarked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const key = "k.jpg"
	if err := WriteDemoImages(filepath.Join(dir, "p"), []string{key}); err != nil {
		t.Fatal(err)
	}
	if err := WriteDemoOriginals(filepath.Join(dir, "o"), []string{key}); err != nil {
		t.Fatal(err)
	}
	load := func(sub string) image.Image {
		f, err := os.Open(filepath.Join(dir, sub, key))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := jpeg.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	preview, original := load("p"), load("o")
	marked := 0
	for y := WatermarkRect.Min.Y; y < WatermarkRect.Max.Y; y++ {
		for x := WatermarkRect.Min.X; x < WatermarkRect.Max.X; x++ {
			pr, pg, pb, _ := preview.At(x, y).RGBA()
			or, og, ob, _ := original.At(x, y).RGBA()
			if pr>>8 > 220 && pg>>8 > 220 && pb>>8 > 220 && (or>>8 < 200 || og>>8 < 200 || ob>>8 < 200) {
				marked++
			}
		}
	}
	if marked < 200 {
		t.Fatalf("%d watermark pixels, want the letters of %s (hundreds)", marked, WatermarkText)
	}
}
