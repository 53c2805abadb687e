package awsfixture

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ItemJSON is item in DynamoDB's wire format ({"attr": {"S": "..."}}),
// for a reply's Item, Items or Responses: encode an adapter's own item
// type with attributevalue.MarshalMap and answer it, so the fixture
// serves what the adapter would have written.
func ItemJSON(item map[string]types.AttributeValue) json.RawMessage {
	out := make(map[string]any, len(item))
	for k, v := range item {
		out[k] = wire(v)
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(err) // only strings, numbers, lists and maps
	}
	return b
}

func wire(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]string{"S": v.Value}
	case *types.AttributeValueMemberN:
		return map[string]string{"N": v.Value}
	case *types.AttributeValueMemberB:
		return map[string]string{"B": base64.StdEncoding.EncodeToString(v.Value)}
	case *types.AttributeValueMemberBOOL:
		return map[string]bool{"BOOL": v.Value}
	case *types.AttributeValueMemberNULL:
		return map[string]bool{"NULL": true}
	case *types.AttributeValueMemberSS:
		return map[string][]string{"SS": v.Value}
	case *types.AttributeValueMemberNS:
		return map[string][]string{"NS": v.Value}
	case *types.AttributeValueMemberL:
		l := make([]any, len(v.Value))
		for i, e := range v.Value {
			l[i] = wire(e)
		}
		return map[string]any{"L": l}
	case *types.AttributeValueMemberM:
		m := make(map[string]any, len(v.Value))
		for k, e := range v.Value {
			m[k] = wire(e)
		}
		return map[string]any{"M": m}
	}
	panic(fmt.Sprintf("awsfixture: attribute value %T", v))
}

// Key is a primary key as a call's JSON holds it: attribute name →
// {"S": value}.
type Key map[string]map[string]string

// BatchGet answers a BatchGetItem with item(key) for every key asked for
// (an item nil leaves the key out, as DynamoDB does for an absent item),
// with no unprocessed keys.
func BatchGet(item func(Key) json.RawMessage) Reply {
	return func(body []byte) any {
		var in struct {
			RequestItems map[string]struct{ Keys []Key }
		}
		_ = json.Unmarshal(body, &in)
		out := map[string][]json.RawMessage{}
		for table, ka := range in.RequestItems {
			out[table] = []json.RawMessage{}
			for _, k := range ka.Keys {
				if it := item(k); it != nil {
					out[table] = append(out[table], it)
				}
			}
		}
		return map[string]any{"Responses": out, "UnprocessedKeys": map[string]any{}}
	}
}
