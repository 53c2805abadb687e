// Package asyncevent is the AsyncEvent domain: first-come and lottery event
// participation under traffic spikes.
//
// An API accepts a participation at once (202 + requestId); an SQS queue,
// its dead-letter queue and workers do the rest. The package holds the
// domain types (the request Status and its state machine, EventType,
// UIPhase, UIResult, ResultCode, FailureClass, Request, EventConfig, ...),
// the domain errors, and the service logic (Service: Participate, Process,
// Draw, CreateEvent and the queries). It does no I/O of its own: it
// depends on the small interfaces Store, Queue and DeadLetters, which the
// adapters in dynamostore (DynamoDB, through sdk/ddb) and sqsqueue (SQS)
// implement. It imports neither HTTP nor Huma.
//
// # Crash consistency
//
// Ingest puts the IdempotencyLock and the Request (RECEIVED) in one
// transaction, sends the message, then moves RECEIVED → QUEUED (setting
// queuedAt and the GSI keys). A duplicate learns the stored requestId from
// the cancelled transaction's reason, without a read. A worker that gets a
// message whose request is still RECEIVED (ingest died after the send)
// processes it, taking the message's SentTimestamp as queuedAt. For
// FIRST_COME the capacity decrement and PROCESSING → SUCCEEDED are one
// transaction, so capacityTotal − capacityRemaining == #SUCCEEDED always.
// Every status transition writes its StatusLog item in the same
// transaction as the transition.
//
// One window stays open at ingest: if the process dies between the lock
// transaction and the send, or the send fails and so does marking the
// request FAILED_FINAL, the request is RECEIVED with no message (RECEIVED
// requests have no GSI keys, so no list shows them). A client retry
// returns its id as a duplicate; reading the request (GET, by its owner or
// an admin) once it has been RECEIVED for Config.RequeueAfter enqueues it
// again, at most once per RequeueAfter, and a worker finishes it. Requests
// nobody reads are found by Service.SweepStranded (a filtered table Scan),
// which every asyncevent-worker runs periodically (PACER_WORKER_SWEEP_EVERY,
// default 10 min) and the admin API runs on demand (POST
// /admin/requests/sweep). A lottery draw waits while any of its entries is still
// RECEIVED (Draw returns ErrDrawPending saying how many to sweep); one
// healed after the draw started anyway is REJECTED_LOTTERY_CLOSED.
//
// A request whose send failed and which was marked FAILED_FINAL /
// FAILED_INGEST_ENQUEUE keeps its lock, so the user cannot enter twice; as
// the seeds say, re-queueing it is an operator's decision: RequeueFailed
// (one request) or SweepStranded with RequeueFailedEnqueue (all; the sweep
// always counts them). The re-queue reopens the request to RECEIVED in one
// logged, conditional write outside Lifecycle, in which FAILED_FINAL stays
// terminal for workers, then enqueues it as ingest does. A lottery entry
// can be re-queued only while the lottery is OPEN (before the draw): the
// reopen's transaction checks it, so a draw starting meanwhile wins.
//
// # Ordering
//
// Workers take messages in the order SQS delivers them; a standard queue
// does not promise order, so under load seats go in approximately, not
// exactly, queuedAt order. queuedAt is recorded for every request and the
// lists sort by it.
//
// # Event configuration cache
//
// Ingest must reject unknown and closed events, which needs the
// EventConfig. To keep a new participation at exactly 3 AWS calls
// (TransactWriteItems, SendMessage, TransactWriteItems), Service caches
// EventConfig items in process for Config.EventCacheTTL (default 2 s).
// The first participation of an event in a process costs one extra
// GetItem (strongly consistent). A status change (a close, the draw
// starting) made through a Service drops its own cached copy at once, and
// reads in flight do not cache the old status; other processes see it when
// their copy expires, within the TTL. The lottery cutoff is a timestamp and
// so is exact everywhere. Unknown events are not cached.
//
// Why not check the event's status inside ingest's transaction, which
// would make a close exact everywhere? Every participation would then
// touch the event's CONFIG item in a transaction, and concurrent
// transactions on one item conflict: a spike on one event would become a
// queue of TransactionConflict retries, the opposite of what ingest is for.
//
// # Lottery
//
// Entries stay PROCESSING with uiPhase COLLECTING. After lotteryCutoffAt
// an admin runs Draw, which is idempotent and resumable: it freezes the
// event (status DRAWING), sets every entry's uiPhase to DRAWING, ranks the
// entries by SHA-256(seed || requestId) and makes the first K winners
// (SUCCEEDED/LOTTERY_WIN) and the rest losers (REJECTED/
// REJECTED_LOTTERY_LOSE), uiPhase ANNOUNCED. The SHA-256 commitment of the
// seed is stored on the EventConfig when the event is created; the seed is
// revealed by the draw, so anyone can recompute the winners (see Rank).
package asyncevent
