package main

import (
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/asyncevent"
)

// The raw loops' items carry the attributes and index keys the product
// writes (modules/asyncevent/dynamostore, item.go and store.go), so that a
// raw write costs what the product's does on a copy of its table: the same
// item sizes and the same GSI1/GSI2 entries.
//
//	IdempotencyLock  IDEMP#<eventId>#<userId> / LOCK  (entityType IDEMPOTENCY)
//	Request          REQ#<requestId> / META           (entityType REQUEST;
//	                 GSI1 USER#<userId> and GSI2 EVENT#<eventId>, both
//	                 QAT#<queuedAt>#REQ#<requestId>, from QUEUED on)
//	StatusLog        REQ#<requestId> / LOG#<occurredAt>#<toStatus> (entityType STATUS_LOG)
//	EventCapacity    EVENT#<eventId> / CAPACITY        (entityType CAPACITY)

const (
	day       = 86400
	rawEvent  = "FIRST_COME"
	rawMillis = "%013d"
)

func str(v string) dtypes.AttributeValue { return &dtypes.AttributeValueMemberS{Value: v} }
func num(v int64) dtypes.AttributeValue {
	return &dtypes.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

// rawReq names one raw request: its id, event and user.
type rawReq struct{ id, event, user string }

func (r rawReq) key() map[string]dtypes.AttributeValue {
	return map[string]dtypes.AttributeValue{"PK": str(r.pk()), "SK": str("META")}
}

func (r rawReq) pk() string     { return "REQ#" + r.id }
func (r rawReq) lockPK() string { return "IDEMP#" + r.event + "#" + r.user }

// queuedSK is QAT#<queuedAt, 13 digits>#REQ#<requestId>, the GSI1 and GSI2
// sort key.
func (r rawReq) queuedSK(queuedAt int64) string {
	return fmt.Sprintf("QAT#"+rawMillis+"#REQ#%s", queuedAt, r.id)
}

// lockItem is the IdempotencyLock ingest creates, with its TTL a week
// after the event's end (the load's events have no closesAt: they end
// MaxEventLifetime after they open).
func (r rawReq) lockItem(now int64) map[string]dtypes.AttributeValue {
	ttl := (now + asyncevent.MaxEventLifetime.Milliseconds() + asyncevent.LockTTLAfter.Milliseconds()) / 1000
	return map[string]dtypes.AttributeValue{
		"PK": str(r.lockPK()), "SK": str("LOCK"), "entityType": str("IDEMPOTENCY"),
		"eventId": str(r.event), "userId": str(r.user), "requestId": str(r.id), "createdAt": num(now), "ttl": num(ttl),
	}
}

// requestItem is the Request ingest creates (RECEIVED, no index keys yet),
// of entityType entity (REQUEST, or rawRequestEntity on the product table).
func (r rawReq) requestItem(now int64, entity string) map[string]dtypes.AttributeValue {
	return map[string]dtypes.AttributeValue{
		"PK": str(r.pk()), "SK": str("META"), "entityType": str(entity),
		"requestId": str(r.id), "eventId": str(r.event), "userId": str(r.user),
		"eventType": str(rawEvent), "status": str("RECEIVED"), "uiResult": str("PENDING"),
		"requestedAt": num(now), "idempotencyKey": str("IDEMP#" + r.event + "#" + r.user), "ttl": num(now/1000 + 90*day),
	}
}

// logSK is the sort key of r's StatusLog of the move to `to` at `at`.
func (r rawReq) logSK(to string, at int64) string {
	return fmt.Sprintf("LOG#"+rawMillis+"#%s", at, to)
}

// logItem is a StatusLog of r's move from → to at `at`.
func (r rawReq) logItem(from, to string, at int64, message string) map[string]dtypes.AttributeValue {
	it := map[string]dtypes.AttributeValue{
		"PK": str(r.pk()), "SK": str(r.logSK(to, at)), "entityType": str("STATUS_LOG"),
		"requestId": str(r.id), "fromStatus": str(from), "toStatus": str(to), "occurredAt": num(at), "ttl": num(at/1000 + 90*day),
	}
	if message != "" {
		it["message"] = str(message)
	}
	return it
}

// logPut is the conditional put of a StatusLog, as a transaction item.
func (s *standins) logPut(r rawReq, from, to string, at int64, message string) dtypes.TransactWriteItem {
	s.wrote(r.pk(), r.logSK(to, at))
	return dtypes.TransactWriteItem{Put: &dtypes.Put{TableName: &s.table, Item: r.logItem(from, to, at, message),
		ConditionExpression: aws.String("attribute_not_exists(PK)")}}
}

// times is the product's "times only move forward" condition on a
// request update (dynamostore requestTimes), on top of the status check.
const times = " AND (attribute_not_exists(requestedAt) OR requestedAt < :at)" +
	" AND (attribute_not_exists(queuedAt) OR queuedAt < :at)" +
	" AND (attribute_not_exists(startedAt) OR startedAt < :at)" +
	" AND (attribute_not_exists(finishedAt) OR finishedAt < :at)" +
	" AND (attribute_not_exists(requeuedAt) OR requeuedAt < :at)"

// move is the product's request transition from status `from` to `to` at
// `at` (#s is status, :at the time), which also sets extra and checks
// cond (both "" for none), as a transaction item.
func (s *standins) move(r rawReq, from, to string, at int64, extra, cond string, values map[string]dtypes.AttributeValue) dtypes.TransactWriteItem {
	vals := map[string]dtypes.AttributeValue{":from": str(from), ":to": str(to), ":at": num(at)}
	for k, v := range values {
		vals[k] = v
	}
	set := "SET #s = :to"
	if extra != "" {
		set += ", " + extra
	}
	return dtypes.TransactWriteItem{Update: &dtypes.Update{TableName: &s.table, Key: r.key(),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("#s = :from" + times + cond),
		ExpressionAttributeNames:  map[string]string{"#s": "status"},
		ExpressionAttributeValues: vals}}
}

// queue is r's move from `from` to `to` at `at` that stamps queuedAt =
// at and the GSI1/GSI2 keys (ingest's RECEIVED → QUEUED, or a worker's
// RECEIVED → PROCESSING when ingest's write failed), also setting extra,
// with its StatusLog.
func (s *standins) queue(r rawReq, from, to string, at int64, extra string, values map[string]dtypes.AttributeValue, message string) []dtypes.TransactWriteItem {
	set := "queuedAt = :at, GSI1PK = :g1, GSI1SK = :qat, GSI2PK = :g2, GSI2SK = :qat"
	if extra != "" {
		set += ", " + extra
	}
	vals := map[string]dtypes.AttributeValue{":g1": str("USER#" + r.user), ":g2": str("EVENT#" + r.event), ":qat": str(r.queuedSK(at))}
	for k, v := range values {
		vals[k] = v
	}
	return []dtypes.TransactWriteItem{s.move(r, from, to, at, set, "", vals), s.logPut(r, from, to, at, message)}
}

// rawBody is the raw message body: the product's message (v1) for r.
// copies > 0 marks the copies-th delayed copy sent for an arrival
// candidate.
func rawBody(r rawReq, copies int) string {
	c := ""
	if copies > 0 {
		c = fmt.Sprintf(`,"copies":%d`, copies)
	}
	return fmt.Sprintf(`{"v":1,"requestId":%q,"eventId":%q,"userId":%q,"eventType":%q%s}`, r.id, r.event, r.user, rawEvent, c)
}
