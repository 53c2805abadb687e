// Package photo is PhotoService's domain: race photos that organizers and
// runners search by bib number or by photographer.
//
// Postgres holds the truth (organizers, events, photographers, their
// assignments to events, each event's runners, runners' privacy requests);
// DynamoDB holds a read-optimized copy of every processed photo, indexed by
// bib and by photographer. This package holds the rules between the two
// and imports only the standard library and ulid. It does no I/O of its
// own: its roles, one type each, are built from the ports they use (small
// interfaces in port.go, named in each role's config), which the adapters
// implement: pgstore on Postgres, dynamostore on DynamoDB.
//
//   - Ingest: the pipeline's photo ingest (Ingest, IngestBatch).
//   - Search: the organizers' searches and the runners' public one.
//   - Directory: organizers, events, photographers, assignments, runners,
//     and the photographers' profile copies (SyncPhotographer, Reconcile).
//   - Privacy: photo deletes and runners' privacy requests (RemoveBib).
//   - Timing: race timing (timing points, photographers' positions and
//     camera clocks, runners' splits), which Search.Nearby reads to find
//     a runner's photos by when they passed each camera.
//
// A process builds the roles it runs (services/internal/photobackend does
// it for photo-api, which runs all five):
//
//	truth := pgstore.New(pool)
//	index := dynamostore.New(db.Table(dynamostore.TableName(stage), &dynamostore.Schema))
//	dir := photo.NewDirectory(photo.DirectoryConfig{Organizers: truth, Events: truth, Photographers: truth,
//		Assignments: truth, Runners: truth, Checkpoints: truth, Photos: index, Copies: index})
//	ing := photo.NewIngest(photo.IngestConfig{Source: truth, Profiles: truth, Index: index, Copies: index})
//	search := photo.NewSearch(photo.SearchConfig{Truth: truth, Nearby: truth, Index: index})
//	timing := photo.NewTiming(photo.TimingConfig{Store: truth})
//	privacy := photo.NewPrivacy(photo.PrivacyConfig{Events: truth, Requests: truth, Index: index})
//
//	ev, err := dir.CreateEvent(ctx, org, photo.Event{ID: "seoul-2024", Name: "Seoul Marathon"})
//	n, err := dir.ImportRunners(ctx, org, ev.ID, runners)
//	res, err := ing.IngestBatch(ctx, org, ev.ID, records)      // idempotent by ulid
//	page, err := search.ByBib(ctx, org, ev.ID, "1234", photo.PageRequest{Limit: 50})
//	pub, err := search.PublicByBib(ctx, ev.ID, "1234", photo.PageRequest{}) // published events only
//	priv, err := privacy.RemoveBib(ctx, org, ev.ID, "1234", photo.HideMode) // a runner's privacy request
//
// A photo's createdAt is its capture time by the photographer's camera
// clock (the ulid's time). Every search but Nearby is newest first, by it;
// Nearby orders by the capture time corrected by the camera's clock
// offset, earliest first.
// Bibs not among the event's runners are kept and flagged (a nil Runner).
// A photographer's profile change is copied to their photos by
// Directory.SyncPhotographer; Directory.Reconcile reports and repairs
// drift.
//
// Errors are the package's sentinels (ErrNotFound, ErrInvalid, ErrConflict,
// ErrCursor, ErrForbidden), checked with errors.Is; invalid input is a
// *ValidationError naming each bad field.
//
// docs/photo.md explains the design: the rules between the truth and the
// copy, privacy requests racing ingest, the search order and its cost, and
// how a batch write stays atomic to readers.
package photo
