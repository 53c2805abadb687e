package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// rawPoller reads raw requests the way a run's clients poll the product's
// (run.go, as the participation page does): a strongly consistent GetItem
// of the request first 300 ms after its ingest answered, then 1.6× later
// each time, at most 4 s apart, until it is terminal, with at most
// inflight reads at once. The product's poll is one such read
// (GET /requests/{id}: dynamostore.GetRequest).
type rawPoller struct {
	s     *standins
	sem   chan struct{}
	wg    sync.WaitGroup
	reads atomic.Int64
}

func newRawPoller(s *standins, inflight int) *rawPoller {
	return &rawPoller{s: s, sem: make(chan struct{}, max(1, inflight))}
}

// poll polls r until it is terminal or ctx ends.
func (p *rawPoller) poll(ctx context.Context, r rawReq) {
	p.wg.Go(func() {
		for delay := 300 * time.Millisecond; ; delay = min(delay*16/10, 4*time.Second) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			select {
			case p.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			out, err := p.s.dynamo.GetItem(ctx, &dynamodb.GetItemInput{TableName: &p.s.table, Key: r.key(), ConsistentRead: aws.Bool(true)})
			<-p.sem
			p.reads.Add(1)
			if err == nil {
				if st, ok := out.Item["status"].(*dtypes.AttributeValueMemberS); ok && (st.Value == "SUCCEEDED" || st.Value == "REJECTED") {
					return
				}
			}
		}
	})
}
