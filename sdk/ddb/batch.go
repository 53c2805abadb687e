package ddb

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Batch sizes DynamoDB allows per call.
const (
	MaxBatchGet   = 100
	MaxBatchWrite = 25
)

// BatchGet reads items by key, 100 per call, retrying unprocessed keys with
// backoff. The result has one entry per key, in the order of keys; a
// missing item (or another tenant's, through a scoped view) is nil.
// Duplicate keys are read once. Keys still unprocessed after the retry
// budget are returned in a *BatchError, never dropped; the items that were
// read are still returned alongside it. ⌈unique keys/100⌉
// calls are made when nothing comes back unprocessed.
func (t *Table) BatchGet(ctx context.Context, keys []Key) ([]Item, error) {
	out := make([]Item, len(keys))
	index := make(map[Key][]int, len(keys))
	var unique []Key
	for i, k := range keys {
		if _, ok := index[k]; !ok {
			unique = append(unique, k)
		}
		index[k] = append(index[k], i)
	}
	for lo := 0; lo < len(unique); lo += MaxBatchGet {
		chunk := unique[lo:min(lo+MaxBatchGet, len(unique))]
		req := make([]Item, len(chunk))
		for i, k := range chunk {
			req[i] = t.key(k)
		}
		bo := t.db.retrier()
		for attempt := 0; len(req) > 0; attempt++ {
			start := time.Now()
			res, err := t.db.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems:           map[string]types.KeysAndAttributes{t.name: {Keys: req}},
				ReturnConsumedCapacity: t.db.consumed(),
			})
			var cc []types.ConsumedCapacity
			if res != nil {
				cc = res.ConsumedCapacity
			}
			t.db.observe(ctx, "BatchGetItem", t.name, "", start, cc, err)
			if err != nil {
				rest := t.keysOf(req, unique[lo+len(chunk):])
				return out, &BatchError{Op: "BatchGetItem", Keys: rest, Err: err, Unprocessed: len(rest)}
			}
			for _, it := range res.Responses[t.name] {
				if !t.owns(it) {
					continue
				}
				for _, i := range index[t.keyOf(it)] {
					out[i] = it
				}
			}
			req = res.UnprocessedKeys[t.name].Keys
			if len(req) == 0 {
				break
			}
			if attempt >= t.db.cfg.BatchRetries {
				rest := t.keysOf(req, unique[lo+len(chunk):])
				return out, &BatchError{Op: "BatchGetItem", Keys: rest, Unprocessed: len(rest)}
			}
			if err := sleep(ctx, bo.NextBackOff()); err != nil {
				rest := t.keysOf(req, unique[lo+len(chunk):])
				return out, &BatchError{Op: "BatchGetItem", Keys: rest, Err: err, Unprocessed: len(rest)}
			}
		}
	}
	return out, nil
}

func (t *Table) keysOf(items []Item, more []Key) []Key {
	ks := make([]Key, 0, len(items)+len(more))
	for _, it := range items {
		ks = append(ks, t.keyOf(it))
	}
	return append(ks, more...)
}

// BatchWrite puts and deletes items, 25 per call, retrying unprocessed ones
// with backoff. Writes are not conditional and not atomic across items.
// Anything still unprocessed after the retry budget is returned in a
// *BatchError. Through a scoped view, puts must carry the view's tenant,
// but, being unconditional, they would overwrite another tenant's item with
// the same key: batch-put through a view only when the keys themselves are
// tenant-prefixed (as PhotoService's ORG#<org>#… keys are); otherwise use
// Entity.Put or Create, which are conditional on the tenant.
func (t *Table) BatchWrite(ctx context.Context, puts []Item, deletes []Key) error {
	reqs := make([]types.WriteRequest, 0, len(puts)+len(deletes))
	seen := make(map[Key]bool, len(puts)+len(deletes))
	for _, it := range puts {
		if !t.owns(it) || (t.tenantAttr != "" && it[t.tenantAttr] == nil) {
			return fmt.Errorf("%w: batch put of %s / %s outside tenant %q", ErrTenant, t.keyOf(it).PK, t.keyOf(it).SK, t.tenant)
		}
		k := t.keyOf(it)
		if seen[k] {
			return fmt.Errorf("%w: batch writes %s / %s twice", ErrInvalid, k.PK, k.SK)
		}
		seen[k] = true
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: it}})
	}
	if t.tenantAttr != "" && len(deletes) > 0 {
		return fmt.Errorf("%w: batch deletes are not tenant-checked; delete through Op in a scoped view", ErrInvalid)
	}
	for _, k := range deletes {
		if seen[k] {
			return fmt.Errorf("%w: batch writes %s / %s twice", ErrInvalid, k.PK, k.SK)
		}
		seen[k] = true
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: t.key(k)}})
	}
	for lo := 0; lo < len(reqs); lo += MaxBatchWrite {
		req := reqs[lo:min(lo+MaxBatchWrite, len(reqs))]
		// rest is what is not yet written: cur plus every later chunk.
		rest := func(cur []types.WriteRequest) []types.WriteRequest {
			out := append([]types.WriteRequest(nil), cur...)
			return append(out, reqs[min(lo+MaxBatchWrite, len(reqs)):]...)
		}
		bo := t.db.retrier()
		for attempt := 0; len(req) > 0; attempt++ {
			start := time.Now()
			res, err := t.db.client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems:           map[string][]types.WriteRequest{t.name: req},
				ReturnConsumedCapacity: t.db.consumed(),
			})
			var cc []types.ConsumedCapacity
			if res != nil {
				cc = res.ConsumedCapacity
			}
			t.db.observe(ctx, "BatchWriteItem", t.name, "", start, cc, err)
			if err != nil {
				return t.writeError(rest(req), err)
			}
			req = res.UnprocessedItems[t.name]
			if len(req) == 0 {
				break
			}
			if attempt >= t.db.cfg.BatchRetries {
				return t.writeError(rest(req), nil)
			}
			if err := sleep(ctx, bo.NextBackOff()); err != nil {
				return t.writeError(rest(req), err)
			}
		}
	}
	return nil
}

func (t *Table) writeError(rest []types.WriteRequest, err error) error {
	be := &BatchError{Op: "BatchWriteItem", Err: err, Unprocessed: len(rest)}
	for _, r := range rest {
		if r.PutRequest != nil {
			be.Puts = append(be.Puts, r.PutRequest.Item)
		} else if r.DeleteRequest != nil {
			be.Keys = append(be.Keys, t.keyOf(r.DeleteRequest.Key))
		}
	}
	return be
}
