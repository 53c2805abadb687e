package asynceventbackend

import (
	"context"
	"errors"
	"fmt"

	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// Ready returns a readiness check of what OpenAPI or OpenWorker opened:
// the table exists, is ACTIVE (or UPDATING) and has the store's key and
// indexes (ddb.Table.Check: one DescribeTable), and the queue answers
// (GetQueueAttributes).
func Ready(cfg Config, q *sqsqueue.Queue) func(ctx context.Context) error {
	table := cfg.Table
	if table == "" {
		table = dynamostore.DefaultTable
	}
	dc := cfg.DynamoDB
	if dc == nil {
		if cfg.AWS == nil {
			return func(context.Context) error {
				return errors.New("asynceventbackend: no AWS configuration (call Config.LoadAWS first)")
			}
		}
		dc = awsclient.DynamoDB(*cfg.AWS)
	}
	t := ddb.New(dc, ddb.Config{}).Table(table, &dynamostore.Schema)
	return func(ctx context.Context) error {
		if err := t.Check(ctx); err != nil {
			return err
		}
		if _, err := q.Depth(ctx); err != nil {
			return fmt.Errorf("queue: %w", err)
		}
		return nil
	}
}
