# shellcheck shell=bash
# Assertions for the VM tests (bash, run inside the guest by tests/vm/run).
# Each check prints "ok - what" or "not ok - what"; finish prints the
# totals and sets the exit status, so a test cannot pass by skipping.

CGF_TOP=${CGF_TOP:?run through scripts/vm}
CGF_BUILD=${CGF_BUILD:-$CGF_TOP/build}
NETPROBE=$CGF_BUILD/tests/vm/netprobe
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

# wait_for_file FILE: bounded wait for a receiver to be ready.
wait_for_file() {
	local i
	for i in $(seq 100); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

finish() {
	echo "$_passed passed, $_failed failed"
	[ $_failed -eq 0 ] && [ $_passed -gt 0 ]
	exit
}
