package ratelimit

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseRule reads a budget written "N/s", "N/m" or "N/h" (N calls a
// second, minute or hour, a whole unit's worth usable at once), or "off".
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return Rule{}, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(strings.TrimSpace(n))
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[strings.TrimSpace(unit)]
	if !ok || err != nil || count < 1 || per == 0 {
		return Rule{}, fmt.Errorf("rate %q: want N/s, N/m or N/h with N ≥ 1, or off", s)
	}
	return Rule{Rate: float64(count) / per.Seconds(), Burst: count}, nil
}

// String writes r as ParseRule reads it.
func (r Rule) String() string {
	if r.Rate <= 0 {
		return "off"
	}
	for _, u := range []struct {
		name string
		per  time.Duration
	}{{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}} {
		if float64(r.Burst) == r.Rate*u.per.Seconds() {
			return strconv.Itoa(r.Burst) + "/" + u.name
		}
	}
	return fmt.Sprintf("%g/s", r.Rate)
}
