package photo

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
)

// Limits on input.
const (
	// MaxIDLen bounds organizer, event and photographer ids.
	MaxIDLen = 64
	// MaxBibs bounds the bibs on one photo: a photo and its BIB_INDEX items
	// must fit in one DynamoDB transaction (100 operations) with room to
	// spare.
	MaxBibs = 50
	// MaxFaces bounds the face ids on one photo.
	MaxFaces = 100
	// MaxBatch bounds the photos of one batch ingest.
	MaxBatch = 100
	// MaxRunnersImport bounds one runner import.
	MaxRunnersImport = 20000
	// MaxSize bounds a photo's size in bytes: 1 TiB. The API's schema
	// publishes this constant as the maximum of size.
	MaxSize int64 = 1 << 40
	// MaxClockSkew is how far ahead of the service's clock a photo's ulid
	// time or createdAt may be: the pipeline's clock may run a little
	// ahead, but a photo from the future would sit first in every
	// newest-first listing until its time came.
	MaxClockSkew = 5 * time.Minute
)

// Text limits, in characters. A character is a Unicode code point (a Go
// rune), which is what JSON Schema's maxLength, the API's request validator
// and Postgres's length()/char_length() in a UTF-8 database count: "가" is
// one, "👍" is one, and "é" written as e + U+0301 (a combining mark) is
// two. A field of n characters takes at most 4n bytes of UTF-8: a PHOTO
// item with every text field at its limit in 4-byte characters (and
// MaxFaces face ids, MaxBibs bibs) is about 67 KB, within DynamoDB's 400 KB
// item limit.
const (
	// MaxNameLen bounds the names of organizers, events and runners.
	MaxNameLen = 200
	// MaxHandleLen bounds a photographer's handle.
	MaxHandleLen = 64
	// MaxDisplayNameLen bounds a photographer's display name.
	MaxDisplayNameLen = 128
	// MaxFilenameLen bounds a photo's originalFilename.
	MaxFilenameLen = 255
	// MaxKeyLen bounds a photo's rawKey and processedKey (S3 allows 1024
	// bytes; these are characters, so S3's own limit is the stricter one
	// for non-ASCII keys).
	MaxKeyLen = 1024
	// MaxS3URILen bounds a photo's s3Uri: s3://, a bucket and a key.
	MaxS3URILen = 1100
	// MaxFormatLen bounds a photo's format ("jpeg").
	MaxFormatLen = 16
	// MaxFaceIDLen bounds each of a photo's face ids.
	MaxFaceIDLen = 128
)

// Patterns the API publishes in its schema, and that Validate enforces.
const (
	// IDPattern: letters, digits, '_', '.', '-', starting with a letter or
	// digit, at most 64 characters. No '#', '%', spaces or control
	// characters, so an id is written into a DynamoDB key unchanged.
	IDPattern = `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`
	// BibPattern: 1 to 16 letters, digits or '-' (e.g. "1234", "A-017").
	BibPattern = `^[A-Za-z0-9-]{1,16}$`
	// ULIDPattern: a canonical ULID (26 Crockford base-32 characters).
	ULIDPattern = `^[0-7][0-9A-HJKMNP-TV-Z]{25}$`
)

var (
	idRE   = regexp.MustCompile(IDPattern)
	bibRE  = regexp.MustCompile(BibPattern)
	ulidRE = regexp.MustCompile(ULIDPattern)
)

// ValidID reports whether s is a well-formed organizer, event or
// photographer id.
func ValidID(s string) bool { return idRE.MatchString(s) }

// ValidBib reports whether s is a well-formed bib.
func ValidBib(s string) bool { return bibRE.MatchString(s) }

// ValidULID reports whether s is a canonical ULID.
func ValidULID(s string) bool {
	if !ulidRE.MatchString(s) {
		return false
	}
	_, err := ulid.ParseStrict(s)
	return err == nil
}

// checkID adds a problem if id is not a well-formed id.
func checkID(ps *problems, field, id string) {
	switch {
	case id == "":
		ps.add(field, "is required", nil)
	case len(id) > MaxIDLen:
		ps.add(field, fmt.Sprintf("is longer than %d characters", MaxIDLen), nil)
	case !ValidID(id):
		ps.add(field, "must match "+IDPattern+" (letters, digits, '_', '.', '-')", id)
	}
}

// CheckID returns a *ValidationError if id is not a well-formed id.
func CheckID(field, id string) error {
	var ps problems
	checkID(&ps, field, id)
	return ps.err()
}

// CheckBib returns a *ValidationError if bib is not a well-formed bib.
func CheckBib(field, bib string) error {
	if !ValidBib(bib) {
		return Invalid(field, "must match "+BibPattern, printable(bib))
	}
	return nil
}

// checkText adds a problem if s is empty or blank (when required), not
// UTF-8, longer than max characters (code points, see MaxNameLen), or holds
// control characters.
func checkText(ps *problems, field, s string, required bool, max int) {
	switch {
	case s == "" && required:
		ps.add(field, "is required", nil)
	case required && strings.IndexFunc(s, visible) < 0:
		ps.add(field, "must not be blank", nil)
	case !utf8.ValidString(s):
		ps.add(field, "is not valid UTF-8", nil)
	case utf8.RuneCountInString(s) > max:
		ps.add(field, fmt.Sprintf("is longer than %d characters", max), nil)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		ps.add(field, "contains control characters", nil)
	case strings.IndexFunc(s, bidiControl) >= 0:
		ps.add(field, "contains bidirectional control characters", nil)
	}
}

// bidiControl reports whether r is one of Unicode's explicit
// bidirectional embeddings, overrides or isolates (U+202A..U+202E,
// U+2066..U+2069): shown on a public page, they reorder the text around
// them ("Trojan Source"), and no runner's, event's or point's name needs
// them (right-to-left letters order themselves).
func bidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

// visible reports whether r shows as something: not a space, not an
// invisible format character (U+200B zero width space, U+FEFF), and not
// one of the letters and symbols that render blank (the Hangul fillers,
// U+2800 braille blank).
func visible(r rune) bool {
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800:
		return false
	}
	return !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r)
}

// printable returns s if it is safe to echo in an error, else nil.
func printable(s string) any {
	if len(s) > 80 || !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return nil
	}
	return s
}

// MillisUTC truncates t to milliseconds in UTC, the precision of the
// createdAt in GSI2SK.
func MillisUTC(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// ISOMillis formats t as every stored timestamp is written: UTC, with
// milliseconds, 2024-11-09T10:30:00.000Z.
func ISOMillis(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
