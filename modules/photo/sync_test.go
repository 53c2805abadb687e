package photo_test

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/modules/photo/pgstore"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// copies returns the photographer fields on every PHOTO of ph.
func (e *env) copies(ph string) map[string][2]string {
	out := map[string][2]string{}
	for _, it := range e.scan() {
		if s(it, "EntityType") == "PHOTO" && s(it, "photographerId") == ph {
			out[s(it, "ulid")] = [2]string{s(it, "photographerHandle"), s(it, "photographerDisplayName")}
		}
	}
	return out
}

func TestRenameSyncIsResumableAndReconcileRepairsDrift(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	must(e.dir.CreatePhotographer(e.ctx, "o1", photo.Photographer{ID: "p2", Handle: "other", DisplayName: "Other"}))(t)
	if err := e.dir.Assign(e.ctx, "o1", "e1", "p2"); err != nil {
		t.Fatal(err)
	}
	e.ingestN("o1", "e1", "p1", 0, 25, func(int) []string { return []string{"1000"} })
	e.ingestN("o1", "e1", "p2", 100, 5, func(int) []string { return []string{"1000"} })

	// Rename, but let the walk do only one page of 10: it stops with a
	// checkpoint.
	h, n := "studio_new", "Studio New"
	ph, rep, err := e.dir.UpdatePhotographer(e.ctx, "o1", "p1", photo.PhotographerPatch{Handle: &h, DisplayName: &n}, photo.SyncOptions{PageSize: 10, MaxPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ph.Version != 2 || rep.Done || rep.Scanned != 10 || rep.Updated != 10 {
		t.Fatalf("first slice: version %d, report %+v", ph.Version, rep)
	}
	st := must(pgstore.New(e.pool).SyncState(e.ctx, "p1"))(t)
	if st.Cursor == "" || st.Done || st.Version != 2 {
		t.Fatalf("checkpoint %+v", st)
	}
	stale := 0
	for _, c := range e.copies("p1") {
		if c[0] != h {
			stale++
		}
	}
	if stale != 15 {
		t.Fatalf("%d stale copies after one page, want 15", stale)
	}
	// Resume: it continues from the checkpoint to the end.
	rep = must(e.dir.SyncPhotographer(e.ctx, "o1", "p1", photo.SyncOptions{PageSize: 10}))(t)
	if !rep.Done || rep.Scanned != 25 || rep.Updated != 25 || rep.Pages != 2 {
		t.Fatalf("resumed: %+v", rep)
	}
	for u, c := range e.copies("p1") {
		if c != [2]string{h, n} {
			t.Fatalf("photo %s still has %v", u, c)
		}
	}
	for _, c := range e.copies("p2") {
		if c != [2]string{"other", "Other"} {
			t.Fatalf("p2's photo changed: %v", c)
		}
	}
	// Idempotent: running it again does nothing.
	e.ddb.Calls.Reset()
	rep = must(e.dir.SyncPhotographer(e.ctx, "o1", "p1", photo.SyncOptions{}))(t)
	if !rep.Done || rep.Pages != 0 || e.ddb.Calls.Total() != 0 {
		t.Fatalf("finished walk re-run: %+v, calls %s", rep, e.ddb.Calls)
	}

	// Reconcile: no drift now.
	rr := must(e.dir.Reconcile(e.ctx, "o1", "", false))(t)
	if rr.Drifted != 0 || rr.Scanned != 30 || rr.Photographers != 2 {
		t.Fatalf("reconcile after sync: %+v", rr)
	}
	// Inject drift behind the service's back.
	copies := e.copies("p1")
	var victims []string
	for u := range copies {
		victims = append(victims, u)
	}
	slices.Sort(victims)
	victims = victims[:4]
	for _, u := range victims {
		_, err := e.ddb.Client.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(e.ddb.Table.Name()),
			Key:                       map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "ORG#o1#EVT#e1"}, "SK": &types.AttributeValueMemberS{Value: "PHOTO#" + u}},
			UpdateExpression:          aws.String("SET photographerDisplayName = :x"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":x": &types.AttributeValueMemberS{Value: "Stale"}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rr = must(e.dir.Reconcile(e.ctx, "o1", "p1", false))(t)
	if rr.Drifted != 4 || rr.Repaired != 0 || len(rr.Drift) != 4 || rr.Drift[0].Have != "Stale" || rr.Drift[0].Want != n {
		t.Fatalf("reconcile report: %+v", rr)
	}
	rr = must(e.dir.Reconcile(e.ctx, "o1", "", true))(t)
	if rr.Drifted != 4 || rr.Repaired != 4 {
		t.Fatalf("reconcile repair: %+v", rr)
	}
	if rr = must(e.dir.Reconcile(e.ctx, "o1", "", false))(t); rr.Drifted != 0 {
		t.Fatalf("drift after repair: %+v", rr)
	}
}

func TestRenameDuringWalkSupersedesIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	e.ingestN("o1", "e1", "p1", 0, 12, func(int) []string { return nil })
	a, b := "first", "second"
	_, rep, err := e.dir.UpdatePhotographer(e.ctx, "o1", "p1", photo.PhotographerPatch{Handle: &a}, photo.SyncOptions{PageSize: 5, MaxPages: 1})
	if err != nil || rep.Done {
		t.Fatalf("%+v %v", rep, err)
	}
	// A second rename resets the checkpoint to version 3; a walker still on
	// version 2 cannot save over it.
	if _, err := pgstore.New(e.pool).UpdatePhotographer(e.ctx, "o1", "p1", photo.PhotographerPatch{Handle: &b}); err != nil {
		t.Fatal(err)
	}
	if err := pgstore.New(e.pool).SaveSyncState(e.ctx, photo.SyncState{PhotographerID: "p1", Version: 2, Cursor: "x"}); err == nil {
		t.Fatal("an old walk overwrote the new checkpoint")
	}
	rep = must(e.dir.SyncPhotographer(e.ctx, "o1", "p1", photo.SyncOptions{PageSize: 5}))(t)
	if !rep.Done || rep.Version != 3 || rep.Scanned != 12 || rep.Updated != 12 {
		t.Fatalf("second walk: %+v", rep)
	}
	for _, c := range e.copies("p1") {
		if c[0] != b {
			t.Fatalf("copy %v, want handle %s", c, b)
		}
	}
}

// lossyClient reports the item with sort key sk as unprocessed on every
// BatchWriteItem, as DynamoDB does under throttling, and fails every
// PutItem of an item whose sort key failPut accepts as throttled.
type lossyClient struct {
	ddb.Client
	sk      string
	failPut func(sk string) bool
}

func (c lossyClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if c.failPut != nil && c.failPut(s(in.Item, "SK")) {
		return nil, &types.ProvisionedThroughputExceededException{Message: aws.String("lossyClient: throttled")}
	}
	return c.Client.PutItem(ctx, in, opts...)
}

func (c lossyClient) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	for table, reqs := range in.RequestItems {
		var keep, drop []types.WriteRequest
		for _, r := range reqs {
			if r.PutRequest != nil && s(r.PutRequest.Item, "SK") == c.sk {
				drop = append(drop, r)
			} else {
				keep = append(keep, r)
			}
		}
		out := &dynamodb.BatchWriteItemOutput{UnprocessedItems: map[string][]types.WriteRequest{}}
		if len(keep) > 0 {
			res, err := c.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: keep}}, opts...)
			if err != nil {
				return nil, err
			}
			out.UnprocessedItems = res.UnprocessedItems
		}
		if len(drop) > 0 {
			out.UnprocessedItems[table] = append(out.UnprocessedItems[table], drop...)
		}
		return out, nil
	}
	return &dynamodb.BatchWriteItemOutput{}, nil
}

// lossyIngest returns an Ingest over the test's table through db (a
// lossyClient's).
func (e *env) lossyIngest(db *ddb.DB) *photo.Ingest {
	store := dynamostore.New(db.Table(e.ddb.Table.Name(), &dynamostore.Schema))
	return e.newIngest(photo.IngestConfig{Index: store, Copies: store})
}

func TestBatchPhotoIsInvisibleUntilAllItsItemsAreIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	recs := []photo.Record{record(0, "p1", "1000", "1001"), record(1, "p1", "1000", "1002"), record(2, "p1", "1000")}
	// recs[1]: one of its index entries is never processed, so its PHOTO is
	// not even tried. recs[2]: its index entry is in, its PHOTO put fails.
	lossy := ddb.New(lossyClient{Client: e.ddb.Client, sk: "BIB#1002#PHOTO#" + recs[1].ULID, failPut: func(sk string) bool { return sk == "PHOTO#"+recs[2].ULID }},
		ddb.Config{BatchRetries: 2, BatchBackoff: 1e6, BatchBackoffMax: 2e6, CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
	ing := e.lossyIngest(lossy)

	res := must(ing.IngestBatch(e.ctx, "o1", "e1", recs))(t)
	if res[0].Status != photo.Created || res[1].Status != photo.Failed || res[2].Status != photo.Failed || res[1].Err == nil || res[2].Err == nil {
		t.Fatalf("statuses %s %s %s", res[0].Status, res[1].Status, res[2].Status)
	}
	// Some of their BIB_INDEX items are in, their PHOTOs are not: readers
	// do not see them.
	items := map[string]int{}
	for _, it := range e.scan() {
		if u := s(it, "ulid"); u == recs[1].ULID || u == recs[2].ULID {
			items[s(it, "EntityType")+" "+s(it, "SK")[:8]]++
		}
	}
	if want := map[string]int{"BIB_INDEX BIB#1000": 2}; !maps.Equal(items, want) {
		t.Fatalf("items of the failed photos: %v, want %v", items, want)
	}
	ids := func() []string {
		var out []string
		for _, p := range must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{}))(t).Photos {
			out = append(out, p.ULID)
		}
		return out
	}
	if got := ids(); !slices.Equal(got, []string{recs[0].ULID}) {
		t.Fatalf("bib search shows %v", got)
	}
	// Re-posting the batch completes it and changes nothing else.
	res = must(e.ingest.IngestBatch(e.ctx, "o1", "e1", recs))(t)
	if res[0].Status != photo.Exists || res[1].Status != photo.Created || res[2].Status != photo.Created {
		t.Fatalf("re-post statuses %s %s %s", res[0].Status, res[1].Status, res[2].Status)
	}
	if got := ids(); !slices.Equal(got, []string{recs[2].ULID, recs[1].ULID, recs[0].ULID}) {
		t.Fatalf("after re-post bib search shows %v", got)
	}
}

// A batch of many new photos whose PHOTO puts fail here and there (as under
// throttling) reports each photo on its own; with -race (make test) this
// also proves the concurrent commits share no state.
func TestBatchWithManyFailedCommits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	var recs []photo.Record
	fail := map[string]bool{}
	for i := range 60 {
		recs = append(recs, record(300+i, "p1", "1000"))
		if i%3 == 1 {
			fail["PHOTO#"+recs[i].ULID] = true
		}
	}
	lossy := ddb.New(lossyClient{Client: e.ddb.Client, failPut: func(sk string) bool { return fail[sk] }},
		ddb.Config{CursorKey: []byte("ddbtest-cursor-key-0123456789abcdef")})
	ing := e.lossyIngest(lossy)
	res := must(ing.IngestBatch(e.ctx, "o1", "e1", recs))(t)
	for i, r := range res {
		want := photo.Created
		if fail["PHOTO#"+recs[i].ULID] {
			want = photo.Failed
		}
		if r.Status != want {
			t.Fatalf("photo %d: %s (%v), want %s", i, r.Status, r.Err, want)
		}
	}
	if n := len(must(e.search.ByBib(e.ctx, "o1", "e1", "1000", photo.PageRequest{Limit: 100}))(t).Photos); n != 40 {
		t.Fatalf("bib search finds %d photos, want the 40 committed", n)
	}
}

// raceIndex runs before once, just ahead of the first SetPhotographer: a
// window where another rename can land mid-walk.
type raceIndex struct {
	photo.ProfileIndex
	once   sync.Once
	before func()
}

func (r *raceIndex) SetPhotographer(ctx context.Context, p *photo.Photo, ph photo.Photographer, now time.Time) (bool, error) {
	r.once.Do(r.before)
	return r.ProfileIndex.SetPhotographer(ctx, p, ph, now)
}

func TestConcurrentRenamesLeaveTheNewestCopy(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.org("o1", "e1", "p1")
	e.ingestN("o1", "e1", "p1", 0, 5, func(int) []string { return []string{"1000"} })

	// Walk A copies rename A; just before its first write, rename B lands
	// and its walk finishes. A must not leave its older copy behind.
	newer := "Studio B"
	idx := &raceIndex{ProfileIndex: e.store, before: func() {
		if _, _, err := e.dir.UpdatePhotographer(e.ctx, "o1", "p1", photo.PhotographerPatch{DisplayName: &newer}, photo.SyncOptions{}); err != nil {
			t.Error(err)
		}
	}}
	a := photo.NewDirectory(photo.DirectoryConfig{
		Organizers: e.truth, Events: e.truth, Photographers: e.truth, Assignments: e.truth, Runners: e.truth, Checkpoints: e.truth,
		Photos: e.store, Copies: idx,
	})
	older := "Studio A"
	if _, _, err := a.UpdatePhotographer(e.ctx, "o1", "p1", photo.PhotographerPatch{DisplayName: &older}, photo.SyncOptions{}); err != nil {
		t.Fatal(err)
	}
	for u, c := range e.copies("p1") {
		if c[1] != newer {
			t.Errorf("photo %s has %q, want the newest name %q", u, c[1], newer)
		}
	}
	if rep := must(e.dir.Reconcile(e.ctx, "o1", "p1", false))(t); rep.Drifted != 0 {
		t.Fatalf("reconcile finds drift: %+v", rep)
	}
}
