# shellcheck shell=bash
# Inside the guest: run cgfilterd under systemd with the checkout's unit
# file (units/cgfilterd.service) and the share's binaries ($CGF_BUILD),
# so that tests, benchmarks and the demo need no new image.  Sourced by
# tests/vm/daemon-*.test, bench/daemon-* and demo/container-host.
#
#   cgf_unit_install   the unit as the image would carry it, but with
#                      ExecStart/ExecReload pointing into $CGF_BUILD
#   cgf_unit_start     systemctl start; fails unless it reached READY
#   cgf_unit_pid       the daemon's main pid (empty when not running)
#   cgf_unit_wait_restarted OLD_PID   wait until a new pid is up (READY)
#   cgf_unit_remove    stop it and remove what cgf_unit_install put down
#
# scripts/vm masks cgfilterd.service unless --daemon (a symlink to
# /dev/null from systemd-debug-generator, in /run/systemd/generator.early,
# which outranks /run/systemd/system).  The unit goes to
# /run/systemd/system.control, which outranks the generators: a runtime
# copy that wins over the mask without touching it, and goes away with
# the guest.
CGF_BUILD=${CGF_BUILD:?run through scripts/vm}
CGF_TOP=${CGF_TOP:?run through scripts/vm}
CGF_UNIT_DIR=/run/systemd/system.control

cgf_unit_install() {
	mkdir -p "$CGF_UNIT_DIR/cgfilterd.service.d" || return 1
	cp "$CGF_TOP/units/cgfilterd.service" "$CGF_UNIT_DIR/cgfilterd.service" || return 1
	cat >"$CGF_UNIT_DIR/cgfilterd.service.d/50-share.conf" <<-DROPIN || return 1
	# The share's build instead of the image's /usr: only the binaries change.
	[Service]
	ExecStart=
	ExecStart=$CGF_BUILD/daemon/cgfilterd
	ExecReload=
	ExecReload=$CGF_BUILD/daemon/cgfilterctl reload --pid \$MAINPID
	DROPIN
	systemctl daemon-reload
}

cgf_unit_pid() {
	local pid
	pid=$(systemctl show -P MainPID cgfilterd.service 2>/dev/null)
	[ "${pid:-0}" != 0 ] && echo "$pid"
}

cgf_unit_start() {
	systemctl start cgfilterd.service && [ "$(systemctl is-active cgfilterd.service)" = active ]
}

# Restart=on-failure brings a killed daemon back; wait for a new main pid
# that is active (Type=notify: active means READY=1 was sent).
cgf_unit_wait_restarted() {
	local old=$1 _ pid
	for _ in $(seq 600); do
		pid=$(cgf_unit_pid)
		if [ -n "$pid" ] && [ "$pid" != "$old" ] && [ "$(systemctl is-active cgfilterd.service)" = active ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

cgf_unit_remove() {
	systemctl stop cgfilterd.service 2>/dev/null
	systemctl reset-failed cgfilterd.service 2>/dev/null
	rm -rf "$CGF_UNIT_DIR/cgfilterd.service" "$CGF_UNIT_DIR/cgfilterd.service.d"
	systemctl daemon-reload
}

# cgf_tree ROOT: bpftool's view of the lists below ROOT (ids included).
cgf_tree() { bpftool cgroup tree "$1" 2>/dev/null | grep -v '^libbpf:'; }

# cgf_reload_line: what the daemon said about the last reload.
cgf_reload_line() { cat /run/cgfilterd/reload 2>/dev/null; }

# cgf_journal_since STAMP: the unit's journal since STAMP (date +%s.%N).
cgf_journal_since() { journalctl -u cgfilterd.service -o cat --no-pager --since="@$1" 2>/dev/null; }

# cgf_wait_udp CGROUP PORT [TRIES]: until a datagram from CGROUP to
# 127.0.0.1:PORT passes the egress filters (0.1 s per try).
cgf_wait_udp() {
	local _
	for _ in $(seq "${3:-100}"); do
		"$NETPROBE" --cgroup "$1" udp-send 127.0.0.1 "$2" x >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}
