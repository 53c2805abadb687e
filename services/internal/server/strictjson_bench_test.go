package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkStrictJSON compares strictJSON's first decode of a request body
// (UTF-8 and duplicate-key checks, then encoding/json) with encoding/json
// alone, on a photo-batch-like body of 500 records (about 200 KB).
func BenchmarkStrictJSON(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"photos":[`)
	for i := range 500 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"ulid":"01HXY8FWZM5KJQD9K3Y6R8N%03d","originalFilename":"IMG_%04d.jpg","rawKey":"raw/e1/%d.jpg",`+
			`"processedKey":"p/e1/%d.jpg","s3Uri":"s3://bucket/p/e1/%d.jpg","dimensions":{"width":4000,"height":3000},`+
			`"format":"jpeg","size":123456,"bibs":["%d","%d"],"faceIds":["f1","f2"],"photographerId":"ph_kim"}`, i, i, i, i, i, 1000+i, 2000+i)
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	for _, c := range []struct {
		name      string
		unmarshal func([]byte, any) error
	}{{"impl=encoding-json", json.Unmarshal}, {"impl=strict", strictJSON.Unmarshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := c.unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
