package ddb

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// cursorBody is what a cursor says: where it may be used and where to
// resume. Key attributes are all strings in our schemas.
type cursorBody struct {
	V      int               `json:"v"`
	Table  string            `json:"t"`
	Index  string            `json:"i,omitempty"`
	PK     string            `json:"p"`
	Tenant string            `json:"n,omitempty"`
	Desc   bool              `json:"d,omitempty"`
	SK     string            `json:"s,omitempty"` // the sort-key condition
	Key    map[string]string `json:"k"`
}

// cursorEncoding is unpadded base64url that rejects non-canonical input.
var cursorEncoding = base64.RawURLEncoding.Strict()

// cursorSaltSize is the random salt opening each cursor.
const cursorSaltSize = 16

// cursorAEAD derives one cursor's cipher: AES-256-GCM under
// HKDF-SHA256(Config.CursorKey, salt, kind). Each cursor has its own random salt
// and so its own key, which seals that cursor only: a fixed nonce is then
// safe, and there is no limit on how many cursors one CursorKey issues
// (with one key and random 96-bit nonces, GCM's margin runs out after
// about 2^32 messages). The cursor is opaque (it names no table, index,
// key or tenant to whoever holds it) and authenticated.
func cursorAEAD(secret, salt []byte, kind string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, secret, salt, kind, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// cursorNonce is GCM's nonce: fixed, since every key seals one cursor.
var cursorNonce = make([]byte, 12)

// Cursor kinds: the HKDF info of each kind of cursor, so that a cursor of
// one kind never opens as another.
const (
	queryCursorInfo = "pacer sdk/ddb cursor v2"
	mergeCursorInfo = "pacer sdk/ddb merge cursor v1"
)

// encodeCursor seals a cursor: base64url(salt || AES-GCM(json)).
func (db *DB) encodeCursor(b cursorBody) (string, error) {
	b.V = 2
	return db.seal(queryCursorInfo, b)
}

// seal seals v as a cursor of the given kind.
func (db *DB) seal(kind string, v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	out := make([]byte, cursorSaltSize, cursorSaltSize+len(raw)+16)
	if _, err := rand.Read(out); err != nil {
		return "", err
	}
	aead, err := cursorAEAD(db.cfg.CursorKey, out, kind)
	if err != nil {
		return "", err
	}
	return cursorEncoding.EncodeToString(aead.Seal(out, cursorNonce, raw, nil)), nil
}

// open opens a cursor of the given kind, at most maxLen characters long,
// into v.
func (db *DB) open(kind, s string, maxLen int, v any) error {
	if len(s) > maxLen || !cursorAlphabet(s) {
		return fmt.Errorf("%w: malformed", ErrCursor)
	}
	// Strict: reject non-zero padding bits, so each cursor has exactly one
	// spelling and a changed character never decodes to the same bytes.
	sealed, err := cursorEncoding.DecodeString(s)
	if err != nil || len(sealed) < cursorSaltSize+16 {
		return fmt.Errorf("%w: malformed", ErrCursor)
	}
	aead, err := cursorAEAD(db.cfg.CursorKey, sealed[:cursorSaltSize], kind)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCursor, err)
	}
	raw, err := aead.Open(nil, cursorNonce, sealed[cursorSaltSize:], nil)
	if err != nil {
		return fmt.Errorf("%w: not issued with this key, or altered", ErrCursor)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: malformed", ErrCursor)
	}
	return nil
}

// decodeCursor opens a cursor, checks that it was issued for exactly this
// query, and returns the key to resume after.
func (db *DB) decodeCursor(s string, want cursorBody, keyAttrs []string) (Item, error) {
	var b cursorBody
	if err := db.open(queryCursorInfo, s, 4096, &b); err != nil {
		return nil, err
	}
	if b.V != 2 {
		return nil, fmt.Errorf("%w: malformed", ErrCursor)
	}
	switch {
	case b.Table != want.Table:
		return nil, fmt.Errorf("%w: issued for another table", ErrCursor)
	case b.Index != want.Index:
		return nil, fmt.Errorf("%w: issued for another index", ErrCursor)
	case b.PK != want.PK:
		return nil, fmt.Errorf("%w: issued for another partition", ErrCursor)
	case b.Tenant != want.Tenant:
		return nil, fmt.Errorf("%w: issued for another tenant", ErrCursor)
	case b.Desc != want.Desc:
		return nil, fmt.Errorf("%w: issued for the other direction", ErrCursor)
	case b.SK != want.SK:
		return nil, fmt.Errorf("%w: issued for another sort-key condition", ErrCursor)
	case len(b.Key) != len(keyAttrs):
		return nil, fmt.Errorf("%w: wrong key", ErrCursor)
	}
	it := make(Item, len(keyAttrs))
	for _, a := range keyAttrs {
		v, ok := b.Key[a]
		if !ok {
			return nil, fmt.Errorf("%w: wrong key", ErrCursor)
		}
		it[a] = &types.AttributeValueMemberS{Value: v}
	}
	return it, nil
}

// cursorAlphabet reports whether s holds only base64url characters.
// encoding/base64 skips \r and \n, so without this check a cursor
// with line breaks added would decode like the genuine one: there is
// exactly one spelling of each cursor.
func cursorAlphabet(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// SealCursor seals v (any JSON value) as an opaque, authenticated cursor of
// kind, with the same construction as a Query's cursor (see cursorAEAD):
// for callers who page over several sources and keep their own position.
// A cursor of one kind never opens as another, nor as a Query's or a
// Merge's.
func (db *DB) SealCursor(kind string, v any) (string, error) {
	return db.seal(appCursorInfo+kind, v)
}

// OpenCursor opens a cursor SealCursor made for kind into v. A cursor of
// another kind, longer than maxLen, altered or sealed under another
// CursorKey is ErrCursor.
func (db *DB) OpenCursor(kind, cursor string, maxLen int, v any) error {
	return db.open(appCursorInfo+kind, cursor, maxLen, v)
}

// appCursorInfo prefixes the kinds of SealCursor's cursors.
const appCursorInfo = "pacer sdk/ddb app cursor v1: "
