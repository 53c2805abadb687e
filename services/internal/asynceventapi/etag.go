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
//	"<pollAt, base 36>.<eventId>.<place version>.<hash of the view>.<MAC>"
//
// where pollAt is asyncevent.Query.PollAt of the request read (0 unless
// it is an arrival candidate), the place version names the line the
// answer's place was read from (asyncevent.Place.Version; empty without
// a place), the hash covers the JSON the answer shows, place included,
// and the MAC (HMAC-SHA256 under a key derived from the cursor key) binds
// them to the caller and the request id. The same view read by the same
// caller has the same tag, so a poll that reads the request answers 304
// when nothing it shows changed; and a tag whose pollAt is still ahead
// (asyncevent.Query.Unchanged) and whose place version is still the
// event's (asyncevent.Query.LineVersion, kept in memory) answers 304
// without reading the request at all: only the caller the tag was issued
// to can present it.
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

// tagged is what a tag says besides its view's hash.
type tagged struct {
	pollAt           int64
	event, placeVers string
}

// tag is the quoted ETag of view, read by caller, with g.
func (t pollTags) tag(caller, requestID string, g tagged, view RequestView) string {
	b, _ := json.Marshal(view) // plain data: cannot fail
	sum := sha256.Sum256(b)
	return t.format(caller, requestID, g, tagEncoding.EncodeToString(sum[:12]))
}

// format is the quoted tag of its parts, with their MAC.
func (t pollTags) format(caller, requestID string, g tagged, hash string) string {
	head := strconv.FormatInt(g.pollAt, 36) + "." + g.event + "." + g.placeVers
	return `"` + head + "." + hash + "." + t.mac(caller, requestID, head, hash) + `"`
}

func (t pollTags) mac(caller, requestID, head, hash string) string {
	m := hmac.New(sha256.New, t.key)
	for _, s := range []string{caller, requestID, head, hash} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return tagEncoding.EncodeToString(m.Sum(nil)[:12])
}

// parse returns the first tag in an If-None-Match value that this
// server issued to caller for requestID (its MAC checks out) with a
// pollAt, and what it says; ok false when none did. W/ and quotes are
// ignored; "*" matches nothing (a poll is never a write).
func (t pollTags) parse(caller, requestID, ifNoneMatch string) (tag string, g tagged, ok bool) {
	for v := range strings.SplitSeq(ifNoneMatch, ",") {
		v = strings.Trim(strings.TrimPrefix(strings.TrimSpace(v), "W/"), `"`)
		parts := strings.Split(v, ".")
		if len(parts) != 5 || len(v) > 192 {
			continue
		}
		head := strings.Join(parts[:3], ".")
		n, err := strconv.ParseInt(parts[0], 36, 64)
		if err != nil || n <= 0 || !hmac.Equal([]byte(parts[4]), []byte(t.mac(caller, requestID, head, parts[3]))) {
			continue
		}
		return `"` + v + `"`, tagged{pollAt: n, event: parts[1], placeVers: parts[2]}, true
	}
	return "", tagged{}, false
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
