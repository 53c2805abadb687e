package photoapi

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/pacerhq/pacer/modules/photo"
	"github.com/pacerhq/pacer/services/internal/server"
)

type runnersBody struct {
	Runners []runnerBody `json:"runners,omitempty" maxItems:"20000" doc:"The entry list as JSON. Give this or csv."`
	CSV     string       `json:"csv,omitempty" maxLength:"2000000" doc:"The entry list as CSV: bib,name per line; a header line bib,name is skipped."`
}

type runnerBody struct {
	Bib  string `json:"bib" pattern:"^[A-Za-z0-9-]{1,16}$" example:"1234"`
	Name string `json:"name" minLength:"1" example:"Kim Minsu"`
}

type importOutput struct {
	Body struct {
		Received int `json:"received"`
		Written  int `json:"written" doc:"Rows inserted or changed; unchanged rows are not rewritten."`
	}
}

type runnersOutput struct {
	Body struct {
		Runners   []photo.Runner `json:"runners"`
		NextAfter string         `json:"nextAfter,omitempty" doc:"Pass as after for the next page; absent on the last page."`
	}
}

// RunnersQuery is the page of list-runners, a named exception to
// server.PageQuery: it pages by bib (after, the last bib of the previous
// page) rather than by an opaque cursor, and a page may hold up to 1,000
// runners, as many as the domain's ListRunners takes: rows of a bib and a
// name, read from Postgres in one query.
type RunnersQuery struct {
	After string `query:"after" pattern:"^[A-Za-z0-9-]{0,16}$" maxLength:"16" doc:"List bibs after this one (a bib)."`
	Limit int    `query:"limit" minimum:"1" maximum:"1000" default:"100"`
}

// registerRunners adds an organizer's operations on an event's entry list.
func (h *handlers) registerRunners(api huma.API) {
	huma.Register(api, server.Op("import-runners", http.MethodPost, "/events/{eventId}/runners",
		"Import an event's entry list (bib → runner), as JSON or CSV; rows are upserted by bib", tagDirectory, refusals,
		server.MaxBody(4<<20), server.Bulk()),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			Body runnersBody
		}) (*importOutput, error) {
			rs, lines, err := runnersOf(in.Body)
			if err != nil {
				return nil, err
			}
			n, err := h.dir.ImportRunners(ctx, org, in.EventID, rs)
			if err != nil {
				return nil, csvProblems(err, lines)
			}
			out := &importOutput{}
			out.Body.Received, out.Body.Written = len(rs), n
			return out, nil
		}))
	huma.Register(api, server.Op("list-runners", http.MethodGet, "/events/{eventId}/runners",
		"List an event's runners by bib", tagDirectory, refusals),
		server.Handle(organizer, h.problem, func(ctx context.Context, org string, in *struct {
			EventPath
			RunnersQuery
		}) (*runnersOutput, error) {
			page, err := h.dir.ListRunners(ctx, org, in.EventID, in.After, in.Limit)
			if err != nil {
				return nil, err
			}
			out := &runnersOutput{}
			out.Body.Runners, out.Body.NextAfter = page.Runners, page.NextAfter
			return out, nil
		}))
}

// runnersOf reads an import body: the JSON list or the CSV text. For CSV
// it also returns each runner's line, for csvProblems.
func runnersOf(b runnersBody) ([]photo.Runner, []int, error) {
	return importRows(b.Runners, b.CSV, csvImport{list: "runners", fields: 2, max: photo.MaxRunnersImport},
		func(r runnerBody) photo.Runner { return photo.Runner{Bib: r.Bib, Name: r.Name} },
		func(rec []string, _ int) (photo.Runner, error) { return photo.Runner{Bib: rec[0], Name: rec[1]}, nil })
}

// csvImport says what an import holds: rows of list (its JSON name, which
// messages use too), each of fields fields in CSV, at most max of them.
type csvImport struct {
	list   string
	fields int
	max    int
}

// importRows reads an import body that gives its rows either as a JSON
// list or as CSV text (never both, never neither): each JSON row through
// fromJSON, each CSV record through fromCSV (with its line). For CSV it
// also returns each row's line, for csvProblems.
func importRows[J, T any](list []J, text string, c csvImport, fromJSON func(J) T, fromCSV func(rec []string, line int) (T, error)) ([]T, []int, error) {
	switch {
	case len(list) > 0 && text != "":
		return nil, nil, photo.Invalid("csv", "give either "+c.list+" or csv, not both", nil)
	case text == "":
		if len(list) == 0 {
			return nil, nil, photo.Invalid(c.list, "is empty", nil)
		}
		out := make([]T, len(list))
		for i, r := range list {
			out[i] = fromJSON(r)
		}
		return out, nil, nil
	}
	recs, lines, err := readCSV(text, c)
	if err != nil {
		return nil, nil, err
	}
	out := make([]T, len(recs))
	for i, rec := range recs {
		if out[i], err = fromCSV(rec, lines[i]); err != nil {
			return nil, nil, err
		}
	}
	return out, lines, nil
}

// readCSV reads an import's CSV text: rows of c.fields fields, trimmed,
// with each row's line; a first row whose first field is "bib" (any case)
// is a header, skipped. A malformed file, one with more than c.max rows or
// none, is an error naming csv.
func readCSV(text string, c csvImport) ([][]string, []int, error) {
	// Spreadsheets save UTF-8 CSV with a byte order mark.
	cr := csv.NewReader(strings.NewReader(strings.TrimPrefix(text, "\ufeff")))
	cr.FieldsPerRecord = c.fields
	cr.TrimLeadingSpace = true
	var recs [][]string
	var lines []int
	for first := true; ; first = false {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, nil, photo.Invalid("csv", fmt.Sprintf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err), nil)
		}
		if err != nil {
			return nil, nil, photo.Invalid("csv", err.Error(), nil)
		}
		if first && strings.EqualFold(strings.TrimSpace(rec[0]), "bib") {
			continue
		}
		line, _ := cr.FieldPos(0)
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		recs = append(recs, rec)
		lines = append(lines, line)
		if len(recs) > c.max {
			return nil, nil, photo.Invalid("csv", fmt.Sprintf("holds more than %d %s", c.max, c.list), nil)
		}
	}
	if len(recs) == 0 {
		return nil, nil, photo.Invalid("csv", "holds no "+c.list, nil)
	}
	return recs, lines, nil
}

// listField matches the domain's field names for an imported row
// ("runners[3].bib", "splits[0].at").
var listField = regexp.MustCompile(`^\w+\[(\d+)\]\.(\w+)$`)

// listRef finds a row named in a message ("repeats runners[0].bib").
var listRef = regexp.MustCompile(`\w+\[(\d+)\]\.\w+\.?$`)

// csvProblems rewrites the domain's problems with imported rows
// ("runners[3].bib", "splits[3].at") to name where they are in a CSV
// import ("csv", "line 5: bib ..."), since the request had no list. Other
// errors, and JSON imports (lines is nil), pass unchanged.
func csvProblems(err error, lines []int) error {
	var ve *photo.ValidationError
	if lines == nil || !errors.As(err, &ve) {
		return err
	}
	out := &photo.ValidationError{Problems: make([]photo.Problem, len(ve.Problems))}
	for i, p := range ve.Problems {
		if m := listField.FindStringSubmatch(p.Field); m != nil {
			if n, _ := strconv.Atoi(m[1]); n < len(lines) {
				msg := p.Message
				if k := listRef.FindStringSubmatchIndex(msg); k != nil {
					if o, _ := strconv.Atoi(msg[k[2]:k[3]]); o < len(lines) {
						msg = msg[:k[0]] + fmt.Sprintf("the %s of line %d", m[2], lines[o])
					}
				}
				p = photo.Problem{Field: "csv", Message: fmt.Sprintf("line %d: %s %s", lines[n], m[2], msg), Value: p.Value}
			}
		}
		out.Problems[i] = p
	}
	return out
}
