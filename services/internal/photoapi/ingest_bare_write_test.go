package photoapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// The baseline's ingest writes (ingest_bare_test.go): one photo in one
// transaction, a batch with BatchGetItem, BatchWriteItem and a
// conditional PutItem per photo, as Pacer's store writes them; then the
// reads that look for races.

// bareItem is the PHOTO item as Pacer's store writes it.
type bareItem struct {
	PK                      string         `dynamodbav:"PK"`
	SK                      string         `dynamodbav:"SK"`
	EntityType              string         `dynamodbav:"EntityType"`
	ULID                    string         `dynamodbav:"ulid"`
	OrgID                   string         `dynamodbav:"orgId"`
	EventID                 string         `dynamodbav:"eventId"`
	OriginalFilename        string         `dynamodbav:"originalFilename"`
	RawKey                  string         `dynamodbav:"rawKey"`
	ProcessedKey            string         `dynamodbav:"processedKey"`
	S3URI                   string         `dynamodbav:"s3Uri"`
	Dimensions              map[string]int `dynamodbav:"dimensions"`
	Format                  string         `dynamodbav:"format"`
	Size                    int64          `dynamodbav:"size"`
	Bibs                    []string       `dynamodbav:"bibs"`
	BibCount                int            `dynamodbav:"bibCount"`
	FaceIDs                 []string       `dynamodbav:"faceIds"`
	FaceCount               int            `dynamodbav:"faceCount"`
	PhotographerID          string         `dynamodbav:"photographerId,omitempty"`
	PhotographerHandle      string         `dynamodbav:"photographerHandle,omitempty"`
	PhotographerDisplayName string         `dynamodbav:"photographerDisplayName,omitempty"`
	GSI2PK                  string         `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK                  string         `dynamodbav:"GSI2SK,omitempty"`
	CreatedAt               string         `dynamodbav:"createdAt"`
	UpdatedAt               string         `dynamodbav:"updatedAt"`
	HiddenBibs              []string       `dynamodbav:"hiddenBibs,omitempty"`
}

// bareBibItem is a BIB_INDEX item as Pacer's store writes it.
type bareBibItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	EntityType string `dynamodbav:"EntityType"`
	GSI1PK     string `dynamodbav:"GSI1PK"`
	GSI1SK     string `dynamodbav:"GSI1SK"`
	ULID       string `dynamodbav:"ulid"`
	OrgID      string `dynamodbav:"orgId"`
	EventID    string `dynamodbav:"eventId"`
	Bib        string `dynamodbav:"bib"`
	CreatedAt  string `dynamodbav:"createdAt"`
}

// items are photo i's PHOTO item and BIB_INDEX items.
func (in *bareIngest) items(i int) (map[string]types.AttributeValue, []map[string]types.AttributeValue, error) {
	p := in.photos[i]
	pk, at := "ORG#"+in.org+"#EVT#"+in.event, photo.ISOMillis(p.CreatedAt)
	it := bareItem{PK: pk, SK: "PHOTO#" + p.ULID, EntityType: "PHOTO", ULID: p.ULID, OrgID: p.OrgID, EventID: p.EventID,
		OriginalFilename: p.OriginalFilename, RawKey: p.RawKey, ProcessedKey: p.ProcessedKey, S3URI: p.S3URI, Dimensions: p.Dimensions,
		Format: p.Format, Size: p.Size, Bibs: p.Bibs, BibCount: p.BibCount, FaceIDs: p.FaceIDs, FaceCount: p.FaceCount,
		PhotographerID: p.PhotographerID, PhotographerHandle: p.PhotographerHandle, PhotographerDisplayName: p.PhotographerDisplayName,
		CreatedAt: at, UpdatedAt: at, HiddenBibs: in.hidden[i]}
	if p.PhotographerID != "" {
		it.GSI2PK, it.GSI2SK = "PHOTOGRAPHER#"+p.PhotographerID, "EVT#"+in.event+"#TIME#"+at
	}
	photoAV, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, nil, err
	}
	bibs := make([]map[string]types.AttributeValue, len(p.Bibs))
	for j, bib := range p.Bibs {
		if bibs[j], err = attributevalue.MarshalMap(bareBibItem{PK: pk, SK: "BIB#" + bib + "#PHOTO#" + p.ULID, EntityType: "BIB_INDEX",
			GSI1PK: "EVT#" + in.event + "#BIB#" + bib, GSI1SK: "PHOTO#" + p.ULID, ULID: p.ULID, OrgID: in.org, EventID: in.event, Bib: bib, CreatedAt: at}); err != nil {
			return nil, nil, err
		}
	}
	return photoAV, bibs, nil
}

// The conditions of the writes: a PHOTO is put only if absent; a
// BIB_INDEX item in a transaction only if absent or the organizer's.
var (
	absent      = aws.String("attribute_not_exists (#0)")
	absentNames = map[string]string{"#0": "PK"}
	ownBib      = aws.String("(attribute_not_exists (#0)) OR (#1 = :0)")
	ownBibNames = map[string]string{"#0": "PK", "#1": "orgId"}
)

// stored is the result of photo i when another post already stored it:
// the existing item, as a read or a condition failure returned it.
func (in *bareIngest) stored(i int, item map[string]types.AttributeValue) bareResult {
	var p barePhoto
	if err := attributevalue.UnmarshalMap(item, &p); err != nil || item == nil {
		return in.failed(i)
	}
	res := in.results[i]
	res.Status, res.ULID, res.Photo = "exists", p.ULID, &p
	return res
}

// failed is the result of photo i when its write did not complete.
func (in *bareIngest) failed(i int) bareResult {
	res := in.results[i]
	res.Status, res.Error = "failed", "the write did not complete; re-post this photo"
	return res
}

// created is the result of photo i once written.
func (in *bareIngest) created(i int) bareResult {
	res := in.results[i]
	res.Status, res.Photo = "created", &in.photos[i]
	return res
}

// create writes photo i and its BIB_INDEX items in one transaction.
func (b *barePhotoAPI) create(ctx context.Context, in *bareIngest, i int) bareResult {
	photoAV, bibs, err := in.items(i)
	if err != nil {
		return in.failed(i)
	}
	ops := []types.TransactWriteItem{{Put: &types.Put{TableName: &b.table, Item: photoAV, ConditionExpression: absent, ExpressionAttributeNames: absentNames,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}}}
	own := map[string]types.AttributeValue{":0": s(in.org)}
	for _, bib := range bibs {
		ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: &b.table, Item: bib, ConditionExpression: ownBib, ExpressionAttributeNames: ownBibNames,
			ExpressionAttributeValues: own, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}})
	}
	_, err = b.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
	var tc *types.TransactionCanceledException
	switch {
	case err == nil:
		return in.created(i)
	case errors.As(err, &tc) && len(tc.CancellationReasons) > 0 && aws.ToString(tc.CancellationReasons[0].Code) == "ConditionalCheckFailed":
		return in.stored(i, tc.CancellationReasons[0].Item)
	}
	return in.failed(i)
}

// createBatch writes the photos not suppressed: it reads which exist
// (BatchGetItem), writes the BIB_INDEX items of the others 25 per
// BatchWriteItem, then puts each one's PHOTO if absent, 16 at a time.
func (b *barePhotoAPI) createBatch(ctx context.Context, in *bareIngest) {
	var todo []int
	var keys []map[string]types.AttributeValue
	for i, res := range in.results {
		if res.Status == "" {
			todo = append(todo, i)
			keys = append(keys, map[string]types.AttributeValue{"PK": s("ORG#" + in.org + "#EVT#" + in.event), "SK": s("PHOTO#" + in.photos[i].ULID)})
		}
	}
	if len(todo) == 0 {
		return
	}
	got, err := b.db.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{b.table: {Keys: keys}}})
	if err != nil || len(got.UnprocessedKeys) > 0 {
		for _, i := range todo {
			in.results[i] = in.failed(i)
		}
		return
	}
	have := map[string]map[string]types.AttributeValue{}
	for _, it := range got.Responses[b.table] {
		if u, ok := it["ulid"].(*types.AttributeValueMemberS); ok {
			have[u.Value] = it
		}
	}
	photos := make([]map[string]types.AttributeValue, len(in.photos))
	var puts []types.WriteRequest
	owner := map[string]int{} // a BIB_INDEX item's SK → its photo
	for _, i := range slices.Clone(todo) {
		if it, ok := have[in.photos[i].ULID]; ok {
			in.results[i] = in.stored(i, it)
			todo = slices.DeleteFunc(todo, func(j int) bool { return j == i })
			continue
		}
		photoAV, bibs, err := in.items(i)
		if err != nil {
			in.results[i] = in.failed(i)
			todo = slices.DeleteFunc(todo, func(j int) bool { return j == i })
			continue
		}
		photos[i] = photoAV
		for _, bib := range bibs {
			owner[bib["SK"].(*types.AttributeValueMemberS).Value] = i
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: bib}})
		}
	}
	failed := map[int]bool{}
	for lo := 0; lo < len(puts); lo += 25 {
		chunk := puts[lo:min(lo+25, len(puts))]
		out, err := b.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{b.table: chunk}})
		if err != nil {
			out = &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{b.table: chunk}}
		}
		for _, w := range out.UnprocessedItems[b.table] {
			failed[owner[w.PutRequest.Item["SK"].(*types.AttributeValueMemberS).Value]] = true
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, i := range todo {
		if failed[i] {
			in.results[i] = in.failed(i)
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			in.results[i] = b.put(ctx, in, i, photos[i])
		})
	}
	wg.Wait()
}

// put puts photo i's PHOTO item if absent.
func (b *barePhotoAPI) put(ctx context.Context, in *bareIngest, i int, item map[string]types.AttributeValue) bareResult {
	_, err := b.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: &b.table, Item: item, ConditionExpression: absent, ExpressionAttributeNames: absentNames,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var cf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return in.created(i)
	case errors.As(err, &cf):
		return in.stored(i, cf.Item)
	}
	return in.failed(i)
}

// settle reads again, after the writes, the profile versions of the
// photographers of the photos created and the privacy requests of every
// bib involved, as Pacer does, and answers 503 if either changed
// meanwhile (Pacer would settle it). Only photos written or perhaps
// written keep their unmatched bibs.
func (b *barePhotoAPI) settle(w http.ResponseWriter, ctx context.Context, in *bareIngest) bool {
	for id, v := range in.versions {
		if !slices.ContainsFunc(in.results, func(r bareResult) bool { return r.Status == "created" && r.Photo.PhotographerID == id }) {
			continue
		}
		var got int64
		rows, err := b.pool.Query(ctx, `SELECT photographer_id, profile_version FROM photographers WHERE photographer_id = ANY($1)`, []string{id})
		if err == nil {
			var pid string
			_, err = pgx.ForEachRow(rows, []any{&pid, &got}, func() error { return nil })
		}
		if err != nil || got != v {
			fail(w, http.StatusServiceUnavailable)
			return false
		}
	}
	var all []string
	for i, res := range in.results {
		all = append(all, in.photos[i].Bibs...)
		all = append(all, in.hidden[i]...)
		all = append(all, res.SuppressedBibs...)
		if res.Photo != nil {
			all = append(all, res.Photo.Bibs...)
		}
		if res.Status != "created" && res.Status != "failed" {
			in.results[i].UnmatchedBibs = nil
		}
	}
	if len(all) == 0 {
		return true
	}
	slices.Sort(all)
	rows, err := b.pool.Query(ctx, `SELECT bib, mode FROM hidden_bibs WHERE event_id = $1 AND bib = ANY($2)`, in.event, slices.Compact(all))
	n := 0
	if err == nil {
		var bib, mode string
		_, err = pgx.ForEachRow(rows, []any{&bib, &mode}, func() error { n++; return nil })
	}
	if err != nil || n > 0 {
		fail(w, http.StatusServiceUnavailable)
		return false
	}
	return true
}
