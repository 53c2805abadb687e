// Package photo is PhotoService's domain: race photos that organizers and
// runners search by bib number or by photographer.
//
// Postgres holds the truth (organizers, events, photographers, which
// photographers shoot which event, each event's runners); DynamoDB holds a
// read-optimized copy of every processed photo as one PHOTO item plus one
// BIB_INDEX item per bib, in the PhotoService-{stage} table the seed fixes.
// This package owns the rules between the two and depends on neither: it
// declares the small interfaces it needs (Truth for Postgres, Index for
// DynamoDB) and the adapters in photo/pgstore and photo/dynamostore
// implement them.
//
// The rules:
//
//   - Ingest validates a processed-photo record against the truth (the
//     event belongs to the caller's org, the photographer belongs to it and
//     is assigned to the event, ids and bibs are well formed), copies the
//     photographer's handle and display name onto the photo, and writes it
//     idempotently by ulid: posting the same ulid again creates nothing and
//     changes nothing.
//   - Unknown bibs (not among the event's runners) are kept: they are
//     indexed and searchable like any other bib, and flagged, at ingest in
//     the result's UnmatchedBibs and at search time by a nil Runner, so the
//     flag corrects itself when the entry list is imported after the photos.
//   - A runner's privacy request for a bib is recorded in Postgres, then
//     applied to the event's photos: hide strikes the bib from them, delete
//     deletes them. Later photos get the same treatment at ingest: a hidden
//     bib is dropped (SuppressedBibs), and a photo showing a bib whose
//     runner asked for deletion is not written (status Suppressed). Ingest
//     checks the requests again after its writes, so a photo written while
//     a request runs is treated the same. A PHOTO keeps the bibs hidden
//     from it (never shown), so a delete after a hide still finds it, and a
//     stale index entry never makes a delete take a photo that does not
//     show the bib.
//   - Newest first means the same in every search: by the ulid's time,
//     which is createdAt (ingest refuses a createdAt that differs from the
//     ulid's time, and mints a missing ulid at createdAt). The gallery and
//     bib search order by ulid (SK, GSI1SK); the photographer search by
//     createdAt (GSI2SK), and without an event it merges one GSI2 stream
//     per event the photographer is assigned to (at most MaxSearchEvents)
//     into one timeline, ties broken by ulid. Its page costs one Query per
//     event that still has photos, every event on the first page.
//   - A photographer's new handle or display name is copied to their PHOTO
//     items by a resumable walk of GSI2 (SyncPhotographer), and Reconcile
//     reports and repairs any copy that drifted from the truth.
//
// Errors are the package's sentinels (ErrNotFound, ErrInvalid, ErrConflict,
// ErrCursor, ErrForbidden), checked with errors.Is; invalid input is a
// *ValidationError naming each bad field.
package photo
