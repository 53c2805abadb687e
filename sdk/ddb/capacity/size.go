package capacity

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item is a DynamoDB item as the SDK's low-level API carries it.
type Item = map[string]types.AttributeValue

// Size returns the size of item in bytes, by DynamoDB's rules: for each
// attribute, the length of its name plus the size of its value.
func Size(item Item) int {
	n := 0
	for name, v := range item {
		n += len(name) + ValueSize(v)
	}
	return n
}

// ValueSize returns the size of one attribute value in bytes.
func ValueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return NumberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += NumberSize(s)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, b := range v.Value {
			n += len(b)
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + ValueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + ValueSize(e)
		}
		return n
	}
	return 0
}

// NumberSize is the size of a number: one byte per two significant
// digits (leading and trailing zeroes trimmed), plus one.
func NumberSize(s string) int {
	s = strings.TrimPrefix(s, "-")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	s = strings.Replace(s, ".", "", 1)
	s = strings.TrimLeft(s, "0")
	s = strings.TrimRight(s, "0")
	digits := len(s)
	if digits == 0 {
		digits = 1
	}
	return (digits+1)/2 + 1
}

// WriteUnits is the standard write units of a write of size bytes:
// ceil(size / 1 KB), at least 1.
func WriteUnits(size int) int { return max(1, (size+1023)/1024) }

// ReadUnits is the read units of a read of size bytes: ceil(size / 4 KB),
// at least 1, when strongly consistent; half that when not.
func ReadUnits(size int, strong bool) float64 {
	u := float64(max(1, (size+4095)/4096))
	if !strong {
		u /= 2
	}
	return u
}
