// Package stream reads a DynamoDB table's stream: a typed, checkpointed,
// at-least-once consumer.
//
// Run lists the stream's shards, reads each one (a child shard only after
// its parents are read to their end, so that the changes of one item come
// in order), decodes every record's images into ddb.Items, and hands each
// GetRecords batch to a Handler. Only after the handler returns nil is the
// shard's checkpoint (the last sequence number) saved in a Checkpoints
// store; a failing handler gets the same batch again, with backoff, until
// it succeeds. A consumer that stops or dies resumes after the last saved
// checkpoint, so a record is delivered at least once: a handler must be
// idempotent (or its output de-duplicated downstream).
//
// Checkpoints live in a table of their own (NewDynamoCheckpoints), never in
// the table being read: writing them there would put the checkpoints in
// the stream they track.
//
// A table has a stream when its ddb.Schema sets Stream; DynamoDB Local
// serves streams on its own endpoint, which NewClient uses.
package stream
