package awsclient

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// Counter counts AWS API calls by service and operation, through an SDK
// middleware, so tests can assert exact call counts ("a new ingest costs 3
// calls") and services can export them as metrics. Attach it to an
// aws.Config before creating clients from it.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return &Counter{counts: map[string]int{}} }

// Attach adds the counting middleware to cfg; clients made from cfg
// afterwards are counted. Retries of one call count once.
func (c *Counter) Attach(cfg *aws.Config) {
	// Clip: cfg may be a copy of a config others append to as well.
	cfg.APIOptions = append(slices.Clip(cfg.APIOptions), func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("pacer.CallCounter",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.add(awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx))
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	})
}

func (c *Counter) add(key string) {
	c.mu.Lock()
	c.counts[key]++
	c.mu.Unlock()
}

// Count returns the calls to op ("DynamoDB.PutItem", "SQS.SendMessage").
// An op of just a service name ("DynamoDB") counts all its operations.
func (c *Counter) Count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.Contains(op, ".") {
		return c.counts[op]
	}
	n := 0
	for k, v := range c.counts {
		if strings.HasPrefix(k, op+".") {
			n += v
		}
	}
	return n
}

// Total returns all calls counted.
func (c *Counter) Total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Reset sets every count to zero.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.counts = map[string]int{}
	c.mu.Unlock()
}

// String lists the counts, e.g. "DynamoDB.PutItem=1 SQS.SendMessage=1".
func (c *Counter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.counts))
	for k := range c.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(c.counts[k]))
	}
	return b.String()
}
