package photoapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/internal/awsfixture"
	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/sdk/awsclient"
	"github.com/pacerhq/pacer/sdk/pgtest"
)

// The cost benchmark of an organizer's gallery page (20 photos): Pacer's
// handler as Run builds it (newHandler) against barePhotoAPI, both over
// internal/awsfixture for DynamoDB and the real Postgres for the event's
// row: impl=pacer / impl=bare is Pacer's overhead (make bench prints it).

const (
	costStage = "bench"
	costOrg   = "o1"
	costEvent = "ev1"
	costBib   = "1001"
	costPage  = 20
)

var costSecret = []byte("photo-cost-benchmark-secret-32-bytes!")

// costPhotos are costPage+1 PHOTO items as the store writes them (a full
// page and the one that shows there is a next), newest first.
func costPhotos(tb testing.TB) []string {
	tb.Helper()
	items := make([]string, costPage+1)
	for i := range items {
		items[i] = string(photoItem(tb, costULID(i)))
	}
	return items
}

// costULID is the i-th newest photo's ULID.
func costULID(i int) string { return fmt.Sprintf("01JD0000000000000000000%03d", costPage-i) }

// photoItem is the PHOTO item of ulid as the store writes it.
func photoItem(tb testing.TB, ulid string) json.RawMessage {
	tb.Helper()
	created := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)
	av, err := attributevalue.MarshalMap(dynamostore.PhotoItem{ULID: ulid, OrgID: costOrg, EventID: costEvent, OriginalFilename: "IMG_" + ulid + ".jpg",
		RawKey: "raw/" + ulid + ".jpg", ProcessedKey: "processed/" + ulid + ".jpg", S3URI: "s3://photos/processed/" + ulid + ".jpg",
		Dimensions: dynamostore.DimensionsItem{Width: 4000, Height: 3000}, Format: "jpeg", Size: 2_400_000,
		Bibs: []string{"1001", "2002"}, BibCount: 2, FaceIDs: []string{"f1"}, FaceCount: 1,
		PhotographerID: "ph1", PhotographerHandle: "ph1", PhotographerDisplayName: "Photographer One",
		CreatedAt: created, UpdatedAt: created})
	if err != nil {
		tb.Fatal(err)
	}
	av["PK"] = &types.AttributeValueMemberS{Value: dynamostore.EventPK.Build(costOrg, costEvent)}
	av["SK"] = &types.AttributeValueMemberS{Value: dynamostore.PhotoSK.Build(ulid)}
	av["entityType"] = &types.AttributeValueMemberS{Value: dynamostore.PhotoType}
	return awsfixture.ItemJSON(av)
}

// costBibs are costPage+1 BIB_INDEX items of costBib, newest first.
func costBibs(tb testing.TB) []string {
	items := make([]string, costPage+1)
	for i := range items {
		ulid := costULID(i)
		av, err := attributevalue.MarshalMap(dynamostore.BibItem{GSI1PK: dynamostore.BibGSI1PK.Build(costEvent, costBib), GSI1SK: dynamostore.PhotoSK.Build(ulid),
			ULID: ulid, OrgID: costOrg, EventID: costEvent, Bib: costBib, CreatedAt: "2026-11-27T09:00:00Z"})
		if err != nil {
			tb.Fatal(err)
		}
		av["PK"] = &types.AttributeValueMemberS{Value: dynamostore.EventPK.Build(costOrg, costEvent)}
		av["SK"] = &types.AttributeValueMemberS{Value: dynamostore.BibSK.Build(costBib, ulid)}
		av["entityType"] = &types.AttributeValueMemberS{Value: dynamostore.BibType}
		items[i] = string(awsfixture.ItemJSON(av))
	}
	return items
}

// batchGetReply answers a BatchGetItem with the PHOTO item of every key
// asked for (rendered once here: the fixture's own work is in both sides'
// figures, so it is kept small).
func batchGetReply(tb testing.TB) awsfixture.Reply {
	items := map[string]json.RawMessage{}
	for i := range costPage + 1 {
		items[costULID(i)] = photoItem(tb, costULID(i))
	}
	return awsfixture.BatchGet(func(k awsfixture.Key) json.RawMessage { return items[strings.TrimPrefix(k["SK"]["S"], "PHOTO#")] })
}

// queryReply answers a Query as DynamoDB would over costPhotos: at most
// its Limit items, and the last one's key when there are more.
func queryReply(items []string) awsfixture.Reply {
	return func(body []byte) any {
		var in struct{ Limit int }
		_ = json.Unmarshal(body, &in)
		n := min(in.Limit, len(items))
		last := ""
		if n < len(items) {
			last = fmt.Sprintf(`,"LastEvaluatedKey":{"PK":{"S":%q},"SK":{"S":%q}}`, dynamostore.EventPK.Build(costOrg, costEvent),
				dynamostore.PhotoSK.Build(costULID(n-1)))
		}
		return json.RawMessage(fmt.Sprintf(`{"Items":[%s],"Count":%d,"ScannedCount":%d%s}`, strings.Join(items[:n], ","), n, n, last))
	}
}

// tableFixture is a fixture that answers the table's description as the
// deployment made it (Pacer checks it on start), and every other call with
// the default answer.
func tableFixture(tb testing.TB) *awsfixture.Server {
	f := awsfixture.New()
	in := dynamostore.Schema.CreateTableInput(dynamostore.TableName(costStage))
	desc, err := json.Marshal(map[string]any{"Table": map[string]any{"TableName": in.TableName, "TableStatus": "ACTIVE",
		"KeySchema": in.KeySchema, "AttributeDefinitions": in.AttributeDefinitions, "GlobalSecondaryIndexes": in.GlobalSecondaryIndexes}})
	if err != nil {
		tb.Fatal(err)
	}
	f.Handle("DynamoDB.DescribeTable", func([]byte) any { return json.RawMessage(desc) })
	return f
}

// costFixture answers the table's description and the gallery's Query
// with a full page.
func costFixture(tb testing.TB) *awsfixture.Server {
	f := tableFixture(tb)
	photos, bibs := queryReply(costPhotos(tb)), queryReply(costBibs(tb))
	f.Handle("DynamoDB.Query", func(body []byte) any {
		if strings.Contains(string(body), `"IndexName":"GSI1"`) {
			return bibs(body)
		}
		return photos(body)
	})
	f.Handle("DynamoDB.BatchGetItem", batchGetReply(tb))
	return f
}

// pacerGallery is Pacer's API as Run serves it (newHandler), over f and
// the database at url (migrated, with the organizer and its event).
func pacerGallery(tb testing.TB, f *awsfixture.Server, url string) http.Handler {
	tb.Helper()
	return pacerAPI(tb, f, url).handler
}

// pacerAPI builds Pacer's API as Run does (newHandler) over f and the
// database at url, and seeds the organizer, its event and the event's
// runner costBib (again, if another benchmark seeded them first).
func pacerAPI(tb testing.TB, f *awsfixture.Server, url string) *handler {
	tb.Helper()
	awsCfg := f.Config()
	v, err := auth.NewVerifier(context.Background(), auth.Config{HS256Secret: costSecret})
	if err != nil {
		tb.Fatal(err)
	}
	h, err := newHandler(context.Background(), Config{Stage: costStage, DatabaseURL: url, AWS: &awsCfg,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, costSecret, v)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.roles.Close)
	ctx := context.Background()
	if _, err := h.roles.Directory.CreateOrganizer(ctx, photo.Organizer{ID: costOrg, Name: "Org"}); err != nil && !strings.Contains(err.Error(), "exists") {
		tb.Fatal(err)
	}
	if _, err := h.roles.Directory.CreateEvent(ctx, costOrg, photo.Event{ID: costEvent, Name: "Race"}); err != nil && !strings.Contains(err.Error(), "exists") {
		tb.Fatal(err)
	}
	if _, err := h.roles.Directory.ImportRunners(ctx, costOrg, costEvent, []photo.Runner{{Bib: costBib, Name: "Kim Minji"}}); err != nil {
		tb.Fatal(err)
	}
	return h
}

// costToken is an organizer's token for costOrg, an hour long.
func costToken(tb testing.TB) string {
	tok, err := auth.Mint(costSecret, auth.Principal{UserID: "org-admin", Roles: []string{auth.RoleOrganizer}, OrgID: costOrg}, time.Hour)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// The searches measured: an event's gallery and a bib's photos.
var (
	galleryPath = "/events/" + costEvent + "/photos"
	bibPath     = "/events/" + costEvent + "/bibs/" + costBib + "/photos"
)

func searchCall(tb testing.TB, h http.Handler, path, tok string) map[string]any {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		tb.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

func bareHandler(tb testing.TB, f *awsfixture.Server, url string) http.Handler {
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return newBarePhotoAPI(awsclient.DynamoDB(f.Config()), pool, dynamostore.TableName(costStage), costSecret).handler()
}

// benchPair runs call against Pacer and bare as sub-benchmarks impl=pacer
// and impl=bare, each over its own fixture (fixture) and Pacer's handler
// (pacer, which migrates and seeds the database at url for both), once to
// warm, then in the loop; it reports AWS calls per operation.
func benchPair(b *testing.B, fixture func(testing.TB) *awsfixture.Server, pacer func(testing.TB, *awsfixture.Server, string) http.Handler,
	call func(b *testing.B, h http.Handler, tok string)) {
	url := pgtest.NewDatabase(b)
	for _, impl := range []string{"pacer", "bare"} {
		b.Run("impl="+impl, func(b *testing.B) {
			f := fixture(b)
			defer f.Close()
			h := pacer(b, f, url)
			if impl == "bare" {
				h = bareHandler(b, f, url)
			}
			tok := costToken(b)
			call(b, h, tok)
			f.Reset()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				call(b, h, tok)
				n++
			}
			b.ReportMetric(float64(f.Total())/float64(n), "aws-calls/op")
		})
	}
}

// benchSearch runs GET path against Pacer and bare as sub-benchmarks
// impl=pacer and impl=bare.
func benchSearch(b *testing.B, path string) {
	benchPair(b, costFixture, pacerGallery, func(b *testing.B, h http.Handler, tok string) { searchCall(b, h, path, tok) })
}

// BenchmarkGalleryCost is an organizer's gallery page of 20 photos: the
// event's row from Postgres, one Query, the page and its sealed cursor.
func BenchmarkGalleryCost(b *testing.B) { benchSearch(b, galleryPath) }

// BenchmarkBibSearchCost is an organizer's page of a bib's 20 photos: the
// event's row, one Query of the bib index, one BatchGetItem of the
// photos, the runner's row, the page and its cursor.
func BenchmarkBibSearchCost(b *testing.B) { benchSearch(b, bibPath) }

// TestBareSearchesAsPacerDoes holds the baseline to Pacer's work, for the
// gallery and the bib search: the same Query and BatchGetItem (keys,
// index, tenant filter, direction, limit) and the same page, photo for
// photo and runner, with a cursor on both.
func TestBareSearchesAsPacerDoes(t *testing.T) {
	url := pgtest.NewDatabase(t)
	run := func(impl, path string) ([]string, map[string]any) {
		f := costFixture(t)
		defer f.Close()
		h := pacerGallery(t, f, url)
		if impl == "bare" {
			h = bareHandler(t, f, url)
		}
		var r awsfixture.Recording
		photos, bibs, batch := queryReply(costPhotos(t)), queryReply(costBibs(t)), batchGetReply(t)
		f.Handle("DynamoDB.Query", func(body []byte) any {
			r.Add("DynamoDB.Query", body)
			if strings.Contains(string(body), `"IndexName":"GSI1"`) {
				return bibs(body)
			}
			return photos(body)
		})
		f.Handle("DynamoDB.BatchGetItem", func(body []byte) any {
			r.Add("DynamoDB.BatchGetItem", body)
			return batch(body)
		})
		f.Reset()
		out := searchCall(t, h, path, costToken(t))
		if c, _ := out["nextCursor"].(string); c == "" {
			t.Errorf("%s %s: a full page without a cursor", impl, path)
		}
		delete(out, "nextCursor")
		delete(out, "$schema")
		return r.Shapes(), out
	}
	for path, calls := range map[string]int{galleryPath: 1, bibPath: 2} {
		pacer, pacerPage := run("pacer", path)
		bare, barePage := run("bare", path)
		if len(pacer) != calls || !slices.Equal(pacer, bare) {
			t.Errorf("%s: the calls differ:\npacer:\n%s\nbare:\n%s", path, strings.Join(pacer, "\n"), strings.Join(bare, "\n"))
		}
		p, _ := json.Marshal(pacerPage)
		b, _ := json.Marshal(barePage)
		if string(p) != string(b) || len(pacerPage["photos"].([]any)) != costPage {
			t.Errorf("%s: pages differ:\npacer %s\nbare  %s", path, p, b)
		}
	}
}
