// Package config is what every Pacer binary shares before any HTTP is
// involved: its settings, each declared once with its flag, environment
// variable, default and help (Set), and the body of its func main (Main).
//
// A binary declares its settings on a Set and parses once:
//
//	s := config.NewSet("asyncevent-worker")
//	cfg.Declare(s)                  // s.Int(&cfg.Batch, "batch", "PACER_WORKER_BATCH", 10, "...")
//	if err := s.Parse(os.Args[1:], os.Getenv); err != nil { ... }
//
// A value comes from the flag if given, else from the environment variable,
// else the default; a malformed value in either is an error naming the flag
// or variable, never a silent fall-back to the default. `-h` lists every
// setting with its variable, and Set.Markdown renders the same table for
// docs/settings.md (a test keeps the two equal).
//
// The package imports no HTTP framework, JWT or database code, so a binary
// without an API (the worker) links none of them.
package config
