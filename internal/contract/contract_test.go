package contract_test

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pacerhq/pacer/internal/repo"
	"github.com/pacerhq/pacer/modules/asyncevent"
	asyncstore "github.com/pacerhq/pacer/modules/asyncevent/dynamostore"
	photostore "github.com/pacerhq/pacer/modules/photo/dynamostore"
	"github.com/pacerhq/pacer/sdk/ddb"
)

// set is the values of one field, or one item's attribute names.
type set = map[string]bool

// seedValues are values one seed file gives.
type seedValues struct {
	file   string // in the seeds' folder
	values []string
}

// seedSets are the seeds' values of each set the page can name, each with
// the file that gives it. The seeds are fixed; TestSeedValuesAreTheSeeds
// checks these against them where they are at hand. "attr.<ENTITY>" is
// the attribute names the seeds give an item (its key attributes
// included).
var seedSets = map[string][]seedValues{
	"status":       {{"async-event-table.md", []string{"RECEIVED", "QUEUED", "PROCESSING", "SUCCEEDED", "REJECTED", "FAILED_FINAL"}}},
	"resultCode":   {{"async-event-table.md", []string{"SUCCESS", "REJECTED_CAPACITY", "REJECTED_DUPLICATE", "REJECTED_LOTTERY_LOSE", "FAILED_INGEST_ENQUEUE", "FAILED_WORKER", "FAILED_VALIDATION", "FAILED_SERDE"}}},
	"failureClass": {{"async-event-table.md", []string{"RETRYABLE", "NON_RETRYABLE"}}},
	"uiPhase":      {{"async-event-table.md", []string{"COLLECTING", "DRAWING", "ANNOUNCED"}}},
	"uiResult": {
		{"async-event-table.md", []string{"PENDING", "SUCCESS", "REJECTED", "FAILED"}},
		{"access-patterns.md", []string{"SUCCESS", "REJECTED_CAPACITY", "LOTTERY_WIN", "LOTTERY_LOSE"}},
	},
	"eventStatus": {{"async-event-table.md", []string{"Open", "Closed", "Announced"}}},
	"eventType":   {{"async-event-table.md", []string{"FIRST_COME", "LOTTERY"}}},
	"errorCode": {
		{"async-event-table.md", []string{"VALIDATION_FAILED", "DDB_CONDITIONAL_FAILED", "SERDE_ERROR"}},
		{"access-patterns.md", []string{"FAILED_INGEST_ENQUEUE"}},
	},
	"entityType": {
		{"async-event-table.md", []string{"REQUEST", "IDEMPOTENCY", "CAPACITY", "STATUS_LOG"}},
		{"photoservice-schema.md", []string{"PHOTO", "BIB_INDEX"}},
	},
	"attr.REQUEST": {{"async-event-table.md", []string{"PK", "SK", "entityType", "requestId", "eventId", "userId", "eventType", "status",
		"uiPhase", "lotteryCutoffAt", "announcedAt", "uiResult", "resultCode", "requestedAt", "queuedAt", "startedAt", "finishedAt",
		"failureClass", "errorCode", "errorMessage", "idempotencyKey", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "ttl"}}},
	"attr.IDEMPOTENCY": {{"async-event-table.md", []string{"PK", "SK", "entityType", "requestId", "createdAt", "ttl"}}},
	"attr.CAPACITY":    {{"async-event-table.md", []string{"PK", "SK", "entityType", "capacityTotal", "capacityRemaining", "updatedAt"}}},
	"attr.STATUS_LOG":  {{"async-event-table.md", []string{"PK", "SK", "entityType", "fromStatus", "toStatus", "occurredAt", "message", "ttl"}}},
	// The seed's EventConfig names no entityType: Pacer's EVENT_CONFIG.
	"attr.EVENT_CONFIG": {{"async-event-table.md", []string{"PK", "SK", "eventType", "capacityTotal", "lotteryCutoffAt", "announcedAt", "status"}}},
	"attr.PHOTO": {{"photoservice-schema.md", []string{"PK", "SK", "EntityType", "ulid", "orgId", "eventId", "originalFilename", "rawKey",
		"processedKey", "s3Uri", "dimensions", "format", "size", "bibs", "bibCount", "faceIds", "faceCount", "photographerId",
		"photographerHandle", "photographerDisplayName", "GSI2PK", "GSI2SK", "createdAt", "updatedAt"}}},
	"attr.BIB_INDEX": {{"photoservice-schema.md", []string{"PK", "SK", "EntityType", "GSI1PK", "GSI1SK", "ulid", "orgId", "eventId", "bib", "createdAt"}}},
}

// seeds returns seedSets as sets.
func seeds() map[string]set {
	out := map[string]set{}
	for name, groups := range seedSets {
		out[name] = set{}
		for _, g := range groups {
			for _, v := range g.values {
				out[name][v] = true
			}
		}
	}
	return out
}

func setOf[T ~string](vs []T) set {
	s := set{}
	for _, v := range vs {
		s[string(v)] = true
	}
	return s
}

// attrs returns the attribute names of an item of type T stored in a
// table of schema: its dynamodbav names, the key and entity type
// attributes the SDK writes, and indexes' key attributes.
func attrs[T any](schema *ddb.Schema, indexes ...string) set {
	s := set{schema.PK: true, schema.SK: true, typeAttr(schema): true}
	for f := range reflect.TypeFor[T]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
		if name == "-" {
			continue
		}
		s[cmp.Or(name, f.Name)] = true
	}
	for _, n := range indexes {
		ix, _ := schema.Index(n)
		s[ix.PK], s[ix.SK] = true, true
	}
	return s
}

func typeAttr(s *ddb.Schema) string { return cmp.Or(s.TypeAttribute, "entityType") }

// codeSets are the code's values of each set the page can name.
func codeSets() map[string]set {
	a, p := &asyncstore.Schema, &photostore.Schema
	entities := setOf(asyncstore.EntityTypes)
	maps.Copy(entities, setOf(photostore.EntityTypes))
	return map[string]set{
		"status":       setOf(asyncevent.Statuses),
		"resultCode":   setOf(asyncevent.ResultCodes),
		"failureClass": setOf(asyncevent.FailureClasses),
		"uiPhase":      setOf(asyncevent.UIPhases),
		"uiResult":     setOf(asyncevent.UIResults),
		"eventStatus":  setOf(asyncevent.EventStatuses),
		"eventType":    setOf(asyncevent.EventTypes),
		"errorCode":    setOf(asyncevent.ErrorCodes),
		"entityType":   entities,
		// Every index of AsyncEventTable is on Request items only.
		"attr.REQUEST":      attrs[asyncstore.RequestItem](a, "GSI1", "GSI2", "GSI3"),
		"attr.IDEMPOTENCY":  attrs[asyncstore.LockItem](a),
		"attr.CAPACITY":     attrs[asyncstore.CapacityItem](a),
		"attr.STATUS_LOG":   attrs[asyncstore.StatusLogItem](a),
		"attr.EVENT_CONFIG": attrs[asyncstore.EventConfigItem](a),
		"attr.PHOTO":        attrs[photostore.PhotoItem](p),
		"attr.BIB_INDEX":    attrs[photostore.BibItem](p),
	}
}

// testNames returns the names of every test, fuzz test and example in
// the repository's _test.go files, as `func Name(` declares them.
func testNames(t *testing.T, root string) set {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz|Example)\w*)\(`)
	names := set{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == ".cache") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			names[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

var (
	// header is the first cell of a row table's header line.
	header = "Row"
	// columns are a row's cells, in order.
	columns = []string{"Row", "The seeds say", "Pacer does", "Why", "Pinned by", "Values"}
	rowID   = regexp.MustCompile(`^[A-Z][0-9]+$`)
	pinned  = regexp.MustCompile(`\b(?:Test|Fuzz|Example)\w*`)
	// value is one entry of the Values column: `+set:value` (the code
	// has it, the seeds do not) or `-set:value` (a seed value the code
	// does not have).
	value = regexp.MustCompile("`([+-])([A-Za-z]+(?:\\.[A-Z_]+)?):([A-Za-z0-9_]+)`")
)

// cells splits a table line on its unescaped pipes.
func cells(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var out []string
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	return append(out, strings.TrimSpace(b.String()))
}

// check returns every way page (docs/contract.md) disagrees with the
// code's sets, the seeds' sets and the tests that exist.
func check(page string, code, seed map[string]set, tests set) []string {
	var bad []string
	badf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	ids := map[string]bool{}
	named := map[string]string{} // "+set:value" → row
	rows := 0
	inTable := false
	for n, line := range strings.Split(page, "\n") {
		n++
		if !strings.HasPrefix(strings.TrimSpace(line), "|") {
			inTable = false
			continue
		}
		c := cells(line)
		switch {
		case c[0] == header:
			if !slices.Equal(c, columns) {
				badf("line %d: a row table's columns are %q, want %q", n, c, columns)
			}
			inTable = true
			continue
		case !inTable || strings.HasPrefix(c[0], "---"):
			continue
		}
		rows++
		if len(c) != len(columns) {
			badf("line %d: %d cells, want %d (%s); escape a pipe inside a cell as \\|", n, len(c), len(columns), strings.Join(columns, ", "))
			continue
		}
		id := c[0]
		if !rowID.MatchString(id) || ids[id] {
			badf("line %d: row id %q is not a letter and a number, or is used twice", n, id)
		}
		ids[id] = true
		for i, name := range columns[1:5] {
			if c[i+1] == "" {
				badf("row %s: %q is empty", id, name)
			}
		}
		pins := pinned.FindAllString(c[4], -1)
		if len(pins) == 0 {
			badf("row %s: \"Pinned by\" names no test", id)
		}
		for _, p := range pins {
			if !tests[p] {
				badf("row %s: pinned by %s, which no _test.go declares", id, p)
			}
		}
		if rest := strings.TrimSpace(value.ReplaceAllString(c[5], "")); rest != "" && rest != "—" {
			badf("row %s: Values holds %q, which is not a `+set:value` or `-set:value`", id, rest)
		}
		for _, m := range value.FindAllStringSubmatch(c[5], -1) {
			sign, name, v := m[1], m[2], m[3]
			key := name + ":" + v
			if prev, ok := named[key]; ok {
				badf("row %s: %s is already decided in row %s", id, key, prev)
			}
			named[key] = id
			if _, ok := seed[name]; !ok {
				badf("row %s: no set %q (the sets: %s)", id, name, strings.Join(slices.Sorted(maps.Keys(seed)), ", "))
				continue
			}
			switch {
			case sign == "+" && !code[name][v]:
				badf("row %s: the page names %s %s, which the code no longer has: drop or change the row", id, name, v)
			case sign == "+" && seed[name][v]:
				badf("row %s: %s %s is the seeds' own value, not a departure", id, name, v)
			case sign == "-" && !seed[name][v]:
				badf("row %s: %s %s is not a seed value", id, name, v)
			case sign == "-" && code[name][v]:
				badf("row %s: the page says Pacer does not use the seeds' %s %s, but the code has it", id, name, v)
			}
		}
	}
	if rows == 0 {
		badf("the page has no row table (a header line | %s |)", strings.Join(columns, " | "))
	}
	for _, name := range slices.Sorted(maps.Keys(code)) {
		for _, v := range slices.Sorted(maps.Keys(code[name])) {
			if !seed[name][v] && named[name+":"+v] == "" {
				badf("the code has %s %s, which neither the seeds nor docs/contract.md name: add a row (or a `+%s:%s` to the row that decides it)", name, v, name, v)
			}
		}
	}
	return bad
}

func readPage(t *testing.T) string {
	t.Helper()
	b, err := repo.ReadFile("docs", "contract.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestContractPage holds docs/contract.md to the code: every value it
// names as Pacer's is in the code and not the seeds', every seed value it
// says Pacer does not use is absent from the code, every value the code
// has is the seeds' or on the page, and every row names a test that
// exists.
func TestContractPage(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range check(readPage(t), codeSets(), seeds(), testNames(t, root)) {
		t.Error(f)
	}
	readme, err := repo.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/contract.md)") {
		t.Error("README.md does not link docs/contract.md")
	}
}

// TestContractCheckCatchesMutations plants the mistakes the page's test
// is for, one at a time, and wants each reported.
func TestContractCheckCatchesMutations(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	page, tests := readPage(t), testNames(t, root)
	if bad := check(page, codeSets(), seeds(), tests); len(bad) != 0 {
		t.Fatalf("the page does not pass as it is: %q", bad)
	}
	edit := func(old, new string) func(*string, map[string]set) {
		return func(p *string, _ map[string]set) {
			if !strings.Contains(*p, old) {
				t.Fatalf("the page has no %q to mutate", old)
			}
			*p = strings.Replace(*p, old, new, 1)
		}
	}
	for name, mutate := range map[string]func(*string, map[string]set){
		"a made-up value on the page": edit("`+uiPhase:ALLOCATING`", "`+uiPhase:ALLOCATING` `+status:ON_HOLD`"),
		"a new value in the code":     func(_ *string, c map[string]set) { c["resultCode"]["REJECTED_BY_MOOD"] = true },
		"a new entity type":           func(_ *string, c map[string]set) { c["entityType"]["EVENT_QUOTA"] = true },
		"a new request attribute":     func(_ *string, c map[string]set) { c["attr.REQUEST"]["priority"] = true },
		"a value gone from the code":  func(_ *string, c map[string]set) { delete(c["uiPhase"], "ALLOCATING") },
		"a dropped seed value back":   func(_ *string, c map[string]set) { c["resultCode"]["REJECTED_DUPLICATE"] = true },
		"a seed value as a departure": edit("`+uiPhase:ALLOCATING`", "`+uiPhase:ALLOCATING` `+status:RECEIVED`"),
		"not a seed value dropped":    edit("`-resultCode:FAILED_WORKER`", "`-resultCode:FAILED_LATER`"),
		"an unknown set":              edit("`+uiPhase:ALLOCATING`", "`+uiPhase:ALLOCATING` `+colour:RED`"),
		"a value decided twice":       edit("`+uiPhase:ALLOCATED`", "`+uiPhase:ALLOCATED` `+uiPhase:ALLOCATING`"),
		"a pin to a missing test":     edit("TestAdversarialArrivalOrder", "TestNoSuchThing"),
		"a stray word in Values":      edit("`+uiPhase:ALLOCATING`", "`+uiPhase:ALLOCATING` ALLOCATED"),
		"a row id used twice":         edit("| S2 |", "| S1 |"),
	} {
		p, c := page, codeSets()
		mutate(&p, c)
		if bad := check(p, c, seeds(), tests); len(bad) == 0 {
			t.Errorf("%s: not reported", name)
		} else {
			t.Logf("%s: %s", name, bad[0])
		}
	}
}

// TestSeedValuesAreTheSeeds checks seedSets against the seed files, where
// they are beside the repository (../shared/seeds): each value is written
// in the file that is said to give it.
func TestSeedValuesAreTheSeeds(t *testing.T) {
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "seeds")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("the seeds are not at %s: seedSets is checked where they are", dir)
	}
	for name, groups := range seedSets {
		for _, g := range groups {
			b, err := os.ReadFile(filepath.Join(dir, g.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range g.values {
				if !strings.Contains(string(b), v) {
					t.Errorf("%s: %s does not say %q", name, g.file, v)
				}
			}
		}
	}
}
