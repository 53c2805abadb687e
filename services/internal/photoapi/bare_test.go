package photoapi

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerhq/pacer/modules/photo"
)

// barePhotoAPI is the baseline Pacer's photo API is measured against: its
// searches (cost_bench_test.go) and the pipeline's ingest
// (ingest_bare_test.go, ingest_cost_bench_test.go). net/http, the JWT
// verified with golang-jwt, the query or body checked by hand, the same
// Postgres queries and the same DynamoDB calls as Pacer's
// (TestBareSearchesAsPacerDoes, TestBareIngestsAsPacerDoes), the next
// page's cursor sealed with AES-GCM, encoding/json; no problem types, no
// metrics, no OpenAPI validation.
type barePhotoAPI struct {
	db     *dynamodb.Client
	pool   *pgxpool.Pool
	table  string
	parser *jwt.Parser
	secret []byte
	aead   cipher.AEAD
}

// newBarePhotoAPI returns the baseline over db, pool and table, verifying
// tokens signed with secret and sealing cursors with a key from it.
func newBarePhotoAPI(db *dynamodb.Client, pool *pgxpool.Pool, table string, secret []byte) *barePhotoAPI {
	key := sha256.Sum256(secret)
	block, _ := aes.NewCipher(key[:])
	aead, _ := cipher.NewGCM(block)
	return &barePhotoAPI{db: db, pool: pool, table: table, secret: secret, aead: aead,
		parser: jwt.NewParser(jwt.WithLeeway(30*time.Second), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithValidMethods([]string{"HS256"}))}
}

// handler routes the searches and the ingests.
func (b *barePhotoAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events/{eventId}/photos", b.gallery)
	mux.HandleFunc("GET /events/{eventId}/bibs/{bib}/photos", b.byBib)
	mux.HandleFunc("POST /events/{eventId}/photos", b.ingestOne)
	mux.HandleFunc("POST /events/{eventId}/photos/batch", b.ingestBatch)
	return mux
}

// bareClaims are the token's claims the API reads.
type bareClaims struct {
	jwt.RegisteredClaims
	Roles []string `json:"roles"`
	Org   string   `json:"org"`
}

// barePhoto is a photo as the page shows it (photo.Photo's fields).
type barePhoto struct {
	ULID                    string         `dynamodbav:"ulid" json:"ulid"`
	OrgID                   string         `dynamodbav:"orgId" json:"orgId"`
	EventID                 string         `dynamodbav:"eventId" json:"eventId"`
	OriginalFilename        string         `dynamodbav:"originalFilename" json:"originalFilename"`
	RawKey                  string         `dynamodbav:"rawKey" json:"rawKey"`
	ProcessedKey            string         `dynamodbav:"processedKey" json:"processedKey"`
	S3URI                   string         `dynamodbav:"s3Uri" json:"s3Uri"`
	Dimensions              map[string]int `dynamodbav:"dimensions" json:"dimensions"`
	Format                  string         `dynamodbav:"format" json:"format"`
	Size                    int64          `dynamodbav:"size" json:"size"`
	Bibs                    []string       `dynamodbav:"bibs" json:"bibs"`
	BibCount                int            `dynamodbav:"bibCount" json:"bibCount"`
	FaceIDs                 []string       `dynamodbav:"faceIds" json:"faceIds"`
	FaceCount               int            `dynamodbav:"faceCount" json:"faceCount"`
	PhotographerID          string         `dynamodbav:"photographerId" json:"photographerId,omitempty"`
	PhotographerHandle      string         `dynamodbav:"photographerHandle" json:"photographerHandle,omitempty"`
	PhotographerDisplayName string         `dynamodbav:"photographerDisplayName" json:"photographerDisplayName,omitempty"`
	CreatedAt               time.Time      `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt               time.Time      `dynamodbav:"updatedAt" json:"updatedAt"`
}

// fail answers status with a one-line JSON body.
func fail(w http.ResponseWriter, status int) {
	http.Error(w, `{"title":"`+http.StatusText(status)+`"}`, status)
}

// s is a string attribute value.
func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// search is what both searches check and read first: the caller (an
// organizer), the event id, the page's limit and cursor, and the event's
// row. It answers the refusal itself and reports ok false.
type search struct {
	org, event string
	limit      int
	start      map[string]types.AttributeValue
}

// organizer verifies the bearer token and returns the organizer it names,
// for a caller with the organizer role. It answers the refusal itself and
// reports ok false.
func (b *barePhotoAPI) organizer(w http.ResponseWriter, r *http.Request) (org string, ok bool) {
	tok, ok := cutBearer(r.Header.Get("Authorization"))
	var c bareClaims
	if ok {
		_, err := b.parser.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return b.secret, nil })
		ok = err == nil && c.Subject != ""
	}
	if !ok {
		fail(w, http.StatusUnauthorized)
		return "", false
	}
	if !slices.Contains(c.Roles, "organizer") || !photo.ValidID(c.Org) {
		fail(w, http.StatusForbidden)
		return "", false
	}
	return c.Org, true
}

// eventQuery reads an organizer's event, as Pacer's store does.
const eventQuery = `SELECT event_id, organizer_id, name, COALESCE(to_char(starts_on, 'YYYY-MM-DD'), ''), published, created_at FROM events WHERE organizer_id = $1 AND event_id = $2`

// scanEventRow reads eventQuery's row: the baselines only need it to
// exist.
func scanEventRow(r pgx.Row) error {
	var id, org, name, startsOn string
	var published bool
	var created time.Time
	return r.Scan(&id, &org, &name, &startsOn, &published, &created)
}

// begin reads a search's caller, event, limit and cursor, and the event's row.
func (b *barePhotoAPI) begin(w http.ResponseWriter, r *http.Request) (search, bool) {
	org, ok := b.organizer(w, r)
	if !ok {
		return search{}, false
	}
	q := search{org: org, event: r.PathValue("eventId"), limit: 20}
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			fail(w, http.StatusUnprocessableEntity)
			return search{}, false
		}
		q.limit = n
	}
	cursor := r.URL.Query().Get("cursor")
	if !photo.ValidID(q.event) || len(cursor) > 4096 {
		fail(w, http.StatusUnprocessableEntity)
		return search{}, false
	}
	if cursor != "" {
		k, err := b.open(cursor, org)
		if err != nil {
			fail(w, http.StatusBadRequest)
			return search{}, false
		}
		q.start = map[string]types.AttributeValue{"PK": s(k[0]), "SK": s(k[1])}
	}
	err := scanEventRow(b.pool.QueryRow(r.Context(), eventQuery, org, q.event))
	if errors.Is(err, pgx.ErrNoRows) {
		fail(w, http.StatusNotFound)
		return search{}, false
	}
	if err != nil {
		fail(w, http.StatusServiceUnavailable)
		return search{}, false
	}
	return q, true
}

// gallery answers an event's gallery page.
func (b *barePhotoAPI) gallery(w http.ResponseWriter, r *http.Request) {
	q, ok := b.begin(w, r)
	if !ok {
		return
	}
	limit := q.limit
	out, err := b.db.Query(r.Context(), &dynamodb.QueryInput{TableName: &b.table, ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit + 1)),
		KeyConditionExpression:    aws.String("(#1 = :1) AND (begins_with (#2, :2))"),
		FilterExpression:          aws.String("#0 = :0"),
		ExpressionAttributeNames:  map[string]string{"#0": "orgId", "#1": "PK", "#2": "SK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": s(q.org), ":1": s("ORG#" + q.org + "#EVT#" + q.event), ":2": s("PHOTO#")},
		ExclusiveStartKey:         q.start})
	if err != nil {
		fail(w, http.StatusServiceUnavailable)
		return
	}
	var photos []barePhoto
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &photos); err != nil {
		fail(w, http.StatusInternalServerError)
		return
	}
	page := struct {
		Photos     []barePhoto `json:"photos"`
		NextCursor string      `json:"nextCursor,omitempty"`
	}{Photos: photos}
	if len(photos) > limit {
		page.Photos = photos[:limit]
		last := out.Items[limit-1]
		page.NextCursor = b.seal(last["PK"].(*types.AttributeValueMemberS).Value, last["SK"].(*types.AttributeValueMemberS).Value, q.org)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}

// cutBearer returns the token of an Authorization: Bearer header.
func cutBearer(h string) (string, bool) {
	const p = "Bearer "
	if len(h) <= len(p) || h[:len(p)] != p {
		return "", false
	}
	return h[len(p):], true
}

// seal makes the next page's cursor: the last key shown, bound to the
// table and organizer, encrypted and authenticated.
func (b *barePhotoAPI) seal(pk, sk, org string) string {
	plain, _ := json.Marshal([]string{pk, sk, b.table, org})
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(b.aead.Seal(nonce, nonce, plain, nil))
}

// open returns the key a cursor sealed for org, or an error.
func (b *barePhotoAPI) open(cursor, org string) ([]string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < b.aead.NonceSize() {
		return nil, errors.New("bad cursor")
	}
	plain, err := b.aead.Open(nil, raw[:b.aead.NonceSize()], raw[b.aead.NonceSize():], nil)
	var k []string
	if err != nil || json.Unmarshal(plain, &k) != nil || len(k) != 4 || k[2] != b.table || k[3] != org {
		return nil, errors.New("bad cursor")
	}
	return k, nil
}

// bareRunner is a runner as the page shows it.
type bareRunner struct {
	EventID string `json:"eventId"`
	Bib     string `json:"bib"`
	Name    string `json:"name"`
}

// byBib answers a page of a bib's photos.
func (b *barePhotoAPI) byBib(w http.ResponseWriter, r *http.Request) {
	bib := r.PathValue("bib")
	if photo.CheckBib("bib", bib) != nil {
		fail(w, http.StatusUnprocessableEntity)
		return
	}
	q, ok := b.begin(w, r)
	if !ok {
		return
	}
	out, err := b.db.Query(r.Context(), &dynamodb.QueryInput{TableName: &b.table, IndexName: aws.String("GSI1"), ScanIndexForward: aws.Bool(false),
		Limit:                     aws.Int32(int32(q.limit + 1)),
		KeyConditionExpression:    aws.String("#1 = :1"),
		FilterExpression:          aws.String("#0 = :0"),
		ExpressionAttributeNames:  map[string]string{"#0": "orgId", "#1": "GSI1PK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": s(q.org), ":1": s("EVT#" + q.event + "#BIB#" + bib)},
		ExclusiveStartKey:         q.start})
	if err != nil {
		fail(w, http.StatusServiceUnavailable)
		return
	}
	entries := out.Items[:min(len(out.Items), q.limit)]
	keys := make([]map[string]types.AttributeValue, len(entries))
	for i, e := range entries {
		ulid := e["ulid"].(*types.AttributeValueMemberS).Value
		keys[i] = map[string]types.AttributeValue{"PK": s("ORG#" + q.org + "#EVT#" + q.event), "SK": s("PHOTO#" + ulid)}
	}
	got, err := b.db.BatchGetItem(r.Context(), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{b.table: {Keys: keys}}})
	if err != nil || len(got.UnprocessedKeys) > 0 {
		fail(w, http.StatusServiceUnavailable)
		return
	}
	var all []barePhoto
	if err := attributevalue.UnmarshalListOfMaps(got.Responses[b.table], &all); err != nil {
		fail(w, http.StatusInternalServerError)
		return
	}
	byULID := make(map[string]barePhoto, len(all))
	for _, p := range all {
		byULID[p.ULID] = p
	}
	page := struct {
		Bib        string      `json:"bib"`
		Matched    bool        `json:"matched"`
		Runner     *bareRunner `json:"runner,omitempty"`
		Photos     []barePhoto `json:"photos"`
		NextCursor string      `json:"nextCursor,omitempty"`
	}{Bib: bib, Photos: []barePhoto{}}
	for _, e := range entries { // in the index's order; a photo gone or without the bib is skipped
		if p, ok := byULID[e["ulid"].(*types.AttributeValueMemberS).Value]; ok && slices.Contains(p.Bibs, bib) {
			page.Photos = append(page.Photos, p)
		}
	}
	if len(out.Items) > q.limit {
		last := out.Items[q.limit-1]
		page.NextCursor = b.seal(last["GSI1PK"].(*types.AttributeValueMemberS).Value, last["GSI1SK"].(*types.AttributeValueMemberS).Value, q.org)
	}
	rows, err := b.pool.Query(r.Context(), `SELECT event_id, bib, name FROM event_runners WHERE event_id = $1 AND bib = ANY($2)`, q.event, []string{bib})
	if err != nil {
		fail(w, http.StatusServiceUnavailable)
		return
	}
	runners, err := pgx.CollectRows(rows, pgx.RowToStructByPos[bareRunner])
	if err != nil {
		fail(w, http.StatusServiceUnavailable)
		return
	}
	if len(runners) > 0 {
		page.Runner, page.Matched = &runners[0], true
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(page)
}
