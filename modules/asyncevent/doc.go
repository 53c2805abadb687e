// Package asyncevent is the AsyncEvent domain: first-come and lottery event
// participation that stays correct under traffic spikes.
//
// An API accepts a participation at once (202 + requestId); a queue and its
// workers decide it later. This package holds the rules and imports only
// the standard library and ulid: the request and event lifecycles as plain
// tables (Lifecycle, EventLifecycle), the domain types (Request,
// EventConfig, Status, ResultCode, ...), the errors and the Service. The
// Service does no I/O of its own: it is built from the ports it declares
// (Store, made of small interfaces by use, plus Queue and DeadLetters),
// which the adapters implement: dynamostore on DynamoDB, sqsqueue on SQS.
//
//	store := dynamostore.New(ddb.New(dynamoClient, ddb.Config{}), dynamostore.DefaultTable)
//	queue, err := sqsqueue.Open(ctx, sqsClient, sqsqueue.Config{})
//	svc := asyncevent.New(store, queue, queue, asyncevent.Config{})
//
//	cfg, err := svc.CreateEvent(ctx, asyncevent.NewEvent{...})         // admin
//	p, err := svc.Participate(ctx, eventID, userID)                     // API; userID from a verified token
//	out := svc.Process(ctx, asyncevent.Delivery{Body: body, ...})       // worker; delete the message if out.Ack
//	r, err := svc.GetRequest(ctx, asyncevent.Caller{UserID: userID}, p.RequestID)
//	res, err := svc.Draw(ctx, eventID, "")                              // admin, after a lottery's cutoff
//
// Operators heal stranded requests with SweepStranded and RequeueFailed,
// and inspect or redrive the dead-letter queue with DeadLetters and
// Redrive. Errors are the package's sentinels and typed errors (*EventError
// names the setting at fault, *StateError the request's current state),
// checked with errors.Is and errors.As.
//
// A FIRST_COME event's Ordering picks its winners: OrderDelivery decides
// each request as its message is delivered; OrderArrival makes requests
// candidates and lets the event's allocator (Allocate, run by every worker
// in RunAllocator) decide them in (queuedAt, requestId) order. Its
// IndexShards (default 1: one index partition per event, docs/asyncevent.md)
// spreads its index entries over more partitions for events beyond about
// 1,000 participations/s; readers merge them back in the same order
// (docs/capacity.md).
//
// docs/asyncevent.md explains the design: the lifecycle as a state diagram,
// the crash windows and how each is closed, ordering, the event cache and
// the lottery's fairness; docs/fairness.md what FIRST_COME guarantees.
package asyncevent
