package main

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// samples calls f with each sample of a Prometheus text exposition: the
// series (name and labels, as written) and its value. The value follows
// the last space, since label values (routes) have spaces too; comments
// and lines without a number are skipped.
func samples(r io.Reader, f func(series string, v float64)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || strings.HasPrefix(line, "#") {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			f(line[:i], v)
		}
	}
	return sc.Err()
}
