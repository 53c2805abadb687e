// Command couponclaim is a small coupon service built on Pacer's DynamoDB
// SDK (sdk/ddb), the way another team would use it: its own table, its own
// entities, a guarded counter, put-if-absent claims in a transaction, and a
// paginated GSI query.
//
// Run it against a DynamoDB it is pointed at:
//
//	AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:8000 go run ./examples/couponclaim
//
// or with -local, which starts a private DynamoDB Local for the run (after
// `make deps`):
//
//	go run ./examples/couponclaim -local
//
// With neither it uses the standard AWS configuration. It creates its table
// (-table, default CouponClaim-dev) if absent.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/standin"
)

func main() {
	table := flag.String("table", "CouponClaim-dev", "DynamoDB table (created if absent)")
	local := flag.Bool("local", false, "start a private DynamoDB Local for this run")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := start(ctx, *table, *local); err != nil {
		fmt.Fprintln(os.Stderr, "couponclaim:", err)
		os.Exit(1)
	}
}

func start(ctx context.Context, table string, local bool) error {
	if local {
		stack, err := standin.Start(ctx, standin.Config{DynamoDB: true})
		if err != nil {
			return err
		}
		defer stack.Close()
		stack.Setenv()
	}
	cfg, err := awsclient.Load(ctx)
	if err != nil {
		return err
	}
	db := ddb.New(awsclient.DynamoDB(cfg), ddb.Config{CursorKey: []byte(os.Getenv("COUPON_CURSOR_KEY")), TxConflictRetries: 20})
	return run(ctx, db.Table(table, &schema), os.Stdout)
}
