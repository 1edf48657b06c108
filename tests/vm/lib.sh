# shellcheck shell=bash
# What the VM tests share beyond the assertions (bash, run inside the
# guest by tests/vm/run): where the tree and the build are, the traffic
# probe, a bounded wait.  The assertions themselves, ok / not_ok / check
# ... finish, are the one test vocabulary of tests/lib.sh.

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

CGF_TOP=${CGF_TOP:?run through scripts/vm}
CGF_BUILD=${CGF_BUILD:-$CGF_TOP/build}
NETPROBE=$CGF_BUILD/tests/vm/tools/netprobe

# wait_for_file FILE: bounded wait for a receiver to be ready.
wait_for_file() {
	local i
	for i in $(seq 100); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# prom_value TEXT SERIES: the value of one sample of a Prometheus text
# exposition (`cgfilterctl status --format=prometheus`), SERIES written
# exactly as the line has it (name{labels}); nothing when there is none.
# Label values may hold blanks: the series is matched whole, not split;
# and backslashes: it reaches awk through the environment, as awk -v
# would take \\ and \" in it for escapes.
prom_value() {
	PROM_SERIES=$2 awk '{ s = ENVIRON["PROM_SERIES"] }
		substr($0, 1, length(s) + 1) == s " " { print substr($0, length(s) + 2) }' <<<"$1"
}

# prom_lint TEXT: every line is "# HELP name text", "# TYPE name type" or a
# sample "name{labels} value" with names as the format has them (the
# host test test-status-prometheus parses it strictly; this catches a
# broken line in the real output).  Prints the bad lines.
prom_lint() {
	LC_ALL=C grep -vxE '# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+|[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\[\\"n])*")*\})? [0-9][0-9.e+]*' <<<"$1"
}
