package main

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// rawPoller reads raw requests the way a run's clients poll the product's
// (run.go, as the participation page does): a strongly consistent GetItem
// of the request first 300 ms after its ingest answered, then 1.6× later
// each time, at most 4 s apart, and not before the Retry-After the API
// would have answered (rawRetryAfter), until it is terminal, with at most
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
		for delay := 300 * time.Millisecond; ; {
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
			hint := ""
			if err == nil {
				if st, ok := out.Item["status"].(*dtypes.AttributeValueMemberS); ok && (st.Value == "SUCCEEDED" || st.Value == "REJECTED") {
					return
				}
				hint = rawRetryAfter(out.Item, time.Now())
			}
			delay = nextPoll(delay, hint)
		}
	})
}

// nextPoll is the wait after a poll that waited delay and was answered
// with Retry-After retryAfter (whole seconds, or ""): 1.6× longer, at
// most 4 s, as the participation page's, and not shorter than the hint.
func nextPoll(delay time.Duration, retryAfter string) time.Duration {
	next := min(delay*16/10, 4*time.Second)
	if s, err := strconv.Atoi(retryAfter); err == nil && time.Duration(s)*time.Second > next {
		next = time.Duration(s) * time.Second
	}
	return next
}

// rawRetryAfter is the Retry-After the API answers for a request item as
// it is at now: the product's own rule (asyncevent.PollAfter, with the
// product's default MaxLateness) on the item's status, uiPhase and
// queuedAt.
func rawRetryAfter(item map[string]dtypes.AttributeValue, now time.Time) string {
	qat, _ := strconv.ParseInt(attrN(item, "queuedAt"), 10, 64)
	r := asyncevent.Request{Status: asyncevent.Status(attrS(item, "status")), UIPhase: asyncevent.UIPhase(attrS(item, "uiPhase")), QueuedAt: qat}
	return asyncevent.RetryAfter(asyncevent.PollAfter(&r, now, maxLateness))
}
