package ddb_test

import (
	"testing"

	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// The encode/decode benchmarks compare the SDK with raw attributevalue
// (ddbtest.Codecs) in one run:
//
//	go test -run '^$' -bench 'Encode|Decode' -benchmem -count 8 ./sdk/ddb | benchstat -col /impl -
func BenchmarkEncode(b *testing.B) { ddbtest.BenchmarkEncode(b, ddbtest.Codecs()) }

func BenchmarkDecode(b *testing.B) { ddbtest.BenchmarkDecode(b, ddbtest.Codecs()) }

// TestCodecsAgree keeps the benchmarks honest: both codecs produce the
// same item.
func TestCodecsAgree(t *testing.T) { ddbtest.CheckCodecs(t, ddbtest.Codecs()) }
