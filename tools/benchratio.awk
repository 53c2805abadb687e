# benchratio.awk reads `go test -bench -benchmem` output and prints, for
# every benchmark with sub-benchmarks impl=pacer and impl=bare, Pacer's
# figures over the bare baseline's (the mean of each side's runs, with
# -count): the cost Pacer adds per operation (`make bench`;
# docs/capacity.md). A ratio of 1.00 is no overhead.
/^Benchmark/ && /impl=(pacer|bare)/ {
	name = $1
	sub(/-[0-9]+$/, "", name)          # the GOMAXPROCS suffix
	impl = name
	sub(/.*impl=/, "", impl)
	sub(/\/?impl=(pacer|bare)/, "", name)
	for (i = 3; i <= NF; i++) {
		if ($i == "ns/op") { ns[name, impl] += $(i - 1); runs[name, impl]++ }
		if ($i == "B/op") by[name, impl] += $(i - 1)
		if ($i == "allocs/op") al[name, impl] += $(i - 1)
	}
	if (!(name in seen)) { seen[name] = 1; order[++n] = name }
}
{ print }
END {
	if (n == 0) exit
	print ""
	for (k in runs) { ns[k] /= runs[k]; by[k] /= runs[k]; al[k] /= runs[k] }
	print "Pacer / bare, per operation (impl=pacer over impl=bare in the same run; means over -count runs):"
	printf "  %-40s %8s %8s %10s   %s\n", "benchmark", "ns/op", "B/op", "allocs/op", "(pacer ns/op, allocs/op)"
	for (k = 1; k <= n; k++) {
		b = order[k]
		if (!((b, "pacer") in ns) || !((b, "bare") in ns) || ns[b, "bare"] == 0) {
			printf "  %-40s missing its %s half\n", b, ((b, "pacer") in ns) ? "impl=bare" : "impl=pacer"
			continue
		}
		printf "  %-40s %7.2fx %7.2fx %9.2fx   (%d, %d)\n", b, ns[b, "pacer"] / ns[b, "bare"], \
			(by[b, "bare"] ? by[b, "pacer"] / by[b, "bare"] : 0), (al[b, "bare"] ? al[b, "pacer"] / al[b, "bare"] : 0), ns[b, "pacer"], al[b, "pacer"]
	}
}
