// Command smoke checks a deployed Pacer stage end to end: both APIs
// answer, a participation is accepted and decided, and a photo is found by
// the public bib search and its preview loads from the image base URL
// the pages use. It is docs/deploy.md's smoke test; its tests run it
// against the local stack.
//
//	go run ./services/smoke -asyncevent https://api.example.com -photo https://photos.example.com -preview-key smoke/pacer-smoke.jpg
//
// Tokens: with PACER_JWT_SECRET (the stack's HS256 secret) it mints its
// own, short-lived, with the stack's PACER_JWT_ISSUER, PACER_JWT_AUDIENCE
// and claim names when set; else it reads PACER_ADMIN_TOKEN,
// PACER_ORGANIZER_TOKEN (with an org claim, PACER_JWT_ORG_CLAIM) and
// PACER_USER_TOKEN from your identity provider.
// It creates an event smoke-… on both APIs and, unless -keep, closes it,
// deletes its photo and unpublishes it afterwards. The exit code is 0 when
// every step passed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/server"
)

func main() {
	var cfg Config
	flag.StringVar(&cfg.AsyncEventURL, "asyncevent", "", "the AsyncEvent API's base URL (the stack's AsyncEventApiURL output)")
	flag.StringVar(&cfg.PhotoURL, "photo", "", "photo-api's base URL (the stack's PhotoApiURL output)")
	flag.StringVar(&cfg.PreviewKey, "preview-key", "", "key of an image you uploaded under PhotoImageBaseUrl, used as the smoke photo's preview")
	flag.DurationVar(&cfg.Timeout, "timeout", 2*time.Minute, "how long to wait for the decision and for the photo to be found")
	flag.BoolVar(&cfg.Keep, "keep", false, "leave the smoke event and photo in place")
	flag.Parse()
	// The stack's token settings, as the APIs read them (PACER_JWT_*).
	var tokens server.AuthSettings
	s := config.NewSet("smoke")
	tokens.Declare(s)
	if err := s.Parse(nil, os.Getenv); err != nil {
		fail(err)
	}
	if secret := os.Getenv("PACER_JWT_SECRET"); secret != "" {
		ac := tokens.Config()
		ac.JWKSURL, ac.HS256Secret = "", []byte(secret)
		t, err := MintTokens(ac, 15*time.Minute)
		if err != nil {
			fail(err)
		}
		cfg.Tokens = t
	} else {
		cfg.Tokens = Tokens{Admin: os.Getenv("PACER_ADMIN_TOKEN"), Organizer: os.Getenv("PACER_ORGANIZER_TOKEN"), User: os.Getenv("PACER_USER_TOKEN"),
			OrgClaim: tokens.OrgClaim}
		if cfg.Tokens.Admin == "" || cfg.Tokens.Organizer == "" || cfg.Tokens.User == "" {
			fail(fmt.Errorf("set PACER_JWT_SECRET (HS256 stacks), or PACER_ADMIN_TOKEN, PACER_ORGANIZER_TOKEN and PACER_USER_TOKEN (docs/deploy.md, Smoke test)"))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := Run(ctx, cfg, os.Stdout); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "smoke: FAILED:", err)
	os.Exit(1)
}
