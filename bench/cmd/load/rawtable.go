package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Where the raw loops write (-raw-table).
const (
	// rawOnProduct: the product table itself, with its stream, so that a
	// raw write pays what the product's does on the stand-in, stream
	// included (the default). The raw items are not Requests to the
	// analytics publisher (rawRequestEntity), use events and users of
	// their own, and are deleted after each measurement.
	rawOnProduct = "product"
	// rawOnScratch: a fresh copy of the product table without its stream
	// (copyTable), deleted after each measurement.
	rawOnScratch = "scratch"
)

// rawRequestEntity is the entityType of the raw loops' Requests on the
// product table: as long as "REQUEST" (the same item size), and not a
// Request to the stream's readers (dynamostore.RequestChange), so the
// analytics publisher reads their records and skips them.
const rawRequestEntity = "RAW_REQ"

// requestEntity is the entityType the raw loops give their Requests.
func (s *standins) requestEntity() string {
	if s.onProduct {
		return rawRequestEntity
	}
	return "REQUEST"
}

// wrote records an item key the raw loops write on the product table, for
// cleanup (written keys are kept once, whether the write succeeded or not).
func (s *standins) wrote(pk, sk string) {
	if !s.onProduct {
		return
	}
	s.mu.Lock()
	if s.written == nil {
		s.written = map[[2]string]struct{}{}
	}
	s.written[[2]string{pk, sk}] = struct{}{}
	s.mu.Unlock()
}

// scratch prepares the table of the measurement name and returns a func
// that removes what it wrote: each measurement starts without the last
// one's items and leaves nothing behind to slow the stack's next run.
// On the product table that is the items the loops wrote (wrote); on a
// scratch copy, the table.
func (s *standins) scratch(ctx context.Context, name string) (func(), error) {
	if s.onProduct {
		s.table = aws.ToString(s.product.TableName)
		return func() { s.clean(context.WithoutCancel(ctx), name) }, nil
	}
	s.table = "pacer-load-raw-" + s.tag + "-" + name
	if _, err := s.dynamo.CreateTable(ctx, copyTable(s.product, s.table)); err != nil {
		return nil, fmt.Errorf("raw rates: create the scratch table: %w", err)
	}
	table := s.table
	return func() {
		_, _ = s.dynamo.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(table)}) // best effort: scratch
	}, nil
}

// cleanBatch is BatchWriteItem's most requests per call.
const cleanBatch = 25

// clean deletes the items the raw loops wrote on the product table, 25 per
// BatchWriteItem from 4 goroutines, retrying unprocessed ones. Best
// effort: what it cannot delete it reports (the items belong to events
// and users of the raw loops' own and the publisher ignores them).
func (s *standins) clean(ctx context.Context, name string) {
	s.mu.Lock()
	keys := make([][2]string, 0, len(s.written))
	for k := range s.written {
		keys = append(keys, k)
	}
	s.written = nil
	s.mu.Unlock()
	fmt.Fprintf(os.Stderr, "[%s] raw rates: deleting the %d items the raw loops wrote to %s...\n", name, len(keys), s.table)
	batches := make(chan [][2]string)
	var failed errCount
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for b := range batches {
				failed.add(s.deleteKeys(ctx, b))
			}
		})
	}
	for i := 0; i < len(keys); i += cleanBatch {
		batches <- keys[i:min(i+cleanBatch, len(keys))]
	}
	close(batches)
	wg.Wait()
	if failed.first != nil {
		fmt.Fprintf(os.Stderr, "[%s] raw rates: %d batches of raw items not deleted from %s: %v\n", name, failed.n.Load(), s.table, failed.first)
	}
}

// deleteKeys deletes keys (at most 25) in one BatchWriteItem, then its
// unprocessed items, up to 10 calls.
func (s *standins) deleteKeys(ctx context.Context, keys [][2]string) error {
	reqs := make([]dtypes.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = dtypes.WriteRequest{DeleteRequest: &dtypes.DeleteRequest{Key: map[string]dtypes.AttributeValue{"PK": str(k[0]), "SK": str(k[1])}}}
	}
	items := map[string][]dtypes.WriteRequest{s.table: reqs}
	for range 10 {
		out, err := s.dynamo.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: items})
		if err != nil {
			return err
		}
		if len(out.UnprocessedItems) == 0 {
			return nil
		}
		items = out.UnprocessedItems
	}
	return fmt.Errorf("%d deletes still unprocessed after 10 calls", len(items[s.table]))
}
