// Command report prints AsyncEvent's analytics reports (analytics/queries)
// for the events in a folder in Firehose's S3 layout (by default the one
// `make run` writes) and writes them as an HTML page with charts.
//
//	go run ./cmd/report -events ../.cache/dev/events -html ../.cache/dev/analytics.html
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/pacerhq/pacer/analytics"
)

func main() {
	events := flag.String("events", "../.cache/dev/events", "folder holding events/dt=…/hour=…/")
	html := flag.String("html", "../.cache/dev/analytics.html", "HTML report to write (empty: none)")
	flag.Parse()
	if err := run(*events, *html); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		if errors.Is(err, analytics.ErrNoEvents) {
			fmt.Fprintln(os.Stderr, "report: start the stack with `make run`, take part in an event, and wait for the sink's buffer interval (10 s)")
		}
		os.Exit(1)
	}
}

func run(events, html string) error {
	ctx := context.Background()
	db, err := analytics.Open(ctx, events)
	if err != nil {
		return err
	}
	defer db.Close()
	var results []analytics.Result
	for _, q := range analytics.Queries() {
		t, err := db.Run(ctx, q)
		if err != nil {
			return err
		}
		results = append(results, analytics.Result{Query: q, Table: t})
	}
	if err := analytics.WriteText(os.Stdout, results); err != nil {
		return err
	}
	if html == "" {
		return nil
	}
	var b bytes.Buffer
	if err := analytics.WriteHTML(&b, events, results); err != nil {
		return err
	}
	if err := os.WriteFile(html, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Println("HTML report:", html)
	return nil
}
