package photoapi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/services/internal/server"
)

// Originals signs links to photos' originals (their rawKey): organizers
// get them, the public never. A link works until it expires.
type Originals interface {
	// Sign returns a URL that fetches the object at key until expires.
	Sign(ctx context.Context, key string, expires time.Time) (string, error)
}

// DefaultOriginalTTL is how long a signed link to an original works
// unless PACER_PHOTO_ORIGINAL_TTL says otherwise.
const DefaultOriginalTTL = 15 * time.Minute

// S3Originals signs S3 presigned GETs of the originals in Bucket. Signing
// is offline (no call is made); the link is authorized by the signer's
// credentials (the task role), so the role needs s3:GetObject on the
// bucket's objects.
type S3Originals struct {
	Presign *s3.PresignClient
	Bucket  string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// NewS3Originals returns S3Originals over cfg's credentials.
func NewS3Originals(cfg aws.Config, bucket string) *S3Originals {
	return &S3Originals{Presign: s3.NewPresignClient(s3.NewFromConfig(cfg)), Bucket: bucket}
}

// Sign presigns a GET of key.
func (o *S3Originals) Sign(ctx context.Context, key string, expires time.Time) (string, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	ttl := expires.Sub(now()).Round(time.Second)
	if ttl < time.Second {
		return "", errors.New("photoapi: a signed link must live a second at least")
	}
	req, err := o.Presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(o.Bucket), Key: aws.String(key)}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("photoapi: presign original: %w", err)
	}
	return req.URL, nil
}

// LocalOriginals signs links to the originals a local folder holds, as
// `make run` serves them (OriginalsHandler): BaseURL/<key>?expires=<unix
// seconds>&signature=<hex HMAC-SHA256 of key and expires under Key>.
type LocalOriginals struct {
	BaseURL string
	Key     []byte
}

// Sign returns the signed link to key.
func (o *LocalOriginals) Sign(_ context.Context, key string, expires time.Time) (string, error) {
	exp := strconv.FormatInt(expires.Unix(), 10)
	q := url.Values{"expires": {exp}, "signature": {localSignature(o.Key, key, exp)}}
	return strings.TrimSuffix(o.BaseURL, "/") + "/" + escapeKey(key) + "?" + q.Encode(), nil
}

// escapeKey escapes each segment of an object key for a URL path.
func escapeKey(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func localSignature(secret []byte, key, expires string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(key + "\n" + expires)) // a hash never fails
	return hex.EncodeToString(m.Sum(nil))
}

// OriginalsHandler serves the originals in dir under the links
// LocalOriginals signs with secret (strip the base URL's path first):
// 403 for a link that is expired, altered or signed with another key, 404
// for a valid link to a missing file.
func OriginalsHandler(dir string, secret []byte, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		exp, sig := r.URL.Query().Get("expires"), r.URL.Query().Get("signature")
		unix, err := strconv.ParseInt(exp, 10, 64)
		want := localSignature(secret, key, exp)
		switch {
		case err != nil || !hmac.Equal([]byte(sig), []byte(want)):
			http.Error(w, "forbidden: the link is not signed for this original", http.StatusForbidden)
			return
		case !now().Before(time.Unix(unix, 0)):
			http.Error(w, "forbidden: the link has expired", http.StatusForbidden)
			return
		case !filepath.IsLocal(filepath.FromSlash(key)):
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(key)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "private, no-store")
		http.ServeContent(w, r, st.Name(), st.ModTime(), f)
	})
}

type originalOutput struct {
	Body struct {
		URL       string    `json:"url" doc:"A signed link to the original upload (rawKey); anyone holding it can fetch the original until expiresAt, so do not share it."`
		ExpiresAt time.Time `json:"expiresAt"`
	}
}

// registerOriginals adds the organizers' signed links to originals.
func (h *handlers) registerOriginals(api huma.API) {
	huma.Register(api, server.Op("get-original", http.MethodGet, "/events/{eventId}/photos/{ulid}/original",
		"A signed, expiring link to a photo's original", tagSearch, refusals, server.Fails(http.StatusServiceUnavailable),
		server.Describe("The original is the upload (rawKey); the public sees only the processed preview (processedKey). "+
			"The link is an S3 presigned GET in deployment (PACER_PHOTO_BUCKET), an HMAC-signed link to the local image folder under make run; "+
			"it expires after PACER_PHOTO_ORIGINAL_TTL, and an expired or altered link answers 403. 503 when no originals store is configured.")),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			ULIDPath
		}) (*originalOutput, error) {
			p, err := h.search.Photo(ctx, org, in.EventID, in.ULID)
			if err != nil {
				return nil, err
			}
			if h.originals == nil {
				return nil, huma.Error503ServiceUnavailable("no originals store is configured (PACER_PHOTO_BUCKET)")
			}
			out := &originalOutput{}
			out.Body.ExpiresAt = time.Now().Add(h.originalTTL).UTC().Truncate(time.Second)
			out.Body.URL, err = h.originals.Sign(ctx, p.RawKey, out.Body.ExpiresAt)
			return out, err
		}))
}
