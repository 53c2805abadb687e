package bench

import (
	"testing"

	"github.com/guregu/dynamo/v2"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/ddbtest"
)

// codecs are sdk/ddb's benchmark codecs (the SDK and raw attributevalue)
// and guregu/dynamo's.
func codecs() []ddbtest.Codec {
	return append(ddbtest.Codecs(), ddbtest.Codec{
		Name: "guregu",
		Encode: func(r *ddbtest.RawRequest) (ddb.Item, error) {
			r.FillKey()
			return dynamo.MarshalItem(r)
		},
		Decode: func(it ddb.Item) error { var v ddbtest.RawRequest; return dynamo.UnmarshalItem(it, &v) },
	})
}

func BenchmarkEncode(b *testing.B) { ddbtest.BenchmarkEncode(b, codecs()) }

func BenchmarkDecode(b *testing.B) { ddbtest.BenchmarkDecode(b, codecs()) }

// All three produce the same item.
func TestSameItem(t *testing.T) { ddbtest.CheckCodecs(t, codecs()) }
