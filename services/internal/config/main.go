package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// Main is the body of a binary's func main. It parses the binary's
// settings (Parse), then runs run with a context that SIGINT or SIGTERM
// cancels (so the binary shuts down gracefully) and a text logger on
// stderr; on error it prints "<name>: <error>" and exits with status 1.
func Main(name string, declare func(*Set), run func(ctx context.Context, log *slog.Logger) error) {
	Parse(name, declare)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	stop()
	Exit(name, err)
}

// Parse declares a binary's settings on a new Set with declare and parses
// them from os.Args and the environment: it exits with status 2 and the
// error on a malformed value, or 0 after printing -h.
func Parse(name string, declare func(*Set)) {
	s := NewSet(name)
	declare(s)
	if err := s.Parse(os.Args[1:], os.Getenv); err != nil {
		if errors.Is(err, ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// Exit prints "<name>: <err>" and exits with status 1 when err is not nil.
func Exit(name string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
