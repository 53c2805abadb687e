// Package ddb is Pacer's DynamoDB single-table SDK.
//
// It sits on aws-sdk-go-v2 and adds what single-table designs need and the
// raw client leaves to every team to get right:
//
//   - Schema: the table's key attributes, GSIs, TTL attribute and billing
//     mode in code, with CreateTable / Ensure and UpdateTimeToLive.
//   - Keys: Format builds and parses keys such as "IDEMP#{eventId}#{userId}"
//     exactly as written for ordinary ids, and escapes '#' and '%' inside
//     values so that no value can forge or collide with another key.
//   - Entities: Entity[T] binds a Go type to its entity type name, its key
//     function and the GSIs it may carry. Writing a GSI attribute on an
//     entity that is not allowed it is an error (ErrIndexNotAllowed).
//   - Conditional writes with meaning: put-if-absent (Entity.Create),
//     state-machine transitions (Transition), guarded counters (Update.Add
//     with Update.If). A failed condition is a *ConditionError that carries
//     the item as it is now (ReturnValuesOnConditionCheckFailure=ALL_OLD), so
//     no second read is needed to learn why.
//   - Transactions: Table.Transact over TransactWriteItems, with
//     cancellation reasons mapped to the failing operation and its item.
//   - Batches: BatchGet in chunks of 100 (results in request order) and
//     BatchWrite in chunks of 25, retrying unprocessed items with capped
//     exponential backoff and jitter; never silently dropping any.
//   - Queries: base table or GSI, sort-key conditions, direction, limits and
//     filters; pages carry an opaque, HMAC-signed cursor bound to the table,
//     index, partition and tenant it was issued for.
//   - Tenancy: Table.Scope returns a view that reads and writes only one
//     tenant's items and whose cursors no other tenant can use.
//   - Observability: an Observer sees every call's latency and consumed
//     capacity.
//
// The SDK depends on the narrow Client interface, so callers can wrap the
// client (for fault injection, call counting or tracing).
package ddb
