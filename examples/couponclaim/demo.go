package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pacerhq/pacer/sdk/ddb"
)

// run creates the table, issues a coupon with 3 units, lets 5 users race
// for it (one of them twice), and lists a user's claims page by page.
func run(ctx context.Context, table *ddb.Table, out io.Writer) error {
	if err := table.Ensure(ctx); err != nil {
		return err
	}
	svc := NewService(table)
	coupon := fmt.Sprintf("SPRING-%d", time.Now().UnixNano())
	if err := svc.Issue(ctx, coupon, "Spring race entry -50%", 3); err != nil {
		return err
	}

	users := []string{"ana", "ben", "chloe", "dan", "eve"}
	results := make([]error, len(users))
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Go(func() { _, results[i] = svc.Claim(ctx, coupon, u) })
	}
	wg.Wait()
	won := 0
	for i, err := range results {
		switch {
		case err == nil:
			won++
		case errors.Is(err, ErrSoldOut):
		default:
			return fmt.Errorf("claim by %s: %w", users[i], err)
		}
	}
	fmt.Fprintf(out, "%d of %d users claimed %s\n", won, len(users), coupon)

	// Whoever won tries again: the first claim comes back.
	for i, err := range results {
		if err != nil {
			continue
		}
		first, err := svc.Claim(ctx, coupon, users[i])
		if !errors.Is(err, ErrAlreadyClaimed) {
			return fmt.Errorf("second claim by %s: %v", users[i], err)
		}
		fmt.Fprintf(out, "second claim refused; first claim at %d\n", first.ClaimedAt)
		break
	}

	c, err := svc.Coupon(ctx, coupon)
	if err != nil {
		return err
	}
	n, err := svc.Claimants(ctx, coupon)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "remaining %d of %d, %d claims recorded\n", c.Remaining, c.Total, n)

	// One user collects several coupons; list them two per page.
	for i := 0; i < 5; i++ {
		id := fmt.Sprintf("%s-EXTRA-%d", coupon, i)
		if err := svc.Issue(ctx, id, "extra", 1); err != nil {
			return err
		}
		if _, err := svc.Claim(ctx, id, "zoe"); err != nil {
			return err
		}
	}
	cursor, pages, total := "", 0, 0
	for {
		claims, next, err := svc.ClaimsOf(ctx, "zoe", 2, cursor)
		if err != nil {
			return err
		}
		pages++
		total += len(claims)
		if next == "" {
			break
		}
		cursor = next
	}
	fmt.Fprintf(out, "zoe has %d claims in %d pages\n", total, pages)
	return nil
}
