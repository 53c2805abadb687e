// Package asyncevent is the AsyncEvent domain: first-come and lottery event
// participation that stays correct under traffic spikes.
//
// An API accepts a participation at once (202 + requestId); a queue and its
// workers decide it later. This package holds the rules and imports only
// the standard library and ulid: the request and event lifecycles as plain
// tables (Lifecycle, EventLifecycle), the domain types (Request,
// EventConfig, Status, ResultCode, ...), the errors and one type per role:
// Ingest (the API's participations), Query (a request's owner's reads),
// Admin (events, the draw, an event's requests, the DLQ), Operations (the
// sweep, re-queues, lock expiry, the capacity check), Worker (deciding
// delivered messages) and Allocator (deciding arrival-ordered events in
// order). The API process builds Ingest, Query, Admin and Operations; a
// worker process builds Worker, Allocator and Operations. The roles do no
// I/O of their own: each is built with NewX from an XConfig naming the
// small ports it uses (port.go: IngestStore, WorkerStore, Queue,
// DeadLetters, ...), which the adapters implement: dynamostore on
// DynamoDB, sqsqueue on SQS. The roles of one process share an EventCache,
// so that an event an Admin closes stops that process's Ingest at once.
//
//	store := dynamostore.New(ddb.New(dynamoClient, ddb.Config{}).Table(dynamostore.DefaultTable, &dynamostore.Schema))
//	queue, err := sqsqueue.Open(ctx, sqsClient, sqsqueue.Config{})
//	events := asyncevent.NewEventCache(0)
//
//	// the API process
//	ingest := asyncevent.NewIngest(asyncevent.IngestConfig{Requests: store, Events: store, Queue: queue, Cache: events})
//	query := asyncevent.NewQuery(asyncevent.QueryConfig{Requests: store})
//	admin := asyncevent.NewAdmin(asyncevent.AdminConfig{Events: store, Requests: store, Draw: store, DeadLetters: queue, Cache: events})
//	cfg, err := admin.CreateEvent(ctx, asyncevent.NewEvent{...})
//	p, err := ingest.Participate(ctx, asyncevent.ParticipateInput{EventID: eventID, UserID: userID}) // userID from a verified token
//	r, err := query.GetRequest(ctx, asyncevent.Caller{UserID: userID}, p.RequestID)
//	res, err := admin.Draw(ctx, eventID, "") // after a lottery's cutoff
//
//	// a worker process (its own EventCache: nil, the default)
//	alloc := asyncevent.NewAllocator(asyncevent.AllocatorConfig{Store: store})
//	worker := asyncevent.NewWorker(asyncevent.WorkerConfig{Requests: store, Events: store, Queue: queue, Allocator: alloc})
//	go alloc.Run(ctx)
//	out := worker.Process(ctx, asyncevent.Delivery{Body: body, ...}) // delete the message if out.Ack
//
// Operators heal stranded requests with Operations.SweepStranded and
// RequeueFailed, and inspect or redrive the dead-letter queue with
// Admin.DeadLetters and Redrive. Errors are the package's sentinels and
// typed errors (*EventError names the setting at fault, *StateError the
// request's current state), checked with errors.Is and errors.As.
//
// A FIRST_COME event's Ordering picks its winners: OrderDelivery decides
// each request as its message is delivered; OrderArrival makes requests
// candidates and lets the event's allocator (Allocator.Allocate, run by
// every worker process in Allocator.Run) decide them in (queuedAt,
// requestId) order. Its IndexShards (default 1: one index partition per
// event, docs/asyncevent.md) spreads its index entries over more
// partitions for events beyond about 1,000 participations/s; readers
// merge them back in the same order (docs/capacity.md).
//
// docs/asyncevent.md explains the design: the lifecycle as a state diagram,
// the crash windows and how each is closed, ordering, the event cache and
// the lottery's fairness; docs/fairness.md what FIRST_COME guarantees.
package asyncevent
