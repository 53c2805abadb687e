package analytics

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// Result is a query and its table.
type Result struct {
	Query Query
	Table *Table
}

// Cell renders a value: times as UTC "2006-01-02 15:04:05", floats
// without trailing zeros, NULL as "".
func Cell(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// WriteText prints each result as an aligned table under its title.
func WriteText(w io.Writer, results []Result) error {
	for _, r := range results {
		fmt.Fprintf(w, "== %s (%s.sql)\n", r.Query.Title, r.Query.Name)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, strings.Join(r.Table.Columns, "\t"))
		for _, row := range r.Table.Rows {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = Cell(v)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		if len(r.Table.Rows) == 0 {
			fmt.Fprintln(tw, "(no rows)")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// bar is one bar of a chart: a row with its label on the left, the bar,
// and its value after it.
type bar struct {
	Label  string // in full (the bar's tooltip)
	Short  string // as shown: at most maxLabel characters
	Value  float64
	X, W   float64
	Y, H   float64
	Text   string
	LabelX float64 // where the label ends (right-aligned)
	TextY  float64 // the baseline of the label and the value
	TextX  float64 // where the value starts
}

// chart is an inline SVG bar chart.
type chart struct {
	Title         string
	Width, Height float64
	Bars          []bar
}

// The bar charts' geometry: one horizontal bar per row, so that any number
// of events stays legible (a label never shares its row), labels right-
// aligned in a column of their own and cut to maxLabel characters (11 px
// text is at most about 6.5 px a character, so they fit labelWidth).
const (
	rowHeight  = 18.0
	labelWidth = 290.0
	plotWidth  = 400.0
	maxLabel   = 44
)

// barChart lays out one bar per (label, value).
func barChart(title string, labels []string, values []float64) chart {
	c := chart{Title: title, Width: labelWidth + plotWidth + 80, Height: rowHeight*float64(len(values)) + 10}
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	if top == 0 {
		top = 1
	}
	for i, v := range values {
		y := 5 + float64(i)*rowHeight
		w := plotWidth * v / top
		c.Bars = append(c.Bars, bar{
			Label: labels[i], Short: shorten(labels[i], maxLabel), Value: v,
			X: labelWidth + 10, W: w, Y: y + 2, H: rowHeight - 4, Text: strconv.FormatFloat(v, 'f', -1, 64),
			LabelX: labelWidth, TextY: y + rowHeight - 5, TextX: labelWidth + 10 + w + 4,
		})
	}
	return c
}

// shorten cuts s to at most n characters, keeping its start and its end
// (an event id's tail and the hour tell rows apart) around an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	tail := n / 2
	return string(r[:n-tail-1]) + "…" + string(r[len(r)-tail:])
}

// charts draws hourly volume (all events) and the p50/p95 delays per event.
func charts(results []Result) []chart {
	var out []chart
	for _, r := range results {
		idx := map[string]int{}
		for i, c := range r.Table.Columns {
			idx[c] = i
		}
		switch r.Query.Name {
		case "1_hourly_volume":
			var labels []string
			var vals []float64
			for _, row := range r.Table.Rows {
				labels = append(labels, Cell(row[idx["event_id"]])+" "+Cell(row[idx["hour_utc"]])[11:16])
				vals = append(vals, num(row[idx["requests"]]))
			}
			out = append(out, barChart("Requests per hour (UTC) of requestedAt (docs/events.md says why not queuedAt)", labels, vals))
		case "3_queue_delay_p95", "4_e2e_delay_p95":
			var labels []string
			var vals []float64
			for _, row := range r.Table.Rows {
				for _, p := range []string{"p50_ms", "p95_ms"} {
					labels = append(labels, Cell(row[idx["event_id"]])+" "+strings.TrimSuffix(p, "_ms"))
					vals = append(vals, num(row[idx[p]]))
				}
			}
			out = append(out, barChart(r.Query.Title+" (ms)", labels, vals))
		}
	}
	return out
}

func num(v any) float64 {
	f, _ := strconv.ParseFloat(Cell(v), 64)
	return f
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{"cell": Cell}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>AsyncEvent analytics</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse;margin-bottom:2em}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}th{background:#f4f4f4}svg text{font-size:11px}</style></head>
<body><h1>AsyncEvent analytics</h1><p>Generated {{.Generated}} from {{.Source}}.</p>
{{range .Charts}}<h2>{{.Title}}</h2>
<svg width="{{.Width}}" height="{{.Height}}" role="img" aria-label="{{.Title}}">
{{range .Bars}}<g><title>{{.Label}}: {{.Text}}</title><text x="{{.LabelX}}" y="{{.TextY}}" text-anchor="end">{{.Short}}</text>
<rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" fill="#4a7bd0"></rect><text x="{{.TextX}}" y="{{.TextY}}">{{.Text}}</text></g>
{{end}}</svg>{{end}}
{{range .Results}}<h2>{{.Query.Title}}</h2><table><tr>{{range .Table.Columns}}<th>{{.}}</th>{{end}}</tr>
{{range .Table.Rows}}<tr>{{range .}}<td>{{cell .}}</td>{{end}}</tr>{{end}}</table>{{end}}
</body></html>
`))

// WriteHTML writes the report as one HTML page: charts (inline SVG) of the
// hourly volume and the delay percentiles, then every table.
func WriteHTML(w io.Writer, source string, results []Result) error {
	return page.Execute(w, map[string]any{
		"Generated": time.Now().UTC().Format(time.RFC3339), "Source": source,
		"Charts": charts(results), "Results": results,
	})
}
