// Package ddbtest gives each test its own DynamoDB table on the local
// stand-in (sdk/standin), so tests run in parallel without sharing state.
//
//	func TestMain(m *testing.M) { standin.RunTests(m, standin.Config{DynamoDB: true}) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		env := ddbtest.New(t, &mySchema)
//		users := ddb.NewEntity[User](env.Table, "USER", userKey)
//		...
//		env.Calls.Count("DynamoDB.Query") // exact call counts
//	}
//
// If no DynamoDB endpoint is configured the test fails, saying how to start
// one; it never skips.
package ddbtest

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// Env is a fresh table and the clients around it.
type Env struct {
	Table  *ddb.Table
	DB     *ddb.DB
	Client *dynamodb.Client
	Config aws.Config
	// Calls counts every AWS call made through Client (and so through DB).
	Calls *awsclient.Counter
}

var seq atomic.Int64

var unsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]`)

// TableName returns a unique, valid table name derived from the test name.
func TableName(t testing.TB) string {
	n := unsafe.ReplaceAllString(t.Name(), "_")
	if len(n) > 150 {
		n = n[:150]
	}
	return fmt.Sprintf("%s-%d-%d", n, time.Now().UnixNano()%1e9, seq.Add(1))
}

// New creates a table with schema on DynamoDB Local and returns it. The
// optional cfg configures the DB (e.g. an Observer); a fixed test cursor key
// is used when none is given.
func New(t testing.TB, schema *ddb.Schema, cfg ...ddb.Config) *Env {
	t.Helper()
	return NewAt(t, "", schema, cfg...)
}

// NewAt is New on the DynamoDB Local at endpoint (a private stand-in's,
// standin.Stack.DynamoDBEndpoint), or the environment's when endpoint is
// "".
func NewAt(t testing.TB, endpoint string, schema *ddb.Schema, cfg ...ddb.Config) *Env {
	t.Helper()
	if os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "" {
		t.Fatal("ddbtest: AWS_ENDPOINT_URL_DYNAMODB is not set. Start DynamoDB Local from TestMain with " +
			"standin.RunTests(m, standin.Config{DynamoDB: true}), after `make deps` installs it.")
	}
	ctx := context.Background()
	awsCfg, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	calls := awsclient.NewCounter()
	calls.Attach(&awsCfg)
	client := awsclient.DynamoDB(awsCfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	c := ddb.Config{CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")}
	if len(cfg) > 0 {
		c = cfg[0]
		if len(c.CursorKey) == 0 {
			c.CursorKey = []byte("ddbtest-cursor-key-0123456789abcdef")
		}
	}
	db := ddb.New(client, c)
	table := db.Table(TableName(t), schema)
	if err := table.Ensure(ctx); err != nil {
		t.Fatalf("ddbtest: create table: %v", err)
	}
	t.Cleanup(func() {
		if _, err := client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(table.Name())}); err != nil {
			t.Logf("ddbtest: delete table %s: %v", table.Name(), err)
		}
	})
	calls.Reset()
	return &Env{Table: table, DB: db, Client: client, Config: awsCfg, Calls: calls}
}
