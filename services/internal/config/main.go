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

// Main is the body of a binary's func main. It declares the binary's
// settings on a new Set with declare and parses them from os.Args and the
// environment (exit 2 with the error, or 0 after -h). Then it runs run with
// a context that SIGINT or SIGTERM cancels (so the binary shuts down
// gracefully) and a text logger on stderr; on error it prints
// "<name>: <error>" and exits with status 1.
func Main(name string, declare func(*Set), run func(ctx context.Context, log *slog.Logger) error) {
	s := NewSet(name)
	declare(s)
	if err := s.Parse(os.Args[1:], os.Getenv); err != nil {
		if errors.Is(err, ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	stop()
	Exit(name, err)
}

// Exit prints "<name>: <err>" and exits with status 1 when err is not nil.
func Exit(name string, err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
