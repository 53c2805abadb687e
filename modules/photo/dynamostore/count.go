package dynamostore

import (
	"context"
	"sync"
)

// countWorkers bounds the bibs CountBibs counts at once.
const countWorkers = 8

// CountBibs counts the BIB_INDEX entries of each bib of an event of org:
// one GSI1 Query per bib (more for a bib with over 1,000 photos), up to
// countWorkers at once. A bib without photos counts 0.
func (s *Store) CountBibs(ctx context.Context, org, event string, bibs []string) (map[string]int, error) {
	v := s.scope(org)
	counts := make([]int, len(bibs))
	errs := make([]error, len(bibs))
	sem := make(chan struct{}, countWorkers)
	var wg sync.WaitGroup
	for i, bib := range bibs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			for _, err := range v.bibs.Query("GSI1", BibGSI1PK.Build(event, bib)).Limit(1000).All(ctx) {
				if err != nil {
					errs[i] = translate(err)
					return
				}
				counts[i]++
			}
		}()
	}
	wg.Wait()
	out := make(map[string]int, len(bibs))
	for i, bib := range bibs {
		if errs[i] != nil {
			return nil, errs[i]
		}
		out[bib] = counts[i]
	}
	return out, nil
}
