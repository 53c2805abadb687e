package asynceventapi

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// pollTags issues and checks the ETags of request polls (GET
// /requests/{requestId}). A tag is
//
//	"<pollAt, base 36>.<hash of the view>.<MAC>"
//
// where pollAt is asyncevent.Query.PollAt of the request read (0 unless
// it is an arrival candidate), the hash covers the JSON the answer shows,
// and the MAC (HMAC-SHA256 under a key derived from the cursor key) binds
// the three to the caller and the request id. The same view read by the
// same caller has the same tag, so a poll that reads the request answers
// 304 when nothing it shows changed; and a tag whose pollAt is still
// ahead (asyncevent.Query.Unchanged) answers 304 without reading the
// table at all: only the caller the tag was issued to can present it.
type pollTags struct {
	key []byte
}

// newPollTags derives the tags' key from key (the cursor key); a nil key
// (tests, the spec) gets a random one, so tags do not outlive the process.
func newPollTags(key []byte) pollTags {
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("pacer/asyncevent/poll-etag/v1"))
	return pollTags{key: m.Sum(nil)}
}

// tagEncoding writes a tag's hash and MAC: URL-safe, so a tag is a valid
// entity tag (no quote, no backslash).
var tagEncoding = base64.RawURLEncoding

// tag is the quoted ETag of view, read by caller, with pollAt.
func (t pollTags) tag(caller, requestID string, pollAt int64, view RequestView) string {
	b, _ := json.Marshal(view) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return t.format(caller, requestID, strconv.FormatInt(pollAt, 36), tagEncoding.EncodeToString(sum[:12]))
}

// format is the quoted tag of its parts, with their MAC.
func (t pollTags) format(caller, requestID, pollAt, hash string) string {
	return `"` + pollAt + "." + hash + "." + t.mac(caller, requestID, pollAt, hash) + `"`
}

func (t pollTags) mac(caller, requestID, pollAt, hash string) string {
	m := hmac.New(sha256.New, t.key)
	for _, s := range []string{caller, requestID, pollAt, hash} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return tagEncoding.EncodeToString(m.Sum(nil)[:12])
}

// pollAt is the pollAt of an If-None-Match value: the first tag in it
// that this server issued to caller for requestID (its MAC checks out),
// or 0 when none did. W/ and quotes are ignored; "*" matches nothing
// (a poll is never a write).
func (t pollTags) pollAt(caller, requestID, ifNoneMatch string) (tag string, pollAt int64) {
	for v := range strings.SplitSeq(ifNoneMatch, ",") {
		v = strings.Trim(strings.TrimPrefix(strings.TrimSpace(v), "W/"), `"`)
		at, rest, ok := strings.Cut(v, ".")
		hash, mac, ok2 := strings.Cut(rest, ".")
		if !ok || !ok2 || len(v) > 64 {
			continue
		}
		n, err := strconv.ParseInt(at, 36, 64)
		if err != nil || n <= 0 || !hmac.Equal([]byte(mac), []byte(t.mac(caller, requestID, at, hash))) {
			continue
		}
		return `"` + v + `"`, n
	}
	return "", 0
}

// matches reports whether ifNoneMatch lists tag (compared weakly, as
// RFC 9110 says If-None-Match does).
func matches(ifNoneMatch, tag string) bool {
	for v := range strings.SplitSeq(ifNoneMatch, ",") {
		if strings.TrimPrefix(strings.TrimSpace(v), "W/") == tag {
			return true
		}
	}
	return false
}
