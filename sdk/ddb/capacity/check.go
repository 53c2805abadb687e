package capacity

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// Compare lists how measured operations differ from a model: figures
// that drifted, operations the model has and the measurement lacks, and
// the reverse. Empty when they agree.
func Compare(model []Usage, measured map[string]Usage) []string {
	var out []string
	for _, want := range model {
		have, ok := measured[want.Op]
		if !ok {
			out = append(out, want.Op+": not measured")
		} else if d := want.Diff(have); d != "" {
			out = append(out, want.Op+" drifted from the model: "+d)
		}
	}
	for op := range measured {
		if !slices.ContainsFunc(model, func(u Usage) bool { return u.Op == op }) {
			out = append(out, op+": measured, not in the model")
		}
	}
	if len(out) > 0 {
		var b strings.Builder
		for _, u := range measured {
			fmt.Fprintf(&b, "\t%#v\n", u)
		}
		out = append(out, "measured:\n"+b.String())
	}
	return out
}

// MissingFromDoc returns the blocks (rendered tables) the document at
// path does not contain verbatim.
func MissingFromDoc(path string, blocks ...string) ([]string, error) {
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, b := range blocks {
		if !strings.Contains(string(doc), b) {
			out = append(out, b)
		}
	}
	return out, nil
}

// Image reads an item as it is now (strongly consistent), by the key
// attributes of schema found in key; nil when it does not exist or the
// read fails.
func Image(ctx context.Context, c ddb.Client, table *string, s *ddb.Schema, key Item) Item {
	k := Item{s.PK: key[s.PK]}
	if s.SK != "" {
		k[s.SK] = key[s.SK]
	}
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil || len(out.Item) == 0 {
		return nil
	}
	return out.Item
}
