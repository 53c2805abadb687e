package asyncbackend

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	"github.com/pacerhq/pacer/sdk/awsclient"
)

// Ready returns a readiness check of what Open opened: the table exists
// and is ACTIVE (DescribeTable), and the queue answers (GetQueueAttributes).
func Ready(cfg Config, q *sqsqueue.Queue) func(ctx context.Context) error {
	table := cfg.Table
	if table == "" {
		table = dynamostore.DefaultTable
	}
	dc := cfg.DynamoDB
	if dc == nil {
		if cfg.AWS == nil {
			return func(context.Context) error {
				return errors.New("asyncbackend: no AWS configuration (call Config.LoadAWS first)")
			}
		}
		dc = awsclient.DynamoDB(*cfg.AWS)
	}
	return func(ctx context.Context) error {
		out, err := dc.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("table %s: %w", table, err)
		}
		if s := out.Table.TableStatus; s != "ACTIVE" && s != "UPDATING" {
			return fmt.Errorf("table %s is %s", table, s)
		}
		if _, err := q.Depth(ctx); err != nil {
			return fmt.Errorf("queue: %w", err)
		}
		return nil
	}
}
