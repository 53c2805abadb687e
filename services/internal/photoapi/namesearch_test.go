package photoapi

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pacerhq/pacer/sdk/auth"
	"github.com/pacerhq/pacer/services/internal/metrics/metricstest"
	"github.com/pacerhq/pacer/services/internal/server"
)

type nameResp struct {
	Runners []struct {
		Bib    string `json:"bib"`
		Name   string `json:"name"`
		Photos int    `json:"photos"`
	} `json:"runners"`
	NextOffset int `json:"nextOffset"`
}

func (r nameResp) bibs() []string {
	out := make([]string, len(r.Runners))
	for i, m := range r.Runners {
		out[i] = m.Bib
	}
	return out
}

// nameRunners is the entry list of the name-search tests; bib 11 shares
// 김민수's name and is hidden.
var nameRunners = [][2]string{
	{"1", "김민수"}, {"2", "김민주"}, {"3", "이서연"}, {"4", "박지훈"}, {"5", "Kim Minsu"},
	{"6", "Kim Minjun"}, {"7", "Lee Seoyeon"}, {"8", "김민"}, {"9", "Jonathan Smith"}, {"10", "김민서"},
	{"11", "김민수"}, {"12", "José Álvarez"}, {"13", "Jiyeon Lee"}, {"90", "Lee"},
}

// nameSetup creates organizer o with event e (published as given), its
// runners nameRunners, two photos of bib 1, and bib 11 hidden.
func (e *env) nameSetup(published bool, extra map[string]any) string {
	e.t.Helper()
	admin := token(e.t, "", auth.RoleAdmin)
	tok := orgToken(e.t, "o")
	e.do("POST", "/admin/organizers", 201, admin, map[string]any{"organizerId": "o", "name": "Org"})
	ev := map[string]any{"eventId": "e", "name": "Race", "published": published}
	for k, v := range extra {
		ev[k] = v
	}
	e.do("POST", "/events", 201, tok, ev)
	rs := make([]map[string]string, len(nameRunners))
	for i, r := range nameRunners {
		rs[i] = map[string]string{"bib": r[0], "name": r[1]}
	}
	e.do("POST", "/events/e/runners", 200, tok, map[string]any{"runners": rs})
	e.do("POST", "/events/e/photos", 201, tok, rec(1, "", "1", "11"))
	e.do("POST", "/events/e/photos", 201, tok, rec(2, "", "1"))
	e.do("POST", "/events/e/bibs/11/privacy", 200, tok, map[string]any{"mode": "hide"})
	return tok
}

func (e *env) names(path, name string, args ...any) nameResp {
	e.t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return decode[nameResp](e.t, body(e.do("GET", path+sep+"name="+url.QueryEscape(name), 200, args...)))
}

func TestNameSearchMatchesAndRanks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.nameSetup(false, nil)
	const path = "/events/e/runners/search"
	for _, c := range []struct {
		name, query string
		first       []string // the top of the ranking, in order
		has, hasNot []string
	}{
		{name: "exact Hangul first, then prefix by similarity", query: "김민수", first: []string{"1"}, has: []string{"2", "10"}},
		{name: "Hangul typo in the last syllable", query: "김민쑤", first: []string{"1"}},
		{name: "Hangul typo in the middle syllable", query: "김빈수", first: []string{"1"}},
		{name: "two-syllable Hangul: exact, then by prefix", query: "김민", first: []string{"8"}, has: []string{"1", "2", "10"}, hasNot: []string{"3", "4"}},
		{name: "half-typed syllable is a prefix", query: "김미", has: []string{"1", "2", "8", "10"}, hasNot: []string{"3"}},
		{name: "Latin typo", query: "Kim Minsoo", first: []string{"5"}},
		{name: "Latin, any case", query: "kim minsu", first: []string{"5"}, has: []string{"6"}},
		{name: "a word's prefix", query: "Smi", first: []string{"9"}},
		{name: "one letter: the name's prefix", query: "J", has: []string{"9", "12", "13"}, hasNot: []string{"5"}},
		{name: "one letter: a word's prefix", query: "S", has: []string{"9", "7"}, hasNot: []string{"5"}},
		{name: "exact, then the name's prefix, then a word's", query: "Lee", first: []string{"90", "7", "13"}},
		{name: "Latin typo in one word", query: "Jonathon", first: []string{"9"}},
		{name: "without accents", query: "jose alvarez", first: []string{"12"}},
		{name: "no match", query: "Zzyzx", hasNot: []string{"1", "5", "9"}},
	} {
		got := e.names(path, c.query, tok)
		bibs := got.bibs()
		if len(bibs) < len(c.first) || !slices.Equal(bibs[:len(c.first)], c.first) {
			t.Errorf("%s: %q found %v, want it to start with %v", c.name, c.query, bibs, c.first)
		}
		for _, b := range c.has {
			if !slices.Contains(bibs, b) {
				t.Errorf("%s: %q found %v, without %s", c.name, c.query, bibs, b)
			}
		}
		for _, b := range c.hasNot {
			if slices.Contains(bibs, b) {
				t.Errorf("%s: %q found %v, with %s", c.name, c.query, bibs, b)
			}
		}
		if slices.Contains(bibs, "11") {
			t.Errorf("%s: %q found the hidden bib 11: %v", c.name, c.query, bibs)
		}
	}
	// 김민 ranks the names starting with it above others, by similarity:
	// 김민 (exact), then 김민서/김민수/김민주 before anything else.
	top := e.names(path, "김민", tok).bibs()
	if len(top) < 4 || !slices.Equal(slices.Sorted(slices.Values(top[1:4])), []string{"1", "10", "2"}) {
		t.Errorf("김민 ranked %v, want 8 then 1, 10 and 2", top)
	}
	// Photo counts: bib 1 is on two photos.
	if r := e.names(path, "김민수", tok); r.Runners[0].Bib != "1" || r.Runners[0].Photos != 2 || r.Runners[0].Name != "김민수" {
		t.Errorf("김민수: %+v, want bib 1 with 2 photos", r.Runners)
	}
}

func TestNameSearchPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.nameSetup(false, nil)
	all := e.names("/events/e/runners/search?limit=50", "김", tok)
	if len(all.Runners) < 4 || all.NextOffset != 0 {
		t.Fatalf("one page: %+v", all)
	}
	var paged []string
	offset := 0
	for range 20 {
		r := e.names(fmt.Sprintf("/events/e/runners/search?limit=2&offset=%d", offset), "김", tok)
		paged = append(paged, r.bibs()...)
		if r.NextOffset == 0 {
			break
		}
		if r.NextOffset != offset+2 || len(r.Runners) != 2 {
			t.Fatalf("page at %d: %+v", offset, r)
		}
		offset = r.NextOffset
	}
	if !slices.Equal(paged, all.bibs()) {
		t.Fatalf("paged %v, one page %v", paged, all.bibs())
	}
	if slices.Contains(paged, "11") {
		t.Fatalf("hidden bib 11 found: %v", paged)
	}
	// Bad input names its field.
	for _, c := range []struct{ query, field string }{
		{"name=", "query.name"}, {"name=%20%20", "query.name"}, {"name=a%00b", "query.name"}, {"name=%E2%80%8B", "query.name"},
		{"name=a&limit=51", "query.limit"}, {"name=a&offset=1001", "query.offset"},
		{"name=" + strings.Repeat("가", 101), "query.name"},
	} {
		res := e.do("GET", "/events/e/runners/search?"+c.query, 422, tok)
		if ct := res.Header().Get("Content-Type"); ct != "application/problem+json" || !strings.Contains(body(res), c.field) {
			t.Errorf("%s: %s %s, want a problem naming %s", c.query, ct, body(res), c.field)
		}
	}
	// Another organizer's event is not found.
	e.do("GET", "/events/e/runners/search?name=a", 404, orgToken(t, "other"))
}

func TestPublicNameSearchIsOptIn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.nameSetup(true, nil)
	const path = "/public/events/e/runners/search?name=" + "%EA%B9%80%EB%AF%BC%EC%88%98" // 김민수
	// Off by default: 404, as for an unpublished event, so the public
	// cannot tell a closed search from a missing event.
	e.do("GET", path, 404)
	e.do("PATCH", "/events/e", 200, tok, map[string]any{"publicNameSearch": true})
	got := decode[nameResp](t, body(e.do("GET", path, 200)))
	if len(got.Runners) == 0 || got.Runners[0].Bib != "1" || got.Runners[0].Photos != 2 || slices.Contains(got.bibs(), "11") {
		t.Fatalf("public: %+v", got)
	}
	raw := body(e.do("GET", path, 200))
	for _, leak := range []string{"eventId", "organizerId", "createdAt", "rawKey"} {
		if strings.Contains(raw, leak) {
			t.Errorf("public name search shows %s: %s", leak, raw)
		}
	}
	// Unpublished: 404 again, switch or not.
	e.do("PATCH", "/events/e", 200, tok, map[string]any{"published": false})
	e.do("GET", path, 404)
	e.do("GET", path, 404, tok) // a token changes nothing on the public route
}

func TestPublicNameSearchRateLimit(t *testing.T) {
	t.Parallel()
	m := newMetrics(&aws.Config{}, "T", nil)
	limits, err := LimitSettings{NameSearchAddress: "3/m", LimitSharing: server.LimitSharing{Replicas: 1, TrustedProxies: "127.0.0.1/32"}}.Limits(m.limited.Refused)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(d *Deps) { d.Limits = limits })
	e.nameSetup(true, map[string]any{"publicNameSearch": true})
	for range 3 {
		e.do("GET", "/public/events/e/runners/search?name=Kim", 200)
	}
	res := e.do("GET", "/public/events/e/runners/search?name=Kim", 429)
	if res.Header().Get("Retry-After") == "" || res.Header().Get("Content-Type") != "application/problem+json" || !strings.Contains(body(res), server.ProblemBase+server.RateLimitedProblem) {
		t.Fatalf("429: %v %s", res.Header(), body(res))
	}
	// Another address (behind the trusted proxy) has its own budget; the
	// organizers' search none.
	e.do("GET", "/public/events/e/runners/search?name=Kim", 200, "X-Forwarded-For: 203.0.113.9")
	e.do("GET", "/events/e/runners/search?name=Kim", 200, orgToken(t, "o"))
	if n := metricstest.Gather(t, m.reg).Value("pacer_rate_limited_total", "class", nameSearchClass, "by", "address"); n != 1 {
		t.Errorf("pacer_rate_limited_total{name-search, address} = %v, want 1", n)
	}
}

// The public photo searches, by bib and by passing time, share one
// budget per client address: past it, 429 rate-limited with Retry-After,
// counted; another address has its own; organizers are not limited.
func TestPublicSearchRateLimit(t *testing.T) {
	t.Parallel()
	m := newMetrics(&aws.Config{}, "T", nil)
	limits, err := LimitSettings{PublicSearchAddress: "3/m", LimitSharing: server.LimitSharing{Replicas: 1, TrustedProxies: "127.0.0.1/32"}}.Limits(m.limited.Refused)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, func(d *Deps) { d.Limits = limits })
	e.setup("o1", "e1", "p1", true)
	for _, path := range []string{"/public/events/e1/bibs/1000/photos", "/public/events/e1/bibs/1000/nearby-photos", "/public/events/e1/bibs/1001/photos"} {
		e.do("GET", path, 200)
	}
	res := e.do("GET", "/public/events/e1/bibs/1000/nearby-photos", 429)
	if res.Header().Get("Retry-After") == "" || !strings.Contains(body(res), server.ProblemBase+server.RateLimitedProblem) {
		t.Fatalf("429: %v %s", res.Header(), body(res))
	}
	e.do("GET", "/public/events/e1/bibs/1000/photos", 200, "X-Forwarded-For: 203.0.113.9")
	e.do("GET", "/events/e1/bibs/1000/photos", 200, orgToken(t, "o1"))
	if n := metricstest.Gather(t, m.reg).Value("pacer_rate_limited_total", "class", publicSearchClass, "by", "address"); n != 1 {
		t.Errorf("pacer_rate_limited_total{public-search, address} = %v, want 1", n)
	}
}
