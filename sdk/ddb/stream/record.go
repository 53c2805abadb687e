package stream

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// The record kinds (Record.Kind).
const (
	Insert = "INSERT"
	Modify = "MODIFY"
	Remove = "REMOVE"
)

// Record is one change of one item. NewImage is nil for a Remove, OldImage
// for an Insert (and both, depending on the stream's view type, may be
// missing).
type Record struct {
	ShardID        string
	SequenceNumber string
	// Kind is Insert, Modify or Remove.
	Kind string
	// At is the approximate time of the change.
	At                 time.Time
	Keys               ddb.Item
	NewImage, OldImage ddb.Item
}

// DecodeNew unmarshals the new image into v (attributevalue rules, the
// same as ddb entities use). It reports false when there is no new image.
func (r *Record) DecodeNew(v any) (bool, error) { return decode(r.NewImage, v) }

// DecodeOld unmarshals the old image into v. It reports false when there
// is no old image.
func (r *Record) DecodeOld(v any) (bool, error) { return decode(r.OldImage, v) }

func decode(img ddb.Item, v any) (bool, error) {
	if img == nil {
		return false, nil
	}
	if err := attributevalue.UnmarshalMap(img, v); err != nil {
		return true, fmt.Errorf("stream: decode image: %w", err)
	}
	return true, nil
}

// String returns the value of a string attribute of the new image, or of
// the old one when there is no new image ("" if neither has it): e.g. the
// entity type, to choose how to decode the record.
func (r *Record) String(attr string) string {
	img := r.NewImage
	if img == nil {
		img = r.OldImage
	}
	if s, ok := img[attr].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// fromStream converts a streams API record.
func fromStream(shardID string, in streamtypes.Record) (Record, error) {
	r := Record{ShardID: shardID, Kind: string(in.EventName)}
	sr := in.Dynamodb
	if sr == nil {
		return r, fmt.Errorf("stream: record %s has no change", aws.ToString(in.EventID))
	}
	r.SequenceNumber = aws.ToString(sr.SequenceNumber)
	if sr.ApproximateCreationDateTime != nil {
		r.At = *sr.ApproximateCreationDateTime
	}
	var err error
	if r.Keys, err = image(sr.Keys); err != nil {
		return r, err
	}
	if r.NewImage, err = image(sr.NewImage); err != nil {
		return r, err
	}
	r.OldImage, err = image(sr.OldImage)
	return r, err
}

func image(m map[string]streamtypes.AttributeValue) (ddb.Item, error) {
	if m == nil {
		return nil, nil
	}
	it, err := attributevalue.FromDynamoDBStreamsMap(m)
	if err != nil {
		return nil, fmt.Errorf("stream: convert image: %w", err)
	}
	return it, nil
}
