package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/pacerhq/pacer/modules/photo"
)

// Trigram thresholds of the name search: a name matches when its key's
// trigram similarity to the query's is at least similarityThreshold, or
// when the query is that similar to a stretch of the name (word
// similarity, for one word of a longer name).
const (
	similarityThreshold     = "0.25"
	wordSimilarityThreshold = "0.6"
)

// findRunners ranks an event's runners against a query key (migration
// 00005's name_key: lower(normalize(name, NFD))): the exact name first,
// then names starting with the query, then by trigram similarity, then by
// bib. Runners whose bib is hidden never appear. The prefix arms match
// short queries that have too few trigrams (a two-syllable Hangul name, a
// half-typed one).
const findRunners = `
SELECT r.event_id, r.bib, r.name
FROM event_runners r
WHERE r.event_id = $1
  AND (r.name_key % ` + queryKey + ` OR ` + queryKey + ` <% r.name_key
       OR r.name_key LIKE ` + queryPattern + ` || '%' OR r.name_key LIKE '% ' || ` + queryPattern + ` || '%')
  AND NOT EXISTS (SELECT 1 FROM hidden_bibs h WHERE h.event_id = r.event_id AND h.bib = r.bib)
ORDER BY r.name_key = ` + queryKey + ` DESC,
         r.name_key LIKE ` + queryPattern + ` || '%' DESC,
         greatest(similarity(r.name_key, ` + queryKey + `), word_similarity(` + queryKey + `, r.name_key)) DESC,
         r.bib
LIMIT $3 OFFSET $4`

// queryKey is the query's key, as name_key is the name's; queryPattern is
// it with LIKE's special characters escaped. They are written out in
// findRunners (not computed once in a CTE) so that the planner sees
// constants it can match against the trigram index.
const (
	queryKey     = `lower(normalize($2::text, NFD))`
	queryPattern = `replace(replace(replace(` + queryKey + `, '\', '\\'), '%', '\%'), '_', '\_')`
)

// FindRunners finds an event of q.Org's runners by name, best first (see
// findRunners). The thresholds are set for this statement only: the batch
// runs as one implicit transaction, so set_config(..., true) lasts until
// its end.
func (s *Store) FindRunners(ctx context.Context, q photo.NameQuery) ([]photo.Runner, error) {
	if _, err := s.Event(ctx, q.Org, q.Event); err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('pg_trgm.similarity_threshold', $1, true), set_config('pg_trgm.word_similarity_threshold', $2, true)`,
		similarityThreshold, wordSimilarityThreshold)
	b.Queue(findRunners, q.Event, q.Name, q.Limit, q.Offset)
	br := s.pool.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, translate(err, "runners", q.Event)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, translate(err, "runners", q.Event)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[photo.Runner])
	if err != nil {
		return nil, translate(err, "runners", q.Event)
	}
	return out, br.Close()
}
