# shellcheck shell=bash
# The one test vocabulary (bash, sourced): every shell test, tests/vm/run,
# scripts/check-kernel-series and scripts/test count with these.
#
# Each check prints "ok - what" or "not ok - what"; finish prints the
# totals, "N passed, M failed", and sets the exit status, so a test
# cannot pass by skipping.  tally reads such a line back from the log of
# a run, for a runner that sums the runs below it.

_passed=0
_failed=0

ok() {
	_passed=$((_passed + 1))
	echo "ok - $*"
}

not_ok() {
	_failed=$((_failed + 1))
	echo "not ok - $*"
}

# check WHAT CMD...: CMD must succeed.
check() {
	local what=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$what"; else not_ok "$what"; printf '    %s\n' "$out"; fi
}

# check_fails WHAT CMD...: CMD must fail (exit 1, not a set-up error).
check_fails() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 1 ]; then
		ok "$what ($out)"
	else
		not_ok "$what (exit $rc, expected 1)"
		printf '    %s\n' "$out"
	fi
}

# check_eq WHAT EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: expected '$2', got '$3'"; fi
}

# A must-have of the test itself: stop the test, counted as a failure.
require() {
	local what=$1
	shift
	"$@" || { not_ok "set-up: $what"; finish; }
}

# finish: print "N passed, M failed" and exit, non-zero if a check failed
# or none ran.
finish() {
	echo "$_passed passed, $_failed failed"
	[ $_failed -eq 0 ] && [ $_passed -gt 0 ]
	exit
}

# tally LOG [RC]: add the totals of a run that logged to LOG and exited
# with RC (default 0) to this one's: its last "N passed, M failed" line.
# A run without such a line counts as one failure, and so does a non-zero
# RC with no failure in its totals (it died after them).  Sets
# tally_passed and tally_failed to what was added, and tally_note to
# " (timed out: ...)" for RC 124, timeout(1)'s: the last totals seen are
# then only those of the tests that ended, not the whole run's.  Returns
# non-zero if the run failed.
# shellcheck disable=SC2034 # tally_note: for the caller's report
tally() {
	local log=$1 rc=${2:-0} line
	tally_note=""
	[ "$rc" -eq 124 ] && tally_note=" (timed out: totals of the tests that ended)"
	line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		tally_passed=0 tally_failed=1
	else
		tally_passed=${line%% passed*}
		tally_failed=${line#*passed, }
		tally_failed=${tally_failed%% failed}
		[ "$rc" -ne 0 ] && [ "$tally_failed" -eq 0 ] && tally_failed=1
	fi
	_passed=$((_passed + tally_passed))
	_failed=$((_failed + tally_failed))
	[ "$tally_failed" -eq 0 ]
}
