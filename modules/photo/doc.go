// Package photo is PhotoService's domain: race photos that organizers and
// runners search by bib number or by photographer.
//
// Postgres holds the truth (organizers, events, photographers, their
// assignments to events, each event's runners, runners' privacy requests);
// DynamoDB holds a read-optimized copy of every processed photo, indexed by
// bib and by photographer. This package holds the rules between the two
// and imports only the standard library and ulid. The Service does no I/O
// of its own: it is built from the ports it declares (port.go: Truth and
// Index, each made of small interfaces by use), which the adapters
// implement: pgstore on Postgres, dynamostore on DynamoDB.
//
//	svc := photo.NewService(photo.Config{
//		Truth: pgstore.New(pool),
//		Index: dynamostore.New(db.Table(dynamostore.TableName(stage), &dynamostore.Schema)),
//	})
//
//	ev, err := svc.CreateEvent(ctx, org, photo.Event{ID: "seoul-2024", Name: "Seoul Marathon"})
//	n, err := svc.ImportRunners(ctx, org, ev.ID, runners)
//	res, err := svc.IngestBatch(ctx, org, ev.ID, records)      // idempotent by ulid
//	page, err := svc.ByBib(ctx, org, ev.ID, "1234", photo.PageRequest{Limit: 50})
//	pub, err := svc.PublicByBib(ctx, ev.ID, "1234", photo.PageRequest{}) // published events only
//	priv, err := svc.RemoveBib(ctx, org, ev.ID, "1234", photo.HideMode)  // a runner's privacy request
//
// Every search is newest first, by the photo's ulid time (= createdAt).
// Bibs not among the event's runners are kept and flagged (a nil Runner).
// A photographer's profile change is copied to their photos by
// SyncPhotographer; Reconcile reports and repairs drift.
//
// Errors are the package's sentinels (ErrNotFound, ErrInvalid, ErrConflict,
// ErrCursor, ErrForbidden), checked with errors.Is; invalid input is a
// *ValidationError naming each bad field.
//
// docs/photo.md explains the design: the rules between the truth and the
// copy, privacy requests racing ingest, the search order and its cost, and
// how a batch write stays atomic to readers.
package photo
