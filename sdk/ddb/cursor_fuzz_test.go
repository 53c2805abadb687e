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
// genuinely signed but for something else, or signed with another key.
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
		"", ".", "..", "x", "x.y", genuine + "x", genuine[:len(genuine)-1], "." + genuine,
		strings.Replace(genuine, ".", "..", 1), genuine + "=", strings.Repeat("A", 5000) + "." + "AAAA",
	}, foreign...)
	for i, s := range bad {
		if _, err := db.decodeCursor(s, fuzzWant, fuzzAttrs); !errors.Is(err, ErrCursor) {
			t.Errorf("case %d %q: want ErrCursor, got %v", i, s, err)
		}
	}
	// Every single-character change is rejected: the encoding is canonical
	// (strict base64) and the signature covers every byte.
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

// FuzzCursorDecode: arbitrary strings, and genuine cursors with bytes
// changed, never panic and never decode, except the genuine cursor itself.
func FuzzCursorDecode(f *testing.F) {
	db, genuine, foreign := fuzzCursors(f)
	f.Add(genuine, 0, byte(0))
	f.Add(genuine, 3, byte(1))
	f.Add(genuine, len(genuine)-1, byte(1))
	f.Add(genuine, strings.Index(genuine, "."), byte('x'))
	for _, s := range foreign {
		f.Add(s, 0, byte(0))
	}
	f.Add("", 0, byte(0))
	f.Add("eyJ2IjoxfQ.AAAA", 1, byte(2))
	f.Add("e30.", 0, byte(0))
	f.Fuzz(func(t *testing.T, s string, pos int, x byte) {
		if _, err := db.decodeCursor(s, fuzzWant, fuzzAttrs); err == nil && s != genuine {
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
