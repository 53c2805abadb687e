// Package analytics turns AsyncEvent request changes into analytics
// events: the contract in docs/events.md and docs/events.schema.json.
//
// Mapper.Events looks at one change of a Request item (its image before
// and after) and returns the events it means, each in an
// eventsink.Envelope of source pacer.asyncevent:
//
//   - ParticipationRequested when the request is created;
//   - ParticipationProcessed when it reaches a terminal status (SUCCEEDED,
//     REJECTED, FAILED_FINAL), with DelayMeasured beside it when queuedAt,
//     startedAt and finishedAt are all known;
//   - RequestFailed when it becomes FAILED_FINAL (its failureClass:
//     NON_RETRYABLE, or RETRYABLE for a failed enqueue), and for
//     every retryable failure a worker records (RETRYABLE, deadLettered
//     once the attempts reach the DLQ's maxReceiveCount).
//
// An event's id is a hash of the request id, the event type, the status
// and the time of the transition, so the same change seen twice (a stream
// record delivered again) gives the same id, and readers de-duplicate on
// it. No user id leaves the package: with Mapper.UserKey set, events carry
// userHash, an HMAC-SHA256 of the user id, for per-user counts.
package analytics
