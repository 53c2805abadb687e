// Package ddb is Pacer's DynamoDB single-table SDK.
//
// It sits on aws-sdk-go-v2 and adds what single-table designs need and the
// raw client leaves to every team to get right:
//
//   - Schema: the table's key attributes, GSIs, TTL attribute and billing
//     mode in code. Schema.CreateTableInput gives the CreateTable request;
//     Table.Ensure creates the table if absent, waits until it is ACTIVE and
//     enables TTL, and is safe to call on every start; Table.Check only
//     checks that the table exists with the schema's key and indexes, for
//     a process whose tables a deployment creates.
//   - Keys: Format builds and parses keys such as "IDEMP#{eventId}#{userId}"
//     exactly as written for ordinary ids, and escapes '%' as "%25" and '#'
//     as "%23" inside values (for every placeholder), so that no value can
//     forge or collide with another key. Parse is strict and reverses Build.
//     Millis and PadInt write fixed-width numbers that sort as strings.
//   - Entities: Entity[T] binds a Go type to its entity type name (written
//     to Schema.TypeAttribute, "entityType" by default), its key function and
//     the GSIs it may carry. Writing a GSI attribute on an entity that is not
//     allowed it is an error (ErrIndexNotAllowed), for puts and updates.
//     Items are encoded and decoded with attributevalue (dynamodbav tags).
//   - Conditional writes with meaning: put-if-absent (Entity.Create),
//     state-machine transitions (Machine and Transition, which refuses an
//     undeclared transition before any call), guarded counters
//     (Update.Bounded). A failed condition is a *ConditionError that carries
//     the item as it is now (ReturnValuesOnConditionCheckFailure=ALL_OLD), so
//     no second read is needed to learn why.
//   - Transactions: DB.Transact and DB.TransactToken (idempotent with a
//     client token) over TransactWriteItems, up to 100 operations, with
//     cancellation reasons mapped to the failing operation (*TxError, by
//     index and Label) and its current item.
//   - Batches: Table.BatchGet in chunks of 100 (results in request order,
//     missing items nil) and Table.BatchWrite in chunks of 25, retrying
//     unprocessed items with capped exponential backoff and jitter. What is
//     still unprocessed after Config.BatchRetries is listed in a
//     *BatchError; nothing is silently dropped.
//   - Queries: base table or GSI, sort-key conditions (BeginsWith, Between,
//     SortKey), direction, limits and filters. Query.Page returns pages whose
//     cursor is sealed with AES-256-GCM (a key derived from
//     Config.CursorKey), so it is opaque (it reveals no table, key or
//     tenant) and cannot be forged, and it is bound to the table, index,
//     partition, sort-key condition, direction and tenant it was issued
//     for; any other cursor is ErrCursor. The last page has no
//     cursor and no page is empty with a cursor (one exception: a filter
//     that matched nothing in MaxFilteredCalls calls, which bound the work
//     of one page). Query.All iterates over every item. Table.Scan and Entity.Scan read the whole table, for
//     operator jobs only.
//   - Merges: NewMerge reads up to MaxMergeStreams queries (streams, e.g.
//     one partition each) as one sequence in a caller's order, a k-way
//     merge, with one sealed cursor holding every stream's position (bound
//     to all the streams, like a Query's). A page costs one Query per
//     stream that still has items.
//   - Tenancy: Table.Scope returns a view that reads and writes only one
//     tenant's items and whose cursors no other tenant can use; Entity.In
//     binds an entity to it.
//   - Observability: a Config.Observer sees every call's latency and
//     consumed capacity (ReturnConsumedCapacity=TOTAL when one is set,
//     unless Config.SkipConsumedCapacity).
//
// The SDK depends on the narrow Client interface, so callers can wrap the
// client (for fault injection, call counting or tracing).
//
// # Errors
//
// Check errors with errors.Is against the sentinels (ErrNotFound,
// ErrConditionFailed, ErrIndexNotAllowed, ErrTransition, ErrCursor,
// ErrTenant, ErrInvalid, ErrKeyFormat) and with errors.As for the typed
// errors that carry detail (*ConditionError, *TxError, *BatchError,
// *NotFoundError).
//
// # Testing
//
// Package ddbtest gives each test its own table on DynamoDB Local, with an
// exact count of AWS calls. The key codec and the cursor decoder have fuzz
// targets; plain `go test` runs their seed corpus, and
//
//	go test -run '^$' -fuzz FuzzFormatRoundTrip -fuzztime 10s ./sdk/ddb
//	go test -run '^$' -fuzz FuzzFormatNoCollision -fuzztime 10s ./sdk/ddb
//	go test -run '^$' -fuzz FuzzCursorDecode -fuzztime 10s ./sdk/ddb
//
// fuzz each for ten seconds (without starting DynamoDB Local). The encode
// and decode benchmarks compare the SDK with raw attributevalue in one run:
//
//	go test -run '^$' -bench 'Encode|Decode' -benchmem -count 8 ./sdk/ddb | benchstat -col /impl -
//
// The examples/ directory at the repository root holds programs that use
// the SDK the way another team's service would.
package ddb
