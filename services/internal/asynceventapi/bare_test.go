package asynceventapi

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/golang-jwt/jwt/v5"
	"github.com/oklog/ulid/v2"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// lateness is the product's default Lateness, which the baseline's
// pollAt follows (asyncevent.PollAt, Query.Unchanged).
var lateness = asyncevent.Lateness{WriteTimeout: 2 * time.Second, ClockSkew: 500 * time.Millisecond, IndexLag: time.Second}

// bareAPI is the baseline Pacer's API is measured against (the cost
// benchmarks, cost_bench_test.go): the same HTTP requests handled by
// net/http, the JWT verified with golang-jwt, bodies decoded with
// encoding/json and checked by hand, and the same AWS SDK calls with the
// same inputs as Pacer's (read from what Pacer sends: see
// TestBareSendsWhatPacerSends), and nothing else: no problem types, no
// metrics, no OpenAPI validation, no cache but the event read once.
type bareAPI struct {
	db     *dynamodb.Client
	sqs    *sqs.Client
	table  string
	queue  string
	parser *jwt.Parser
	secret []byte
	// event is the event participations go to, read once (Pacer caches
	// it for 2 s: none of its reads falls in a benchmark's loop either).
	eventType string
	closesAt  int64
	// tags are the polls' ETags, Pacer's scheme (the HMAC and the tag's
	// format are work the answer needs, not overhead).
	tags pollTags
}

func newBareAPI(db *dynamodb.Client, q *sqs.Client, table, queue string, secret []byte) *bareAPI {
	return &bareAPI{db: db, sqs: q, table: table, queue: queue, secret: secret,
		parser:    jwt.NewParser(jwt.WithLeeway(30*time.Second), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithValidMethods([]string{"HS256"})),
		eventType: "FIRST_COME", closesAt: time.Now().Add(time.Hour).UnixMilli(), tags: newPollTags(secret)}
}

func (b *bareAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events/{eventId}/participations", b.participate)
	mux.HandleFunc("GET /requests/{requestId}", b.poll)
	return mux
}

// user verifies the bearer token and returns its subject.
func (b *bareAPI) user(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	var c jwt.RegisteredClaims
	if ok {
		_, err := b.parser.ParseWithClaims(tok, &c, func(*jwt.Token) (any, error) { return b.secret, nil })
		ok = err == nil && c.Subject != "" && len(c.Subject) <= 256
	}
	if !ok {
		http.Error(w, `{"title":"Unauthorized"}`, http.StatusUnauthorized)
	}
	return c.Subject, ok
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

var notExists = map[string]string{"#0": "PK"}

// pendingShard spreads requests over the pending index's 8 shards, as
// Pacer's store does (a hash of the request id).
func pendingShard(id string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return h.Sum32() % 8
}

func (b *bareAPI) participate(w http.ResponseWriter, r *http.Request) {
	user, ok := b.user(w, r)
	if !ok {
		return
	}
	event := r.PathValue("eventId")
	if !asyncevent.ValidID(event) {
		http.Error(w, `{"title":"Unprocessable Entity"}`, http.StatusUnprocessableEntity)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<10+1))
	if err != nil || len(body) > 1<<10 {
		http.Error(w, `{"title":"Request Entity Too Large"}`, http.StatusRequestEntityTooLarge)
		return
	}
	if len(body) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(body, &m) != nil || len(m) > 0 {
			http.Error(w, `{"title":"Unprocessable Entity"}`, http.StatusUnprocessableEntity)
			return
		}
	}
	now := time.Now().UnixMilli()
	if now >= b.closesAt {
		http.Error(w, `{"title":"Conflict"}`, http.StatusConflict)
		return
	}
	id := ulid.Make().String()
	ttl := (now + 30*24*3600*1000) / 1000
	lockTTL := (b.closesAt + 7*24*3600*1000) / 1000
	idem := "IDEMP#" + event + "#" + user
	day := time.UnixMilli(now).UTC().Format("20060102")
	_, err = b.db.TransactWriteItems(r.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: &b.table, ConditionExpression: aws.String("attribute_not_exists (#0)"), ExpressionAttributeNames: notExists,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			Item: map[string]types.AttributeValue{"PK": s(idem), "SK": s("LOCK"), "entityType": s("IDEMPOTENCY"), "eventId": s(event), "userId": s(user),
				"requestId": s(id), "createdAt": n(now), "ttl": n(lockTTL)}}},
		{Put: &types.Put{TableName: &b.table, ConditionExpression: aws.String("attribute_not_exists (#0)"), ExpressionAttributeNames: notExists,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			Item: map[string]types.AttributeValue{"PK": s("REQ#" + id), "SK": s("META"), "entityType": s("REQUEST"), "requestId": s(id), "eventId": s(event),
				"userId": s(user), "eventType": s(b.eventType), "status": s("RECEIVED"), "uiResult": s("PENDING"), "requestedAt": n(now), "ttl": n(ttl),
				"idempotencyKey": s(idem), "GSI3PK": s(fmt.Sprintf("PENDING#%s#%02d", day, pendingShard(id))), "GSI3SK": s(fmt.Sprintf("EVENT#%s#RAT#%d#REQ#%s", event, now, id))}}},
		{Put: &types.Put{TableName: &b.table, ConditionExpression: aws.String("attribute_not_exists (#0)"), ExpressionAttributeNames: notExists,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			Item: map[string]types.AttributeValue{"PK": s("REQ#" + id), "SK": s(fmt.Sprintf("LOG#%d#RECEIVED", now)), "entityType": s("STATUS_LOG"),
				"requestId": s(id), "fromStatus": s(""), "toStatus": s("RECEIVED"), "message": s("received"), "occurredAt": n(now), "ttl": n(ttl)}}},
	}})
	if err != nil {
		http.Error(w, `{"title":"Service Unavailable","detail":`+strconv.Quote(err.Error())+`}`, http.StatusServiceUnavailable)
		return
	}
	msg, _ := json.Marshal(map[string]any{"v": 1, "requestId": id, "eventId": event, "userId": user, "eventType": b.eventType})
	if _, err := b.sqs.SendMessage(r.Context(), &sqs.SendMessageInput{QueueUrl: &b.queue, MessageBody: aws.String(string(msg))}); err != nil {
		http.Error(w, `{"title":"Service Unavailable","detail":`+strconv.Quote(err.Error())+`}`, http.StatusServiceUnavailable)
		return
	}
	at := now + 1
	qat := fmt.Sprintf("QAT#%d#REQ#%s", at, id)
	_, err = b.db.TransactWriteItems(r.Context(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: &b.table, Key: map[string]types.AttributeValue{"PK": s("REQ#" + id), "SK": s("META")},
			ConditionExpression: aws.String("(((((#0 = :0) AND ((attribute_not_exists (#1)) OR (#1 < :1))) AND ((attribute_not_exists (#2)) OR (#2 < :2))) AND ((attribute_not_exists (#3)) OR (#3 < :3))) AND ((attribute_not_exists (#4)) OR (#4 < :4))) AND ((attribute_not_exists (#5)) OR (#5 < :5))"),
			UpdateExpression:    aws.String("REMOVE #6, #7\nSET #0 = :6, #2 = :7, #8 = :8, #9 = :9, #10 = :10, #11 = :11\n"),
			ExpressionAttributeNames: map[string]string{"#0": "status", "#1": "requestedAt", "#2": "queuedAt", "#3": "startedAt", "#4": "finishedAt", "#5": "requeuedAt",
				"#6": "GSI3PK", "#7": "GSI3SK", "#8": "GSI1PK", "#9": "GSI1SK", "#10": "GSI2PK", "#11": "GSI2SK"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("RECEIVED"), ":1": n(at), ":2": n(at), ":3": n(at), ":4": n(at), ":5": n(at),
				":6": s("QUEUED"), ":7": n(at), ":8": s("USER#" + user), ":9": s(qat), ":10": s("EVENT#" + event), ":11": s(qat)},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Put: &types.Put{TableName: &b.table, ConditionExpression: aws.String("attribute_not_exists (#0)"), ExpressionAttributeNames: notExists,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			Item: map[string]types.AttributeValue{"PK": s("REQ#" + id), "SK": s(fmt.Sprintf("LOG#%d#QUEUED", at)), "entityType": s("STATUS_LOG"),
				"requestId": s(id), "fromStatus": s("RECEIVED"), "toStatus": s("QUEUED"), "occurredAt": n(at), "ttl": n(ttl)}}},
	}})
	_ = err // as Pacer: the message is sent, the worker records queuedAt if this failed
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]any{"requestId": id, "isDuplicate": false})
}

// bareRequest is the request item's attributes the poll shows.
type bareRequest struct {
	RequestID   string `dynamodbav:"requestId"`
	EventID     string `dynamodbav:"eventId"`
	UserID      string `dynamodbav:"userId"`
	EventType   string `dynamodbav:"eventType"`
	Status      string `dynamodbav:"status"`
	UIPhase     string `dynamodbav:"uiPhase"`
	UIResult    string `dynamodbav:"uiResult"`
	ResultCode  string `dynamodbav:"resultCode"`
	RequestedAt int64  `dynamodbav:"requestedAt"`
	QueuedAt    int64  `dynamodbav:"queuedAt"`
	StartedAt   int64  `dynamodbav:"startedAt"`
	FinishedAt  int64  `dynamodbav:"finishedAt"`
}

// bareView is what the poll answers: the fields Pacer's RequestView
// shows a request's owner (TestBareSendsWhatPacerSends compares them).
type bareView struct {
	RequestID    string     `json:"requestId"`
	EventID      string     `json:"eventId"`
	EventType    string     `json:"eventType"`
	Status       string     `json:"status"`
	UIPhase      string     `json:"uiPhase,omitempty"`
	UIResult     string     `json:"uiResult,omitempty"`
	ResultCode   string     `json:"resultCode,omitempty"`
	RequestedAt  int64      `json:"requestedAt"`
	QueuedAt     int64      `json:"queuedAt"`
	StartedAt    int64      `json:"startedAt"`
	FinishedAt   int64      `json:"finishedAt"`
	QueueDelayMs int64      `json:"queueDelayMs"`
	E2EDelayMs   int64      `json:"e2eDelayMs"`
	Timeline     []bareStep `json:"timeline"`
}

type bareStep struct {
	Status string `json:"status"`
	At     int64  `json:"at"`
}

func (b *bareAPI) poll(w http.ResponseWriter, r *http.Request) {
	user, ok := b.user(w, r)
	if !ok {
		return
	}
	id := r.PathValue("requestId")
	if !asyncevent.ValidID(id) {
		http.Error(w, `{"title":"Unprocessable Entity"}`, http.StatusUnprocessableEntity)
		return
	}
	inm := r.Header.Get("If-None-Match")
	w.Header().Set("Cache-Control", pollCacheControl)
	if inm != "" {
		// A candidate's tag, ahead of its pollAt by more than the skew:
		// unchanged, without a read.
		if tag, g, ok := b.tags.parse(user, id, inm); ok && time.Now().UnixMilli() < g.pollAt-lateness.ClockSkew.Milliseconds() {
			w.Header().Set("ETag", tag)
			w.Header().Set("Retry-After", asyncevent.RetryAfter(time.Duration(g.pollAt-time.Now().UnixMilli())*time.Millisecond))
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	out, err := b.db.GetItem(r.Context(), &dynamodb.GetItemInput{TableName: &b.table,
		Key: map[string]types.AttributeValue{"PK": s("REQ#" + id), "SK": s("META")}})
	if err != nil {
		http.Error(w, `{"title":"Service Unavailable"}`, http.StatusServiceUnavailable)
		return
	}
	var req bareRequest
	if out.Item == nil || attributevalue.UnmarshalMap(out.Item, &req) != nil || req.UserID != user {
		http.Error(w, `{"title":"Not Found"}`, http.StatusNotFound)
		return
	}
	v := bareView{RequestID: req.RequestID, EventID: req.EventID, EventType: req.EventType, Status: req.Status, UIPhase: req.UIPhase,
		UIResult: req.UIResult, ResultCode: req.ResultCode, RequestedAt: req.RequestedAt, QueuedAt: req.QueuedAt, StartedAt: req.StartedAt,
		FinishedAt: req.FinishedAt, Timeline: []bareStep{{"RECEIVED", req.RequestedAt}}}
	if req.StartedAt != 0 {
		v.QueueDelayMs = req.StartedAt - req.QueuedAt
	}
	if req.FinishedAt != 0 {
		v.E2EDelayMs = req.FinishedAt - req.QueuedAt
	}
	if req.QueuedAt != 0 {
		v.Timeline = append(v.Timeline, bareStep{"QUEUED", req.QueuedAt})
	}
	if req.StartedAt != 0 {
		v.Timeline = append(v.Timeline, bareStep{"PROCESSING", req.StartedAt})
	}
	if req.FinishedAt != 0 {
		v.Timeline = append(v.Timeline, bareStep{req.Status, req.FinishedAt})
	}
	var pollAt int64
	if req.Status == "PROCESSING" && req.UIPhase == "ALLOCATING" && req.QueuedAt > 0 {
		pollAt = req.QueuedAt + lateness.Max().Milliseconds()
		if ra := asyncevent.RetryAfter(time.Duration(pollAt-time.Now().UnixMilli()) * time.Millisecond); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
	}
	body, _ := json.Marshal(v)
	sum := sha256.Sum256(body)
	tag := b.tags.format(user, id, tagged{pollAt: pollAt, event: req.EventID}, tagEncoding.EncodeToString(sum[:12]))
	w.Header().Set("ETag", tag)
	if inm != "" && matches(inm, tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}
