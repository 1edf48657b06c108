# shellcheck shell=bash
# bench/lib/stats.sh: the statistics every bench/run part prints, sourced
# by the host driver (bench/run) and by the parts that run in the guest.
# Only awk: the guest image has no python.
#
# A part measures two sides, A (the reference) and B, alternately in the
# same run, several rounds; each round gives one value per side.  The
# result is B/A: the ratio of the medians, and the spread of the
# per-round ratios (min / median / max), so that a reader sees how much
# the machine's drift moved it.  Machines here are noisy and TCG is slow:
# the ratios are the result, never the absolute values, and nothing
# gates on them.

# bench_order ROUND: the order of the two sides in ROUND, "A B" in odd
# rounds and "B A" in even ones, so that a drift of the machine during a
# round hits both sides alike over two rounds.
bench_order() {
	if [ $(($1 % 2)) = 1 ]; then echo "A B"; else echo "B A"; fi
}

# bench_median: the median of the numbers on stdin (one per line or
# space-separated), the lower middle one for an even count.
bench_median() {
	tr ' ' '\n' | awk 'NF {print $1}' | sort -g |
		awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]}'
}

# bench_ratio PART CASE UNIT GOAL <<< "A1 B1\nA2 B2 ..."
#   One line per round, "A B" (A the reference).  UNIT names what the
#   values are ("pps", "us"), GOAL is a bound on B/A such as "<=1.01",
#   ">=50" or "-" for none.  Prints one summary line:
#     ratio part=1 case=... B/A=1.004 min=0.991 med=1.004 max=1.012 \
#       A=123456pps B=122900pps n=5 goal=<=1.01 met
#   "met", "MISSED" or "-" at the end; bench/run collects these lines.
bench_ratio() {
	awk -v part="$1" -v case_="$2" -v unit="$3" -v goal="$4" '
	function median(v, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		return v[int((n + 1) / 2)]
	}
	NF >= 2 && $1 > 0 {
		n++; a[n] = $1; b[n] = $2; r[n] = $2 / $1
	}
	END {
		if (!n) { printf "ratio part=%s case=%s no-data\n", part, case_; exit 1 }
		ma = median(a, n); mb = median(b, n); q = mb / ma
		lo = r[1]; hi = r[1]
		for (i = 1; i <= n; i++) { if (r[i] < lo) lo = r[i]; if (r[i] > hi) hi = r[i] }
		mr = median(r, n)
		verdict = "-"
		if (goal ~ /^<=/) verdict = (q <= substr(goal, 3) + 0) ? "met" : "MISSED"
		else if (goal ~ /^>=/) verdict = (q >= substr(goal, 3) + 0) ? "met" : "MISSED"
		printf "ratio part=%s case=%s B/A=%.3f min=%.3f med=%.3f max=%.3f A=%g%s B=%g%s n=%d goal=%s %s\n",
			part, case_, q, lo, mr, hi, ma, unit, mb, unit, n, goal, verdict
	}'
}

# bench_now_ns: CLOCK_MONOTONIC-ish nanoseconds from the shell.
bench_now_ns() { date +%s%N; }
