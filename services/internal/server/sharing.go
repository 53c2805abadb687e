package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"

	"github.com/pacerhq/pacer/sdk/ddb"
	"github.com/pacerhq/pacer/services/internal/config"
	"github.com/pacerhq/pacer/services/internal/ratelimit"
)

// LimitSharing are the rate-limit settings every API's limits share: how
// the replicas divide each budget, and the proxies whose X-Forwarded-For
// names the client. With ReplicasTable, each replica counts the replicas
// running (ratelimit.Replicas) and allows 1/count of each budget, so a
// budget holds at any task count; without it, Replicas fixes the count.
type LimitSharing struct {
	Replicas       int
	ReplicasTable  string
	TrustedProxies string

	count func() int // the live count, once CountReplicas has run
}

// Declare declares the settings on s.
func (sh *LimitSharing) Declare(s *config.Set) {
	s.Int(&sh.Replicas, "rate-replicas", "PACER_RATE_REPLICAS", 2, "API replicas sharing each budget, each allowing 1/N of it, where PACER_RATE_REPLICAS_TABLE is not set")
	s.String(&sh.ReplicasTable, "rate-replicas-table", "PACER_RATE_REPLICAS_TABLE", "", "DynamoDB table where the replicas count each other, each allowing 1/(replicas running) of each budget; empty: PACER_RATE_REPLICAS, fixed")
	s.String(&sh.TrustedProxies, "trusted-proxies", "PACER_TRUSTED_PROXIES", "", "comma-separated CIDR prefixes of the proxies whose X-Forwarded-For names the client (empty: the connection's address)")
}

// CountReplicas, when ReplicasTable is set, joins this API's replicas in
// it (group names the API) and counts them until ctx ends, beating once
// before it returns: the Limits made after it share each budget by the
// live count. setup creates the table if it is missing (the local stack;
// the deployment creates it). Without ReplicasTable it does nothing.
func (sh *LimitSharing) CountReplicas(ctx context.Context, client ddb.Client, setup bool, group string, log *slog.Logger) error {
	if sh.ReplicasTable == "" {
		return nil
	}
	table := ddb.New(client, ddb.Config{}).Table(sh.ReplicasTable, &ratelimit.ReplicaSchema)
	if setup {
		if err := table.Ensure(ctx); err != nil {
			return fmt.Errorf("PACER_RATE_REPLICAS_TABLE: %w", err)
		}
	}
	r := ratelimit.NewReplicas(ratelimit.ReplicasConfig{Table: table, Group: group, ID: replicaID(), Log: log})
	if err := r.Beat(ctx); err != nil {
		return fmt.Errorf("PACER_RATE_REPLICAS_TABLE %s: %w", sh.ReplicasTable, err)
	}
	go r.Run(ctx)
	sh.count = r.Count
	return nil
}

// replicaID names this process among its group: its host (a task's or
// pod's own) and a random suffix, so two processes on one host differ.
func replicaID() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

// Limits makes an API's Limits of budgets, shared as sh says; an error
// names the setting at fault. refused, if set, hears each refusal.
func (sh LimitSharing) Limits(refused func(class string, by ratelimit.By), budgets ...Budget) (Limits, error) {
	rules := map[string]map[ratelimit.By]ratelimit.Rule{}
	for _, b := range budgets {
		rule, err := ratelimit.ParseRule(b.Value)
		if err != nil {
			return Limits{}, fmt.Errorf("%s: %w", b.Env, err)
		}
		if rule.Rate > 0 {
			if rules[b.Class] == nil {
				rules[b.Class] = map[ratelimit.By]ratelimit.Rule{}
			}
			rules[b.Class][b.By] = rule
		}
	}
	if sh.Replicas < 0 {
		return Limits{}, fmt.Errorf("PACER_RATE_REPLICAS: %d, want at least 1", sh.Replicas)
	}
	proxies, err := ratelimit.ParseProxies(sh.TrustedProxies)
	if err != nil {
		return Limits{}, fmt.Errorf("PACER_TRUSTED_PROXIES: %w", err)
	}
	return Limits{Limiter: ratelimit.New(ratelimit.Config{Rules: rules, Replicas: max(1, sh.Replicas), Count: sh.count, Refused: refused}), Proxies: proxies}, nil
}
