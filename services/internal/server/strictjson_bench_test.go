package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
)

// BenchmarkStrictJSON compares strictJSON's two decodes of a request body
// (into an any, with the depth bound and json/v2's checks; then into the
// input struct) with encoding/json and json/v2 alone, on a photo-batch-like
// body of 500 records (about 200 KB).
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
	for _, target := range []struct {
		name string
		new  func() any
	}{{"decode=any", func() any { return new(any) }}, {"decode=struct", func() any { return new(benchBatch) }}} {
		for _, c := range []struct {
			name      string
			unmarshal func([]byte, any) error
		}{
			{"impl=encoding-json", json.Unmarshal},
			{"impl=json-v2", func(data []byte, v any) error { return jsonv2.Unmarshal(data, v) }},
			{"impl=strict", strictJSON.Unmarshal},
		} {
			b.Run(target.name+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if err := c.unmarshal(body, target.new()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchBatch is the Go body the benchmark's records decode into.
type benchBatch struct {
	Photos []struct {
		ULID             string `json:"ulid"`
		OriginalFilename string `json:"originalFilename"`
		RawKey           string `json:"rawKey"`
		ProcessedKey     string `json:"processedKey"`
		S3URI            string `json:"s3Uri"`
		Dimensions       struct {
			Width  int `json:"width"`
			Height int `json:"height"`
		} `json:"dimensions"`
		Format         string   `json:"format"`
		Size           int64    `json:"size"`
		Bibs           []string `json:"bibs"`
		FaceIDs        []string `json:"faceIds"`
		PhotographerID string   `json:"photographerId"`
	} `json:"photos"`
}
