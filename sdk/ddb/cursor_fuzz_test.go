package ddb

import (
	"errors"
	"strings"
	"testing"
)

// This file is in package ddb to reach decodeCursor directly. Fuzz it with:
//
//	go test -run '^$' -fuzz FuzzCursorDecode -fuzztime 10s ./sdk/ddb

var (
	fuzzWant  = cursorBody{Table: "AsyncEventTable", Index: "GSI1", PK: "USER#u1"}
	fuzzAttrs = []string{"PK", "SK", "GSI1PK", "GSI1SK"}
	fuzzKey   = map[string]string{"PK": "REQ#r1", "SK": "META", "GSI1PK": "USER#u1", "GSI1SK": "QAT#0000000000001#REQ#r1"}
)

// fuzzCursors returns a genuine cursor for fuzzWant and cursors that are
// genuinely sealed but for something else, or sealed with another key.
func fuzzCursors(t testing.TB) (db *DB, genuine string, foreign []string) {
	db = New(nil, Config{CursorKey: []byte("fuzz-cursor-key-0123456789abcdef")})
	other := New(nil, Config{CursorKey: []byte("another-cursor-key-0123456789abc")})
	enc := func(d *DB, b cursorBody) string {
		s, err := d.encodeCursor(b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	body := fuzzWant
	body.Key = fuzzKey
	genuine = enc(db, body)
	variants := []func(*cursorBody){
		func(b *cursorBody) { b.Table = "Other" },
		func(b *cursorBody) { b.Index = "GSI2" },
		func(b *cursorBody) { b.Index = "" },
		func(b *cursorBody) { b.PK = "USER#u2" },
		func(b *cursorBody) { b.Tenant = "acme" },
		func(b *cursorBody) { b.Desc = true },
		func(b *cursorBody) { b.Key = map[string]string{"PK": "x", "SK": "y"} },
		func(b *cursorBody) { b.Key = map[string]string{"PK": "x", "SK": "y", "GSI1PK": "z", "other": "w"} },
	}
	for _, v := range variants {
		b := fuzzWant
		b.Key = fuzzKey
		v(&b)
		foreign = append(foreign, enc(db, b))
	}
	foreign = append(foreign, enc(other, body))
	return db, genuine, foreign
}

func TestCursorDecode(t *testing.T) {
	db, genuine, foreign := fuzzCursors(t)
	it, err := db.decodeCursor(genuine, fuzzWant, fuzzAttrs)
	if err != nil {
		t.Fatalf("genuine cursor: %v", err)
	}
	for a, v := range fuzzKey {
		if str(it[a]) != v {
			t.Fatalf("key %s = %q, want %q", a, str(it[a]), v)
		}
	}
	bad := append([]string{
		"", ".", "..", "x", "x.y", genuine + "x", genuine[:len(genuine)-1], "." + genuine, genuine + ".",
		genuine[:10] + "." + genuine[10:], genuine + "=", strings.Repeat("A", 5000), strings.Repeat("A", 40),
		genuine[:len(genuine)/2] + "\n" + genuine[len(genuine)/2:],
	}, foreign...)
	for i, s := range bad {
		if _, err := db.decodeCursor(s, fuzzWant, fuzzAttrs); !errors.Is(err, ErrCursor) {
			t.Errorf("case %d %q: want ErrCursor, got %v", i, s, err)
		}
	}
	// The cursor is opaque: nothing it was issued for can be read from it.
	raw, err := cursorEncoding.DecodeString(genuine)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"AsyncEventTable", "GSI1", "USER#u1", "REQ#r1", `"k"`} {
		if strings.Contains(string(raw), secret) || strings.Contains(genuine, secret) {
			t.Fatalf("cursor reveals %q", secret)
		}
	}
	// Two cursors for the same position differ (random salt) and both work.
	again, err := db.encodeCursor(cursorBody{Table: fuzzWant.Table, Index: fuzzWant.Index, PK: fuzzWant.PK, Key: fuzzKey})
	if err != nil || again == genuine {
		t.Fatalf("second cursor %q (%v): want a different spelling", again, err)
	}
	if _, err := db.decodeCursor(again, fuzzWant, fuzzAttrs); err != nil {
		t.Fatalf("second cursor: %v", err)
	}
	// Every single-character change is rejected: the encoding is canonical
	// (strict base64) and GCM authenticates every byte.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_."
	for i := range genuine {
		for _, c := range []byte(alphabet) {
			if c == genuine[i] {
				continue
			}
			s := genuine[:i] + string(c) + genuine[i+1:]
			if _, err := db.decodeCursor(s, fuzzWant, fuzzAttrs); err == nil {
				t.Fatalf("changed byte %d to %q: accepted", i, c)
			}
		}
	}
}

// sameKey reports whether it holds exactly the string attributes of key.
func sameKey(it Item, key map[string]string) bool {
	if len(it) != len(key) {
		return false
	}
	for a, v := range key {
		if str(it[a]) != v {
			return false
		}
	}
	return true
}

// FuzzCursorDecode: arbitrary strings, and genuine cursors with bytes
// changed, never panic and never decode, except genuine cursors.
func FuzzCursorDecode(f *testing.F) {
	db, genuine, foreign := fuzzCursors(f)
	f.Add(genuine, 0, byte(0))
	f.Add(genuine, 3, byte(1))
	f.Add(genuine, len(genuine)-1, byte(1))
	f.Add(genuine, len(genuine)/2, byte('x'))
	for _, s := range foreign {
		f.Add(s, 0, byte(0))
	}
	f.Add("", 0, byte(0))
	f.Add("eyJ2IjoxfQ.AAAA", 1, byte(2))
	f.Add("e30.", 0, byte(0))
	f.Fuzz(func(t *testing.T, s string, pos int, x byte) {
		// Cursors carry a random salt, so each process (the fuzzer runs
		// several) issues its own spelling of the genuine cursor: one that
		// opens must be a sealing of exactly the genuine position.
		if it, err := db.decodeCursor(s, fuzzWant, fuzzAttrs); err == nil && !sameKey(it, fuzzKey) {
			t.Fatalf("decoded a cursor that was not issued: %q", s)
		} else if err != nil && !errors.Is(err, ErrCursor) {
			t.Fatalf("error is not ErrCursor: %v", err)
		}
		if pos < 0 {
			pos = -pos
		}
		if pos < 0 || x == 0 { // pos < 0: the negation of MinInt
			return
		}
		b := []byte(genuine)
		b[pos%len(b)] ^= x
		if _, err := db.decodeCursor(string(b), fuzzWant, fuzzAttrs); err == nil {
			t.Fatalf("tampered cursor (byte %d ^ %#x) decoded: %q", pos%len(b), x, b)
		}
	})
}
