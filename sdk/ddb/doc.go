// Package ddb is Pacer's DynamoDB single-table SDK.
//
// It sits on aws-sdk-go-v2 and adds what single-table designs need and the
// raw client leaves to every team to get right. The main entry points:
//
//   - New opens a DB on a Client; DB.Table binds a table name to its
//     Schema (keys, GSIs, TTL, billing). Table.Ensure creates the table if
//     absent; Table.Check only checks it.
//   - Format builds and parses keys such as "IDEMP#{eventId}#{userId}",
//     escaping values so that none can forge or collide with another key;
//     Millis and PadInt write fixed-width numbers that sort as strings.
//   - Entity[T] binds a Go type to its entity type, key function and the
//     GSIs it may carry: Create (put-if-absent), Put, Update (with
//     Update.Bounded counters), Get, Delete.
//   - Machine and Transition make status changes conditional writes that
//     name the status they leave.
//   - DB.Transact and DB.TransactToken run TransactWriteItems, mapping a
//     cancellation to the failing operation (*TxError).
//   - Table.BatchGet and Table.BatchWrite chunk and retry; what stays
//     unprocessed is a *BatchError.
//   - Query (Page, All) and NewMerge read pages with sealed cursors, bound
//     to what they were issued for; Table.Scope is one tenant's view.
//   - Config.Observer sees every call's latency and consumed capacity.
//
// A failed condition is a *ConditionError carrying the item as it is now.
// Check errors with errors.Is against the sentinels (ErrNotFound,
// ErrConditionFailed, ErrCursor...) and errors.As for the typed ones.
// Package ddbtest gives each test its own table on DynamoDB Local.
//
// docs/sdk.md says what each part guarantees, and how to fuzz and
// benchmark the package; the examples/ directory at the repository root
// holds programs that use the SDK the way another team's service would.
package ddb
