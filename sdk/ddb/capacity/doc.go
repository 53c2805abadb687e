// Package capacity computes what DynamoDB charges for items and writes,
// by the documented rules, so that a test can measure the write and read
// units of an operation from the real items it writes and hold a capacity
// model to them.
//
// Sizes (Size, "Item sizes and formats" in the DynamoDB developer guide):
// an item is the sum of its attributes' name lengths and value sizes; a
// string or binary is its length in bytes (UTF-8), a number about one
// byte per two significant digits plus one, a boolean or null one byte, a
// list or map 3 bytes plus one byte and (for a map) the name of each
// element, a set the sum of its elements.
//
// Units: a write is ceil(size / 1 KB) write units (WCU), the larger of the
// item before and after it; a transactional write twice that. A read is
// ceil(size / 4 KB) read units (RCU) when strongly consistent, half that
// when eventually consistent; a query sums the sizes of the items it
// evaluates before rounding, a batch get rounds each item.
//
// Global secondary indexes (Cost): a write to the table writes an index
// entry only if the item has the index's keys before or after it and the
// entry (the index and table keys and the projected attributes) changes:
// a new entry is one put, a removed one one delete, a changed key a
// delete and a put, a changed projected attribute one put. Each index
// write costs ceil(entry size / 1 KB) WCU (standard, not doubled, for a
// transaction too: the index is updated asynchronously), charged to the
// index partition of its partition key. An index that cannot take a write
// throttles the table write that feeds it.
package capacity
