package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/deploy/stack"
	"github.com/pacerhq/pacer/modules/asyncevent"
	asyncstore "github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	"github.com/pacerhq/pacer/modules/asyncevent/sqsqueue"
	photostore "github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/sdk/ddb/stream"
	"github.com/pacerhq/pacer/sdk/pgtest"
	"github.com/pacerhq/pacer/services/internal/asynceventapi"
	"github.com/pacerhq/pacer/services/internal/asynceventbackend"
	"github.com/pacerhq/pacer/services/internal/asynceventevents"
	"github.com/pacerhq/pacer/services/internal/asynceventworker"
	"github.com/pacerhq/pacer/services/internal/metrics"
	"github.com/pacerhq/pacer/services/internal/photoapi"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
	"github.com/pacerhq/pacer/services/internal/server"
	"github.com/pacerhq/pacer/services/internal/testkit/iamtest"
)

// TestAccessIsExactlyWhatTheBinariesCall runs the four binaries' Run
// functions against the stand-ins, each under its generated task-role
// policy (read from the committed template) enforced the way AWS would
// (iamtest: each call's IAM actions, a transaction item by item, on the
// ARNs of its table, index, stream, queue or bus), drives their flows
// (participations of both event types through the API and the worker,
// the admin, DLQ, redrive and sweep paths, the draw, the publisher reading
// the table's stream into EventBridge, the photo API's ingest, search,
// delete, privacy with a stale index entry, and sync), and checks that:
// no call was refused; what each called, on which resource, is exactly
// its Access (every call granted, every grant called); and each action of
// each policy is needed: without it, a call the binary made is refused
// (logged with the calls, for each binary).
func TestAccessIsExactlyWhatTheBinariesCall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// A stand-in for EventBridge's PutEvents (there is no local one): it
	// accepts every entry.
	var putEvents atomic.Int64
	eb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Entries []json.RawMessage }
		_ = json.NewDecoder(r.Body).Decode(&in)
		putEvents.Add(int64(len(in.Entries)))
		out := map[string]any{"FailedEntryCount": 0, "Entries": make([]map[string]string, len(in.Entries))}
		for i := range in.Entries {
			out["Entries"].([]map[string]string)[i] = map[string]string{"EventId": fmt.Sprint(i)}
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer eb.Close()
	t.Setenv("AWS_ENDPOINT_URL_EVENTBRIDGE", eb.URL)
	base, err := awsclient.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	suffix := fmt.Sprintf("acc%d", time.Now().UnixNano()%1e9)
	table, queue, checkpoints, bus := "AsyncEventTable-"+suffix, "participations-"+suffix, "Checkpoints-"+suffix, "pacer-"+suffix
	replicas := "PacerReplicas-" + suffix
	photoTable := photostore.TableName(suffix)
	photoBucket := "pacer-photos-" + suffix
	// The binaries run under their generated task-role policies, their
	// resources given the ARNs they would have on AWS.
	arns := iamtest.ARNs{Region: "us-east-1", Account: "123456789012"}
	policies := taskPolicies(t, map[string]string{
		"AWS::Partition": "aws", "AWS::Region": arns.Region, "AWS::AccountId": arns.Account,
		stack.IDAsyncTable + ".Arn": arns.Table(table), stack.IDAsyncTable + ".StreamArn": arns.Stream(table),
		stack.IDPhotoTable + ".Arn": arns.Table(photoTable), stack.IDCheckpointTable + ".Arn": arns.Table(checkpoints),
		stack.IDReplicasTable + ".Arn": arns.Table(replicas),
		stack.IDQueue + ".Arn":         arns.Queue(queue), stack.IDDLQ + ".Arn": arns.Queue(queue + "-dlq"), "EventBus.Arn": arns.Bus(bus),
		stack.ParamPhotoBucket: photoBucket,
	})
	targets := map[string]stack.Target{
		arns.Table(table): stack.TargetTable, arns.Stream(table): stack.TargetTableStream, arns.Table(photoTable): stack.TargetPhotoTable,
		arns.Table(checkpoints): stack.TargetCheckpoints, arns.Table(replicas): stack.TargetReplicas, arns.Queue(queue): stack.TargetQueue, arns.Queue(queue + "-dlq"): stack.TargetDLQ,
		arns.Bus(bus): stack.TargetEventBus, arns.Object(photoBucket, "*"): stack.TargetPhotoBucket,
	}

	// What the stack creates is created here, unrecorded: the containers
	// run with PACER_ASYNCEVENT_SETUP=false and PACER_PHOTO_SETUP=false
	// (Setup false below), so CreateTable is no call of theirs.
	db := ddb.New(awsclient.DynamoDB(base), ddb.Config{})
	if err := asyncstore.New(db.Table(table, &asyncstore.Schema)).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := stream.NewDynamoCheckpoints(db, checkpoints).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sqsqueue.Open(ctx, awsclient.SQS(base), sqsqueue.Config{Name: queue, MaxReceives: 3, Ensure: true}); err != nil {
		t.Fatal(err)
	}
	if err := db.Table(photoTable, &photostore.Schema).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Table(replicas, &ratelimit.ReplicaSchema).Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	// The APIs count their replicas there, as the containers do
	// (PACER_RATE_REPLICAS_TABLE).
	sharing := server.LimitSharing{ReplicasTable: replicas}

	enf, cfg := map[string]*iamtest.Enforcer{}, map[string]*aws.Config{}
	for _, b := range []string{AsyncAPI, Worker, Events, PhotoAPI} {
		enf[b] = iamtest.New(policies[b], arns)
		c := enf[b].Attach(base)
		cfg[b] = &c
	}
	backend := func(bin string) asynceventbackend.Config {
		// EMF on, as in the generated task definitions: what it reads
		// (the worker's queue counts for the spike metric, the API's
		// invariant check) goes through the enforcer too.
		return asynceventbackend.Config{Table: table, Queue: queue, MaxReceives: 3, AWS: cfg[bin], Log: quiet,
			EMF: metrics.EMF{On: true, Stage: suffix, Out: io.Discard, Every: 200 * time.Millisecond}}
	}
	runCtx, stop := context.WithCancel(ctx)
	done, started := make(chan error, 4), 0
	serve := func(name string, run func() error) {
		started++
		go func() {
			err := run()
			if err != nil && runCtx.Err() == nil {
				err = fmt.Errorf("%s: %w", name, err)
			} else {
				err = nil
			}
			done <- err
		}()
	}
	listen := func() net.Listener {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	apiL, opsL, photoL := listen(), listen(), listen()
	apiReady, photoReady := make(chan struct{}), make(chan struct{})
	serve(AsyncAPI, func() error {
		cfg := backend(AsyncAPI)
		cfg.DrawGrace = 100 * time.Millisecond // the draw right after the cutoff, not 5 s later
		return asynceventapi.Run(runCtx, asynceventapi.Config{Config: cfg, Listener: apiL, Dev: true, Limits: server.LimitSettings{LimitSharing: sharing},
			Ready: func(context.Context, string, asynceventapi.Deps) error { close(apiReady); return nil }})
	})
	serve(Worker, func() error {
		cfg := backend(Worker)
		cfg.RequeueAfter = 300 * time.Millisecond
		cfg.CandidateWaits = 1 // one continuation, then the wedged message's receives count
		return asynceventworker.Run(runCtx, asynceventworker.Config{Config: cfg, Concurrency: 4, Batch: 10,
			Visibility: 2 * time.Second, Wait: time.Second, SweepEvery: 300 * time.Millisecond, OpsListener: opsL})
	})
	dbURL := pgtest.NewDatabase(t)
	serve(PhotoAPI, func() error {
		return photoapi.Run(runCtx, photoapi.Config{Listener: photoL, Stage: suffix, DatabaseURL: dbURL, Dev: true, Setup: false, Log: quiet, AWS: cfg[PhotoAPI],
			Limits: photoapi.LimitSettings{LimitSharing: sharing},
			Bucket: photoBucket, // its presigned links to originals: signed offline, authorized as s3:GetObject
			Ready: func(ctx context.Context, _ string, d photoapi.Deps) error {
				defer close(photoReady)
				_, err := photoapi.SeedDemo(ctx, d.Directory, d.Ingest, d.Timing)
				return err
			}})
	})
	defer func() {
		stop()
		for range started {
			if err := <-done; err != nil {
				t.Error(err)
			}
		}
	}()
	for _, ch := range []chan struct{}{apiReady, photoReady} {
		select {
		case <-ch:
		case err := <-done:
			t.Fatalf("a binary stopped before it was ready: %v", err)
		case <-ctx.Done():
			t.Fatal("the binaries did not become ready")
		}
	}

	api := client{t: t, base: "http://" + apiL.Addr().String(), roles: "admin"}
	user := func(id string) client { return client{t: t, base: api.base, user: id} }
	now := time.Now().UnixMilli()
	api.do("POST", "/admin/events", 201, fmt.Sprintf(`{"eventId":"fc","eventType":"FIRST_COME","capacityTotal":2,"ordering":"arrival","closesAt":%d}`, now+3600_000))
	// The lottery's entries close 8 s from now: its three entries come
	// first even on a loaded machine (a 2 s cutoff closed before them in
	// a clean-clone run), and the draw after the flows below rarely waits.
	const cutoff = 8000
	api.do("POST", "/admin/events", 201, fmt.Sprintf(`{"eventId":"lot","eventType":"LOTTERY","winners":1,"lotteryCutoffAt":%d}`, now+cutoff))
	var reqs []string
	for i := range 3 {
		for _, ev := range []string{"fc", "lot"} {
			var out struct{ RequestID string }
			user(fmt.Sprint("u", i)).decode(user(fmt.Sprint("u", i)).do("POST", "/events/"+ev+"/participations", 202, `{}`), &out)
			reqs = append(reqs, out.RequestID)
		}
	}
	// Every request decided (the FIRST_COME arrival allocator waits a few
	// seconds; lottery entries are ENTERED).
	// FIRST_COME requests are decided by the worker (the arrival
	// allocator waits a few seconds); lottery entries wait in PROCESSING
	// for the draw, which decides them.
	decided := func(lotteryDrawn bool) func() bool {
		return func() bool {
			for i, id := range reqs {
				var r struct{ Status string }
				api.decode(api.do("GET", "/admin/requests/"+id, 200, ""), &r)
				switch {
				case r.Status == "RECEIVED" || r.Status == "QUEUED":
					return false
				case r.Status == "PROCESSING" && (i%2 == 0 || lotteryDrawn):
					return false
				}
			}
			return true
		}
	}
	// A request stranded in RECEIVED (its ingest died before the send),
	// written unrecorded: the worker's sweep re-queues it.
	stranded := &asyncevent.Request{RequestID: "stranded-" + suffix, EventID: "fc", UserID: "u-stranded", EventType: asyncevent.FirstCome,
		Status: asyncevent.StatusReceived, RequestedAt: now - 1000}
	if _, _, err := asyncstore.New(db.Table(table, &asyncstore.Schema)).CreateRequest(ctx, stranded, now/1000+3600); err != nil {
		t.Fatal(err)
	}
	reqs = append(reqs, stranded.RequestID, reqs[1]) // (a lottery entry again, to keep fc, lot alternating)
	waitFor(t, ctx, "requests processed", decided(false))
	// A FIRST_COME event in delivery order with one seat and three users:
	// one takes it, and the worker rejects the others once it knows the
	// event sold out, conditional on the capacity item (a ConditionCheck
	// item in the rejection's transaction).
	api.do("POST", "/admin/events", 201, `{"eventId":"fcd","eventType":"FIRST_COME","capacityTotal":1,"ordering":"delivery"}`)
	var soldOut []string
	for i := range 3 {
		var out struct{ RequestID string }
		u := user(fmt.Sprint("d", i))
		u.decode(u.do("POST", "/events/fcd/participations", 202, `{}`), &out)
		soldOut = append(soldOut, out.RequestID)
	}
	waitFor(t, ctx, "the sold-out event's requests decided", func() bool {
		counts := map[string]int{}
		for _, id := range soldOut {
			var r struct{ Status string }
			api.decode(api.do("GET", "/admin/requests/"+id, 200, ""), &r)
			counts[r.Status]++
		}
		return counts["SUCCEEDED"] == 1 && counts["REJECTED"] == 2
	})
	// A lottery entry whose enqueue failed at ingest (written unrecorded),
	// re-queued by an operator: the reopen is conditional on the lottery
	// being still OPEN (a ConditionCheck item in its transaction).
	api.do("POST", "/admin/events", 201, fmt.Sprintf(`{"eventId":"lot2","eventType":"LOTTERY","winners":1,"lotteryCutoffAt":%d}`, now+3600_000))
	failed := &asyncevent.Request{RequestID: "failed-" + suffix, EventID: "lot2", UserID: "u-failed", EventType: asyncevent.Lottery,
		Status: asyncevent.StatusFailedFinal, ResultCode: asyncevent.CodeFailedIngestEnqueue, RequestedAt: now, FinishedAt: now}
	if _, _, err := asyncstore.New(db.Table(table, &asyncstore.Schema)).CreateRequest(ctx, failed, now/1000+3600); err != nil {
		t.Fatal(err)
	}
	api.do("POST", "/admin/requests/"+failed.RequestID+"/requeue", 200, "")
	time.Sleep(time.Until(time.UnixMilli(now + cutoff + 200))) // the cutoff and the API's DrawGrace
	api.do("POST", "/admin/events/lot/draw", 200, `{}`)
	waitFor(t, ctx, "lottery decided", decided(true))
	// A dead letter, for the worker's tagged DLQ send and the API's DLQ
	// view and class redrive: a request PROCESSING without the candidate
	// phase is never decided by the allocator, so its message (sent here,
	// unrecorded) is continued once (CandidateWaits 1) and is then still
	// not done on its last processing receive (MaxReceives 3: the second,
	// after a shortened visibility).
	wedged := &asyncevent.Request{RequestID: "wedged-" + suffix, EventID: "fc", UserID: "u-wedged", EventType: asyncevent.FirstCome,
		Status: asyncevent.StatusProcessing, RequestedAt: now - 3600_000, QueuedAt: now - 3600_000}
	if _, _, err := asyncstore.New(db.Table(table, &asyncstore.Schema)).CreateRequest(ctx, wedged, now/1000+3600); err != nil {
		t.Fatal(err)
	}
	raw, err := sqsqueue.Open(ctx, awsclient.SQS(base), sqsqueue.Config{Name: queue})
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Send(ctx, asyncevent.Message{RequestID: wedged.RequestID, EventID: "fc", UserID: wedged.UserID, EventType: asyncevent.FirstCome}.Encode()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the wedged request's message dead-lettered", func() bool {
		_, dead, err := raw.Depths(ctx)
		return err == nil && dead == 1
	})
	for _, p := range []string{"/admin/events/fc", "/admin/events/fc/requests", "/admin/events/fc/stats", "/admin/events/lot/stats",
		"/admin/requests/" + reqs[0] + "/logs", "/admin/dlq", "/metrics"} {
		api.do("GET", p, 200, "")
	}
	api.do("POST", "/admin/dlq/redrive?class=ALLOCATING", 202, "")
	user("u0").do("GET", "/requests/"+reqs[0], 200, "")
	user("u0").do("GET", "/me/participations", 200, "")
	api.do("POST", "/admin/requests/sweep", 200, "")
	api.do("POST", "/admin/events/fc/close", 200, "")
	api.do("POST", "/admin/dlq/redrive", 0, "") // local-aws-sqs may not support a move task; the call is what counts
	ops := client{t: t, base: "http://" + opsL.Addr().String()}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		ops.do("GET", p, 200, "")
	}
	serve(Events, func() error {
		return asynceventevents.Run(runCtx, asynceventevents.Config{Config: backend(Events), CheckpointTable: checkpoints, Consumer: "acc",
			SinkKind: asynceventevents.SinkEventBridge, Bus: bus, Poll: 100 * time.Millisecond})
	})
	waitFor(t, ctx, "events published", func() bool { return putEvents.Load() >= int64(len(reqs)) })

	org := client{t: t, base: "http://" + photoL.Addr().String(), roles: "organizer", org: "demo-org"}
	const ev = "/events/seoul-marathon-2024"
	var gallery struct {
		Photos []struct{ ULID string }
	}
	org.decode(org.do("GET", ev+"/photos", 200, ""), &gallery)
	if len(gallery.Photos) == 0 {
		t.Fatal("the demo gallery is empty")
	}
	org.do("GET", ev+"/photos/"+gallery.Photos[0].ULID, 200, "")
	org.do("GET", ev+"/photos/"+gallery.Photos[0].ULID+"/original", 200, "") // a presign: no request, but the call s3:GetObject authorizes
	org.do("GET", ev+"/bibs/1001/photos", 200, "")
	org.do("GET", "/photographers/ph_kim/photos", 200, "")
	client{t: t, base: org.base}.do("GET", "/public"+ev+"/bibs/1008/photos", 200, "")
	org.do("DELETE", ev+"/photos/"+gallery.Photos[1].ULID, 200, "")
	// A stale BIB_INDEX entry (its PHOTO never written: a lost write),
	// written unrecorded: hiding the bib drops it with a DeleteItem.
	staleKey := photostore.BibKey("demo-org", "seoul-marathon-2024", "1001", "01STALE0000000000000000000")
	if _, err := awsclient.DynamoDB(base).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(photoTable), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: staleKey.PK}, "SK": &types.AttributeValueMemberS{Value: staleKey.SK},
		"EntityType": &types.AttributeValueMemberS{Value: photostore.BibType},
		"GSI1PK":     &types.AttributeValueMemberS{Value: photostore.BibGSI1PK.Build("seoul-marathon-2024", "1001")},
		"GSI1SK":     &types.AttributeValueMemberS{Value: photostore.BibGSI1SK.Build("01STALE0000000000000000000")},
		"ulid":       &types.AttributeValueMemberS{Value: "01STALE0000000000000000000"}, "orgId": &types.AttributeValueMemberS{Value: "demo-org"},
		"eventId": &types.AttributeValueMemberS{Value: "seoul-marathon-2024"}, "bib": &types.AttributeValueMemberS{Value: "1001"},
		"createdAt": &types.AttributeValueMemberS{Value: "2024-01-01T00:00:00.000Z"},
	}}); err != nil {
		t.Fatal(err)
	}
	org.do("POST", ev+"/bibs/1001/privacy", 200, `{"mode":"hide"}`)
	if out, err := awsclient.DynamoDB(base).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(photoTable), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: staleKey.PK}, "SK": &types.AttributeValueMemberS{Value: staleKey.SK}}}); err != nil || out.Item != nil {
		t.Fatalf("the stale entry is still there (%v): hiding the bib did not drop it", err)
	}
	org.do("POST", ev+"/bibs/1002/privacy", 200, `{"mode":"delete"}`)
	org.do("PATCH", "/photographers/ph_lee", 200, `{"displayName":"Lee Shoots Again"}`)
	org.do("POST", "/photographers/ph_lee/sync", 200, "")
	org.do("POST", "/reconcile?repair=true", 200, "")
	org.do("GET", "/metrics", 200, "")

	stop()
	for b, e := range enf {
		for _, c := range e.Denied() {
			t.Errorf("%s: its generated policy refused %s", b, c)
		}
		got, want, bad := observed(e.Checks(), targets), declared(b), false
		for g := range got {
			if !want[g] {
				bad = true
				t.Errorf("%s calls %s, which its policy (Access in access.go) does not grant", b, g)
			}
			delete(want, g)
		}
		for g := range want {
			bad = true
			t.Errorf("%s's policy grants %s, which it never called: remove it, or drive the flow that calls it", b, g)
		}
		if bad {
			t.Logf("%s called:\n%s", b, sortedGrants(got))
		}
		t.Logf("%s's calls and the actions AWS authorizes them by:\n%s", b, callTable(e.Checks()))
		eachActionNeeded(t, b, e.Policy(), e.Checks())
	}
}

// client calls an API in dev mode as a user, an admin or an organizer.
type client struct {
	t                testing.TB
	base             string
	user, roles, org string
}

// do sends a request and checks its status (0: any).
func (c client) do(method, path string, status int, body string) []byte {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	user := c.user
	if user == "" {
		user = "acc-" + c.roles
	}
	if c.roles != "" || c.user != "" {
		req.Header.Set(server.DevUserHeader, user)
	}
	if c.roles != "" {
		req.Header.Set(server.DevRolesHeader, c.roles)
	}
	if c.org != "" {
		req.Header.Set(server.DevOrgHeader, c.org)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if status != 0 && resp.StatusCode != status {
		c.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, status, b)
	}
	return b
}

func (c client) decode(b []byte, v any) {
	c.t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		c.t.Fatalf("%v: %s", err, b)
	}
}

func waitFor(t *testing.T, ctx context.Context, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
