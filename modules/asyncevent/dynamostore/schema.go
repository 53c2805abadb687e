package dynamostore

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// DefaultTable is the table's default name.
const DefaultTable = "AsyncEventTable"

// Schema is AsyncEventTable's schema: PK/SK, GSI1, GSI2, GSI3, TTL on "ttl" and
// a NEW_AND_OLD_IMAGES stream, from which the analytics events are derived
// (RequestChange, docs/events.md).
//
// GSI2, the event index, projects only what never changes once a request
// is queued (its keys, requestId and queuedAt), so that the request's
// later transitions (PROCESSING, SUCCEEDED...) do not write the index: a
// request writes its event's one GSI2 partition once, not three or four
// times (docs/capacity.md). Reads through GSI2 fetch the requests from
// the table (BatchGet). ProjectAllSchema keeps the first GSI2, projecting ALL
// (docs/asyncevent.md, The table's indexes).
//
// GSI3, the pending index, is sparse and projects ALL: its entries are few
// and short-lived (pending.go).
var Schema = ddb.Schema{
	PK: "PK", SK: "SK",
	Indexes: []ddb.Index{
		{Name: "GSI1", PK: "GSI1PK", SK: "GSI1SK"},
		{Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK",
			Projection: types.ProjectionTypeInclude, NonKeyAttributes: []string{"requestId", "queuedAt"}},
		pendingIndex,
	},
	TTLAttribute: "ttl",
	Stream:       types.StreamViewTypeNewAndOldImages,
}

// ProjectAllSchema is Schema with GSI2 as first defined, projecting ALL attributes:
// every transition of a request writes GSI2 again. A Store on a table with it
// filters and reads requests from the index itself. Tables created before
// GSI2 was narrowed have it; docs/capacity.md says how to move them.
var ProjectAllSchema = func() ddb.Schema {
	s := Schema
	s.Indexes = []ddb.Index{Schema.Indexes[0], {Name: "GSI2", PK: "GSI2PK", SK: "GSI2SK"}, pendingIndex}
	return s
}()

// pendingIndex is GSI3, the pending index.
var pendingIndex = ddb.Index{Name: "GSI3", PK: "GSI3PK", SK: "GSI3SK"}

// Key formats.
var (
	requestPK = ddb.MustFormat("REQ#{requestId}")
	lockPK    = ddb.MustFormat("IDEMP#{eventId}#{userId}")
	eventPK   = ddb.MustFormat("EVENT#{eventId}")
	userPK    = ddb.MustFormat("USER#{userId}")
	logSK     = ddb.MustFormat("LOG#{occurredAt}#{toStatus}")
	queuedSK  = ddb.MustFormat("QAT#{queuedAt}#REQ#{requestId}")
)
