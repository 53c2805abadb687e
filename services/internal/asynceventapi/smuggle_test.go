package asynceventapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/pacerhq/pacer/modules/asyncevent/asynceventtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/smuggletest"
)

// The API as Run serves it answers every over-limit body once, runs no
// request hidden in it (a participation, which would write), and writes
// nothing (see package smuggletest).
func TestOverLimitBodiesSmuggleNothing(t *testing.T) {
	t.Parallel()
	env := asynceventtest.New(t, asynceventtest.Options{})
	addr := run(t, env, asynceventapi.Config{Dev: true})
	// The request hidden in each body would take a seat in probe1.
	if _, err := env.Admin.CreateEvent(context.Background(), asyncevent_firstCome("probe1")); err != nil {
		t.Fatal(err)
	}
	api := asynceventapi.NewAPI(http.NewServeMux(), asynceventapi.Deps{}, nil, false)
	smuggletest.CheckAPI(t, api, smuggletest.Target{
		Addr:   addr,
		Header: map[string]string{server.DevUserHeader: "prober", server.DevRolesHeader: "admin", "Content-Type": "application/json"},
		Hidden: "POST /events/probe1/participations HTTP/1.1\r\nHost: smuggled\r\n" + server.DevUserHeader + ": smuggler\r\n",
	})
	items, err := env.Dynamo.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(env.DDB.Table.Name())})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(items.Items); n != 3 { // probe1's CONFIG, CAPACITY and OpenEvent
		t.Errorf("the table holds %d items, want only the event's 3: a hidden participation was written", n)
	}
}
