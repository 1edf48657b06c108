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
