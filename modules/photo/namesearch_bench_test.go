package photo_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/modules/photo/phototest"
)

// benchRunners is the event size of BenchmarkNameSearch.
const benchRunners = 50_000

// benchNames makes n runner names, three in four Hangul (a surname and a
// two-syllable given name, as most Korean names are), the rest Latin.
func benchNames(n int, rnd *rand.Rand) []string {
	surnames := []rune("김이박최정강조윤장임한오서신권황안송류홍")
	given := []rune("민수지서연현우준영은하도윤재예진성호유경혜승태")
	first := []string{"James", "Mary", "John", "Anna", "David", "Sarah", "Michael", "Laura", "Daniel", "Emma", "Kevin", "Grace"}
	last := []string{"Smith", "Kim", "Lee", "Park", "Brown", "Garcia", "Miller", "Davis", "Wilson", "Taylor", "Moore", "Clark"}
	out := make([]string, n)
	for i := range out {
		if i%4 < 3 {
			out[i] = string([]rune{surnames[rnd.IntN(len(surnames))], given[rnd.IntN(len(given))], given[rnd.IntN(len(given))]})
		} else {
			out[i] = first[rnd.IntN(len(first))] + " " + last[rnd.IntN(len(last))] + fmt.Sprintf(" %c", 'A'+rnd.IntN(26))
		}
	}
	return out
}

// BenchmarkNameSearch reports the p95 of one Postgres name search (the
// ranked page of 20, pgstore.FindRunners) over an event of 50,000
// runners, for queries as runners type them: whole names with a typo,
// two-syllable prefixes, Latin names. Run it with
//
//	go test -run '^$' -bench NameSearch -benchtime 300x ./modules/photo
func BenchmarkNameSearch(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	k := phototest.New(ctx, b)
	dir := k.Directory
	if _, err := dir.CreateOrganizer(ctx, photo.Organizer{ID: "o", Name: "Org"}); err != nil {
		b.Fatal(err)
	}
	if _, err := dir.CreateEvent(ctx, "o", photo.Event{ID: "e", Name: "Race"}); err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	names := benchNames(benchRunners, rnd)
	for start := 0; start < len(names); start += photo.MaxRunnersImport {
		var rs []photo.Runner
		for i := start; i < min(start+photo.MaxRunnersImport, len(names)); i++ {
			rs = append(rs, photo.Runner{Bib: fmt.Sprint(10000 + i), Name: names[i]})
		}
		if _, err := dir.ImportRunners(ctx, "o", "e", rs); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := k.Pool.Exec(ctx, "ANALYZE event_runners"); err != nil {
		b.Fatal(err)
	}
	queries := make([]string, 0, 300)
	for i := range cap(queries) {
		n := []rune(names[rnd.IntN(len(names))])
		switch i % 3 {
		case 0: // a typo in the last letter
			n[len(n)-1] = []rune("가나다라마바사")[rnd.IntN(7)]
		case 1: // the first two letters
			n = n[:2]
		}
		queries = append(queries, string(n))
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		rs, err := k.Truth.FindRunners(ctx, photo.NameQuery{Org: "o", Event: "e", Name: queries[i%len(queries)], Limit: photo.DefaultNamePage + 1})
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) == 0 && i%3 != 0 {
			b.Fatalf("%q found nothing", queries[i%len(queries)])
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
