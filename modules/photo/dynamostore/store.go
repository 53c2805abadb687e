package dynamostore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// Store implements photo's DynamoDB ports on a PhotoService table.
type Store struct {
	table  *ddb.Table
	photos *ddb.Entity[PhotoItem]
	bibs   *ddb.Entity[BibItem]
}

var (
	_ photo.IngestIndex       = (*Store)(nil)
	_ photo.PhotographerIndex = (*Store)(nil)
	_ photo.SearchIndex       = (*Store)(nil)
	_ photo.ProfileIndex      = (*Store)(nil)
	_ photo.RemovalIndex      = (*Store)(nil)
	_ photo.BibCounter        = (*Store)(nil)
)

// New returns a Store on table, whose schema must be Schema.
func New(table *ddb.Table) *Store {
	return &Store{
		table:  table,
		photos: ddb.NewEntity(table, PhotoType, photoItemKey, "GSI2"),
		bibs:   ddb.NewEntity(table, BibType, bibItemKey, "GSI1"),
	}
}

// view is one organizer's view of the table.
type view struct {
	t      *ddb.Table
	photos *ddb.Entity[PhotoItem]
	bibs   *ddb.Entity[BibItem]
}

func (s *Store) scope(org string) view {
	t := s.table.Scope(TenantAttribute, org)
	return view{t: t, photos: s.photos.In(t), bibs: s.bibs.In(t)}
}

// translate maps SDK errors to the domain's.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ddb.ErrCursor):
		return fmt.Errorf("%w: %v", photo.ErrCursor, err)
	case errors.Is(err, ddb.ErrNotFound):
		return fmt.Errorf("%w: %v", photo.ErrNotFound, err)
	}
	return err
}

// Create writes a photo and its BIB_INDEX items in one transaction, with a
// put-if-absent on the PHOTO.
func (s *Store) Create(ctx context.Context, p *photo.Photo) (photo.WriteResult, error) {
	v := s.scope(p.OrgID)
	pi := toPhotoItem(p)
	ops := []*ddb.Op{v.photos.Create(pi).Label("photo")}
	for _, b := range bibItems(pi) {
		ops = append(ops, v.bibs.Put(b).Label("bib "+b.Bib))
	}
	// DB.Transact retries cancellations caused only by a concurrent
	// transaction (TransactionConflict).
	err := s.table.DB().Transact(ctx, ops...)
	if err == nil {
		return photo.WriteResult{Status: photo.Created, Photo: pi.toPhoto()}, nil
	}
	var te *ddb.TxError
	if errors.As(err, &te) {
		if r := te.Reason("photo"); r != nil {
			existing, gerr := s.existing(ctx, v, pi, r)
			if gerr != nil {
				return photo.WriteResult{}, gerr
			}
			return photo.WriteResult{Status: photo.Exists, Photo: existing}, nil
		}
	}
	return photo.WriteResult{}, fmt.Errorf("dynamostore: create photo %s: %w", p.ULID, err)
}

// existing decodes the photo a failed put-if-absent found, reading it if the
// cancellation reason did not carry it.
func (s *Store) existing(ctx context.Context, v view, pi *PhotoItem, r *ddb.TxReason) (*photo.Photo, error) {
	if r.Item != nil {
		var it PhotoItem
		if err := r.Decode(&it); err == nil {
			return it.toPhoto(), nil
		}
	}
	it, err := v.photos.GetStrong(ctx, photoItemKey(pi))
	if err != nil {
		return nil, translate(err)
	}
	return it.toPhoto(), nil
}

// CreateBatch writes photos of one organizer with batch writes, each PHOTO
// after its BIB_INDEX items, as its commit record (docs/photo.md says how
// each photo stays atomic to readers). Calls:
// ⌈n/100⌉ BatchGetItem, ⌈bibs/25⌉ BatchWriteItem (plus retries of
// unprocessed items), then one conditional PutItem per new photo,
// batchPutConcurrency at a time.
func (s *Store) CreateBatch(ctx context.Context, org string, ps []*photo.Photo) ([]photo.WriteResult, error) {
	v := s.scope(org)
	out := make([]photo.WriteResult, len(ps))
	items := make([]*PhotoItem, len(ps))
	keys := make([]ddb.Key, len(ps))
	for i, p := range ps {
		if p.OrgID != org {
			return nil, fmt.Errorf("dynamostore: photo %s names organizer %q in a batch of %q", p.ULID, p.OrgID, org)
		}
		items[i] = toPhotoItem(p)
		keys[i] = photoItemKey(items[i])
	}
	// Idempotency: photos that exist are not written again.
	have, err := v.photos.BatchGet(ctx, keys)
	if err != nil {
		return nil, translate(err)
	}
	for i := range items {
		if have[i] != nil {
			out[i] = photo.WriteResult{Status: photo.Exists, Photo: have[i].toPhoto()}
		}
	}
	bibPuts, owner, err := v.bibPuts(items, have)
	if err != nil {
		return nil, err
	}
	failed := map[int]error{}
	// 1. Every BIB_INDEX item.
	if len(bibPuts) > 0 {
		if err := v.t.BatchWrite(ctx, bibPuts, nil); err != nil {
			if err := markFailed(err, owner, failed); err != nil {
				return nil, err
			}
		}
	}
	// 2. The PHOTO of each photo whose index items are all in, with a
	// put-if-absent, a few at a time. The PHOTO is the commit record and
	// its condition lets exactly one of concurrent posts of a ulid win; a
	// post that loses reports Exists with the stored photo and takes back
	// the index entries it wrote that the stored photo does not have.
	// Which photos to commit is decided before any goroutine starts; each
	// goroutine writes only its own slots.
	var todo []int
	for i := range items {
		if have[i] == nil && failed[i] == nil {
			todo = append(todo, i)
		}
	}
	storedBy, errBy := s.commitAll(ctx, v, items, todo)
	for _, i := range todo {
		switch {
		case errBy[i] != nil:
			failed[i] = errBy[i]
		case storedBy[i] != nil:
			have[i] = storedBy[i]
			out[i] = photo.WriteResult{Status: photo.Exists, Photo: storedBy[i].toPhoto()}
		}
	}
	for i, pi := range items {
		switch {
		case have[i] != nil:
		case failed[i] != nil:
			out[i] = photo.WriteResult{Status: photo.Failed, Err: failed[i]}
		default:
			out[i] = photo.WriteResult{Status: photo.Created, Photo: pi.toPhoto()}
		}
	}
	return out, nil
}

// bibPuts marshals the BIB_INDEX items of the photos that do not exist
// yet (have[i] nil), and returns which photo each item's key belongs to.
func (v view) bibPuts(items, have []*PhotoItem) (puts []ddb.Item, owner map[ddb.Key]int, err error) {
	owner = map[ddb.Key]int{}
	for i, pi := range items {
		if have[i] != nil {
			continue
		}
		for _, b := range bibItems(pi) {
			it, err := v.bibs.Marshal(b)
			if err != nil {
				return nil, nil, err
			}
			owner[bibItemKey(b)] = i
			puts = append(puts, it)
		}
	}
	return puts, owner, nil
}

// markFailed records in failed the photos (by owner) whose items a batch
// write left unwritten; an error other than a ddb.BatchError is returned
// as is.
func markFailed(err error, owner map[ddb.Key]int, failed map[int]error) error {
	var be *ddb.BatchError
	if !errors.As(err, &be) {
		return err
	}
	for _, it := range be.Puts {
		if i, ok := owner[itemKey(it)]; ok {
			failed[i] = fmt.Errorf("dynamostore: batch write did not complete: %w", err)
		}
	}
	return nil
}

// commitAll commits the photos items[i] for each i of todo,
// batchPutConcurrency at a time; each goroutine writes only its own
// slots of the stored photo (when another post won) and the error.
func (s *Store) commitAll(ctx context.Context, v view, items []*PhotoItem, todo []int) (storedBy []*PhotoItem, errBy []error) {
	storedBy = make([]*PhotoItem, len(items))
	errBy = make([]error, len(items))
	var wg sync.WaitGroup
	sem := make(chan struct{}, batchPutConcurrency)
	for _, i := range todo {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			storedBy[i], errBy[i] = s.commit(ctx, v, items[i])
		})
	}
	wg.Wait()
	return storedBy, errBy
}

// batchPutConcurrency bounds CreateBatch's PHOTO puts in flight: a batch
// of 100 new photos commits in about 7 round trips.
const batchPutConcurrency = 16

// commit puts a batch photo's PHOTO if absent. If another post of the ulid
// won, it returns the stored item after repairing the index entries this
// post wrote: those for bibs the stored photo lacks are deleted, those it
// shares are rewritten from the stored photo (they differ only if its
// createdAt does). Every losing post repairs after its own writes, so the
// last write to each entry agrees with the stored photo.
func (s *Store) commit(ctx context.Context, v view, pi *PhotoItem) (*PhotoItem, error) {
	// A put on a photo inside a transaction in flight (a single-photo
	// create, a delete, a privacy change) is retried by the SDK.
	err := v.photos.Create(pi).Run(ctx)
	var ce *ddb.ConditionError
	if !errors.As(err, &ce) || !ce.Exists() {
		if err != nil {
			return nil, fmt.Errorf("dynamostore: create photo %s: %w", pi.ULID, translate(err))
		}
		return nil, nil
	}
	var stored PhotoItem
	if err := ce.Decode(&stored); err != nil {
		return nil, fmt.Errorf("dynamostore: photo %s: decode the stored item: %w", pi.ULID, err)
	}
	// Each of this post's bibs is either deleted or rewritten, so the repair
	// is at most MaxBibs operations: one transaction.
	var ops []*ddb.Op
	for _, b := range bibItems(pi) {
		if !slices.Contains(stored.Bibs, b.Bib) {
			ops = append(ops, v.bibs.Delete(bibItemKey(b)))
		}
	}
	if stored.CreatedAt != pi.CreatedAt {
		for _, b := range bibItems(&stored) {
			if slices.Contains(pi.Bibs, b.Bib) {
				ops = append(ops, v.bibs.Put(b))
			}
		}
	}
	if len(ops) > 0 {
		// The photo exists either way, so a failed repair is not this
		// post's failure: bib search skips the entries for bibs the photo
		// does not list, and a shared entry only sorts by another time.
		if err := s.table.DB().Transact(ctx, ops...); err != nil {
			slog.Default().Warn("dynamostore: could not repair the index entries of a post that lost to another post of its ulid",
				"ulid", pi.ULID, "err", err)
		}
	}
	return &stored, nil
}

// itemKey extracts the primary key of a raw item.
func itemKey(it ddb.Item) ddb.Key {
	str := func(a string) string {
		if v, ok := it[a].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	return ddb.Key{PK: str(Schema.PK), SK: str(Schema.SK)}
}

// Get reads one photo.
func (s *Store) Get(ctx context.Context, org, event, ulid string) (*photo.Photo, error) {
	it, err := s.scope(org).photos.Get(ctx, PhotoKey(org, event, ulid))
	if err != nil {
		if errors.Is(err, ddb.ErrNotFound) {
			return nil, photo.NotFound("photo", ulid)
		}
		return nil, err
	}
	return it.toPhoto(), nil
}

func toPage(items []*PhotoItem, cursor string) photo.Page {
	p := photo.Page{Photos: make([]*photo.Photo, 0, len(items)), Cursor: cursor}
	for _, it := range items {
		p.Photos = append(p.Photos, it.toPhoto())
	}
	return p
}

// Gallery lists an event's photos newest first: the base table's partition
// with begins_with(SK, "PHOTO#"), descending (ULIDs sort by time).
func (s *Store) Gallery(ctx context.Context, org, event string, r photo.PageRequest) (photo.Page, error) {
	v := s.scope(org)
	pg, err := v.photos.Query("", EventPK.Build(org, event)).BeginsWith(PhotoSK.Prefix()).
		Desc().Limit(r.Limit).After(r.Cursor).Page(ctx)
	if err != nil {
		return photo.Page{}, translate(err)
	}
	return toPage(pg.Items, pg.Cursor), nil
}

// ByBib lists the photos showing a bib, newest first: one Query of GSI1 for
// a page of BIB_INDEX items, then one BatchGetItem per 100 of their PHOTO
// items, in the index's order. A BIB_INDEX whose PHOTO is absent (a batch
// write that did not complete) or does not list the bib (left by a batch
// post that lost to another post of the ulid and died before repairing;
// see commit) is skipped.
func (s *Store) ByBib(ctx context.Context, q photo.BibQuery, r photo.PageRequest) (photo.Page, error) {
	v := s.scope(q.Org)
	pg, err := v.bibs.Query("GSI1", BibGSI1PK.Build(q.Event, q.Bib)).Desc().Limit(r.Limit).After(r.Cursor).Page(ctx)
	if err != nil {
		return photo.Page{}, translate(err)
	}
	keys := make([]ddb.Key, len(pg.Items))
	for i, b := range pg.Items {
		keys[i] = PhotoKey(b.OrgID, b.EventID, b.ULID)
	}
	photos, err := v.photos.BatchGet(ctx, keys)
	if err != nil {
		return photo.Page{}, translate(err)
	}
	return toPage(slices.DeleteFunc(photos, func(p *PhotoItem) bool { return p == nil || !slices.Contains(p.Bibs, q.Bib) }), pg.Cursor), nil
}

// ByPhotographer lists a photographer's photos in q.Events newest first:
// GSI2 narrowed to each event with begins_with(GSI2SK, "EVT#{eventId}#")
// is one stream in createdAt order, and a ddb.Merge of the streams makes
// them one timeline (ties broken by ulid), with one cursor for all. A
// page costs one Query per event that still has photos (every event on
// the first page) and reads up to events × (limit+1) items.
//
// With no events it reads the whole GSI2 partition in index order (by
// event, then createdAt): one Query a page, for walks over every photo.
func (s *Store) ByPhotographer(ctx context.Context, q photo.PhotographerQuery, r photo.PageRequest) (photo.Page, error) {
	v := s.scope(q.Org)
	if len(q.Events) == 0 {
		pg, err := v.photos.Query("GSI2", PhotogGSI2PK.Build(q.Photographer)).Desc().Limit(r.Limit).After(r.Cursor).Page(ctx)
		if err != nil {
			return photo.Page{}, translate(err)
		}
		return toPage(pg.Items, pg.Cursor), nil
	}
	qs := make([]*ddb.Query[PhotoItem], len(q.Events))
	for i, ev := range q.Events {
		qs[i] = v.photos.Query("GSI2", PhotogGSI2PK.Build(q.Photographer)).BeginsWith(PhotogGSI2SK.Prefix(ev)).Desc()
	}
	pg, err := ddb.NewMerge(newestPhoto, qs...).Limit(r.Limit).After(r.Cursor).Page(ctx)
	if err != nil {
		return photo.Page{}, translate(err)
	}
	return toPage(pg.Items, pg.Cursor), nil
}

// newestPhoto orders PHOTO items newest first: by createdAt (the ulid's
// time, in GSI2SK), then by ulid, as the gallery's SK orders them.
func newestPhoto(a, b *PhotoItem) int {
	return cmp.Or(cmp.Compare(b.CreatedAt, a.CreatedAt), cmp.Compare(b.ULID, a.ULID))
}

// ByTime lists the photos of q's streams by corrected capture time,
// earliest first: each stream is one photographer's GSI2 partition
// narrowed to the event and the stream's time range with
// BETWEEN EVT#{eventId}#TIME#{from} AND EVT#{eventId}#TIME#{to}, and a
// ddb.Merge of the streams makes them one timeline, ordered by createdAt
// plus the stream's clock offset (ties broken by ulid), with one cursor
// for all. A page costs one Query per stream that still has photos (every
// stream on the first page) and reads up to streams × (limit+1) items.
func (s *Store) ByTime(ctx context.Context, q photo.TimeQuery, r photo.PageRequest) (photo.Page, error) {
	v := s.scope(q.Org)
	clock := make(map[string]time.Duration, len(q.Streams))
	qs := make([]*ddb.Query[PhotoItem], len(q.Streams))
	for i, st := range q.Streams {
		clock[st.Photographer] = st.Clock
		qs[i] = v.photos.Query("GSI2", PhotogGSI2PK.Build(st.Photographer)).
			Between(PhotogGSI2SK.Build(q.Event, photo.ISOMillis(st.From)), PhotogGSI2SK.Build(q.Event, photo.ISOMillis(st.To)))
	}
	corrected := func(it *PhotoItem) time.Time { return parseTime(it.CreatedAt).Add(clock[it.PhotographerID]) }
	earliest := func(a, b *PhotoItem) int {
		return cmp.Or(corrected(a).Compare(corrected(b)), cmp.Compare(a.ULID, b.ULID))
	}
	pg, err := ddb.NewMerge(earliest, qs...).Limit(r.Limit).After(r.Cursor).Page(ctx)
	if err != nil {
		return photo.Page{}, translate(err)
	}
	return toPage(pg.Items, pg.Cursor), nil
}

// A search by passing time must fit in one merge.
var _ [ddb.MaxMergeStreams - photo.MaxPositions]struct{}

// A search across events must fit in one merge.
var _ [ddb.MaxMergeStreams - photo.MaxSearchEvents]struct{}

// SetPhotographer copies a photographer's profile onto one PHOTO, on
// condition that the photo exists and is still theirs.
func (s *Store) SetPhotographer(ctx context.Context, p *photo.Photo, ph photo.Photographer, now time.Time) (bool, error) {
	v := s.scope(p.OrgID)
	err := v.photos.Update(PhotoKey(p.OrgID, p.EventID, p.ULID)).
		Set("photographerHandle", ph.Handle).
		Set("photographerDisplayName", ph.DisplayName).
		Set("updatedAt", photo.ISOMillis(now)).Add("version", 1).
		If(expression.Name("photographerId").Equal(expression.Value(ph.ID))).
		Label("sync photographer").Run(ctx)
	if errors.Is(err, ddb.ErrConditionFailed) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// unchanged is the optimistic check that a PHOTO is as it was read: its
// version has not moved.
func unchanged(it *PhotoItem) expression.ConditionBuilder {
	if it.Version == 0 {
		return expression.AttributeNotExists(expression.Name("version"))
	}
	return expression.Name("version").Equal(expression.Value(it.Version))
}

// Delete deletes a photo and its BIB_INDEX items in one transaction, on
// condition that the photo did not change since it was read (else it
// re-reads and retries: ddb.DB.RetryConditional).
func (s *Store) Delete(ctx context.Context, org, event, ulid string) (*photo.Photo, error) {
	v := s.scope(org)
	var it *PhotoItem
	err := s.table.DB().RetryConditional(ctx, func() error {
		var err error
		if it, err = v.photos.GetStrong(ctx, PhotoKey(org, event, ulid)); err != nil {
			return err
		}
		return s.deletePhoto(ctx, v, it, "")
	})
	switch {
	case errors.Is(err, ddb.ErrNotFound):
		return nil, photo.NotFound("photo", ulid)
	case err != nil:
		return nil, fmt.Errorf("dynamostore: delete photo %s: %w", ulid, err)
	}
	return it.toPhoto(), nil
}

// deletePhoto deletes a PHOTO (if unchanged) and the BIB_INDEX items of its
// bibs and of extra (a bib whose index entry points at it), atomically.
func (s *Store) deletePhoto(ctx context.Context, v view, it *PhotoItem, extra string) error {
	del := v.photos.Delete(photoItemKey(it)).If(unchanged(it)).If(expression.AttributeExists(expression.Name(Schema.PK)))
	if extra != "" {
		// The photo at this key must show the bib or have had it hidden:
		// the item read may since have been deleted and its ulid re-posted
		// (a new item has no version either).
		del.If(expression.Contains(expression.Name("bibs"), extra).Or(expression.Contains(expression.Name("hiddenBibs"), extra)))
	}
	ops := []*ddb.Op{del.Label("photo")}
	bibs := it.Bibs
	if extra != "" && !slices.Contains(bibs, extra) {
		bibs = append(slices.Clone(bibs), extra)
	}
	for _, b := range bibs {
		ops = append(ops, v.bibs.Delete(BibKey(it.OrgID, it.EventID, b, it.ULID)))
	}
	return s.table.DB().Transact(ctx, ops...)
}

// RemoveBib applies a privacy request in two passes. First the photos:
// the event's partition, read strongly consistently (the index is
// eventually consistent, and a hide removes index entries), with every
// PHOTO that lists the bib (and, to delete, every PHOTO it was hidden from)
// changed in one transaction each: the bib struck (its BIB_INDEX deleted,
// PHOTO.bibs and bibCount updated, the bib kept in hiddenBibs) or the photo
// deleted with all its index entries. Then the bib's GSI1 entries, to drop
// any left without a photo that lists the bib. Reads cost a pass over the
// event's photos: fine for a rare request, not for a request path.
func (s *Store) RemoveBib(ctx context.Context, r photo.PrivacyRequest, now time.Time) (int, error) {
	org, event, bib, mode := r.Org, r.Event, r.Bib, r.Mode
	v := s.scope(org)
	f := expression.Contains(expression.Name("bibs"), bib)
	if mode == photo.DeleteMode {
		f = f.Or(expression.Contains(expression.Name("hiddenBibs"), bib))
	}
	changed := 0
	q := v.photos.Query("", EventPK.Build(org, event)).BeginsWith(PhotoSK.Prefix()).Filter(f).Consistent()
	for it, err := range q.All(ctx) {
		if err != nil {
			return changed, translate(err)
		}
		ok, err := s.removeBibFrom(ctx, v, &BibItem{OrgID: org, EventID: event, Bib: bib, ULID: it.ULID}, it, mode, now)
		if err != nil {
			return changed, err
		}
		if ok {
			changed++
		}
	}
	for b, err := range v.bibs.Query("GSI1", BibGSI1PK.Build(event, bib)).All(ctx) {
		if err != nil {
			return changed, translate(err)
		}
		it, err := v.photos.GetStrong(ctx, PhotoKey(b.OrgID, b.EventID, b.ULID))
		if errors.Is(err, ddb.ErrNotFound) {
			it = nil
		} else if err != nil {
			return changed, translate(err)
		}
		ok, err := s.removeBibFrom(ctx, v, b, it, mode, now)
		if err != nil {
			return changed, err
		}
		if ok {
			changed++
		}
	}
	return changed, nil
}

// ApplyPrivacy implements photo.IngestIndex.
func (s *Store) ApplyPrivacy(ctx context.Context, r photo.PrivacyRequest, ulid string, now time.Time) (*photo.Photo, bool, error) {
	org, event, bib, mode := r.Org, r.Event, r.Bib, r.Mode
	v := s.scope(org)
	k := PhotoKey(org, event, ulid)
	get := func() (*PhotoItem, error) {
		it, err := v.photos.GetStrong(ctx, k)
		if errors.Is(err, ddb.ErrNotFound) {
			return nil, nil
		}
		return it, translate(err)
	}
	it, err := get()
	if err != nil || it == nil {
		// No photo: nothing to apply (RemoveBib's walk drops index entries
		// without a photo).
		return nil, false, err
	}
	changed, err := s.removeBibFrom(ctx, v, &BibItem{OrgID: org, EventID: event, Bib: bib, ULID: ulid}, it, mode, now)
	if err != nil {
		return nil, false, err
	}
	if changed && mode == photo.DeleteMode {
		return nil, true, nil
	}
	// The photo as it is now: this write, or one that raced it (the
	// request's own walk), may have changed it.
	if it, err = get(); err != nil {
		return nil, false, err
	}
	if it == nil {
		return nil, false, nil
	}
	return it.toPhoto(), false, nil
}

// removeBibFrom applies mode to one photo (it; nil if absent) for its index
// entry b, reading the photo again and retrying when it changed under the
// write (ddb.DB.RetryConditional). It reports whether it changed the photo.
func (s *Store) removeBibFrom(ctx context.Context, v view, b *BibItem, it *PhotoItem, mode string, now time.Time) (bool, error) {
	bk := bibItemKey(b)
	changed, reread := false, false
	err := s.table.DB().RetryConditional(ctx, func() error {
		if reread {
			// The photo changed under us: read it again.
			var err error
			if it, err = v.photos.GetStrong(ctx, photoItemKey(it)); errors.Is(err, ddb.ErrNotFound) {
				it = nil
			} else if err != nil {
				return err
			}
		}
		reread, changed = true, false
		switch {
		case it == nil:
			// An index entry without its PHOTO: just drop it.
			return v.bibs.Delete(bk).Run(ctx)
		case !slices.Contains(it.Bibs, b.Bib) && (mode != photo.DeleteMode || !slices.Contains(it.HiddenBibs, b.Bib)):
			// A stale entry (left by a failed or lost write): the photo
			// neither shows the bib nor had it hidden. Drop only the entry.
			return v.bibs.Delete(bk).Run(ctx)
		case mode == photo.DeleteMode:
			changed = true
			return s.deletePhoto(ctx, v, it, b.Bib)
		}
		changed = true
		rest := slices.DeleteFunc(slices.Clone(it.Bibs), func(x string) bool { return x == b.Bib })
		hidden := it.HiddenBibs
		if !slices.Contains(hidden, b.Bib) {
			hidden = append(slices.Clone(hidden), b.Bib)
		}
		return s.table.DB().Transact(ctx,
			v.bibs.Delete(bk),
			v.photos.Update(photoItemKey(it)).
				Set("bibs", rest).Set("bibCount", len(rest)).Set("hiddenBibs", hidden).
				Set("updatedAt", photo.ISOMillis(now)).Add("version", 1).
				// The bibs written are derived from those read: the same
				// item must still hold them (not a re-post of the ulid).
				If(unchanged(it)).If(expression.Name("bibs").Equal(expression.Value(nonNil(it.Bibs)))).
				Label("photo").Op())
	})
	if err != nil {
		return false, fmt.Errorf("dynamostore: remove bib %s from photo %s: %w", b.Bib, b.ULID, err)
	}
	return changed, nil
}
