# shellcheck shell=bash
# Inside the guest: real containers, run by systemd-nspawn and machinectl
# (Debian's systemd-container, in the image) from a container tree made
# of the guest's own files, with nothing downloaded.  Sourced by
# tests/vm/containers.test and demo/container-host.
#
#   ctr_tree                  build the tree at $CTR_TREE (once per boot)
#   ctr_machine NAME [BIND]   make NAME a machine that `machinectl start`
#                             boots from the tree, with the host's network;
#                             BIND: a host directory the container sees
#                             read-write at /cgf-out
#   ctr_run NAME CMD...       run CMD as the first and only process of a
#                             container NAME (systemd-nspawn, no boot),
#                             in machine.slice/machine-NAME.scope
#   ctr_exec NAME CMD...      run CMD in the booted container NAME as a
#                             service of its own systemd (systemd-run -M)
#   ctr_cgroup NAME           the container's cgroup directory
#   ctr_leader NAME           its PID 1 as the host sees it
#   ctr_wait_rebooted NAME OLD_LEADER   until NAME has booted again
#   ctr_gone NAME             wait until a container's cgroup is gone
#   ctr_forget NAME           stop NAME and remove what ctr_machine made
#
# The tree.  /usr is a hard-linked copy of the guest's /usr (cp -al: no
# data copied; the guest's disk is a copy-on-write overlay of the image,
# and the tree lies on the same ext4), the top-level directories and the
# merged-/usr symlinks as the guest has them, and an /etc of its own: the
# guest's users, an empty machine-id (a container gets a transient one)
# and nothing enabled but what the packages enable in /usr.  The
# container's root never writes to it: a non-booted container runs with
# the tree read-only (--read-only), a booted one read-only with a /var of
# its own in memory (Volatile=state).  Hard links share the inode, so a
# writable tree would let root in the container change the guest's own
# /usr; read-only mounts are what keeps it out.  Under /opt/cgf the tree
# carries the probes (libc only) and, for booted containers that get a
# /cgf-out, a unit that sends the container's first packets at boot
# (cgf-first-packet.service, its arguments in /cgf-out/first.args, its
# output in /cgf-out/first.out).
#
# Networking: the containers share the host's network namespace
# (Private=no, VirtualEthernet=no in the .nspawn file, overriding the
# --network-veth of systemd-nspawn@.service).  The guest has no network
# beyond lo, where the tests' and the demo's listeners are, and a
# cgroup_skb filter judges a packet by the cgroup of the socket that sent
# it, whatever its network namespace: with veth a test would only add a
# link to configure, not a case the filter sees differently.
# User namespaces: a booted machine keeps the -U of systemd-nspawn@.service
# (root in it is an unprivileged user on the host), with
# PrivateUsersOwnership=map: ID-mapped mounts, never the recursive chown
# that -U falls back to, which would change the owner of the guest's own
# /usr through the hard links.  ctr_run runs containers as a direct
# systemd-nspawn call does by default, without a user namespace.
CGF_BUILD=${CGF_BUILD:?run through scripts/vm}
CTR_TREE=${CTR_TREE:-/var/lib/machines/.cgf-tree}
CTR_CGROOT=/sys/fs/cgroup/machine.slice

# _ctr_etc DIR: the container's own /etc.
_ctr_etc() {
	local f etc=$1/etc
	mkdir -p "$etc/systemd/system/sysinit.target.wants" || return 1
	for f in passwd group shadow gshadow nsswitch.conf; do
		[ -e "/etc/$f" ] && { cp -a "/etc/$f" "$etc/$f" || return 1; }
	done
	ln -sf ../usr/lib/os-release "$etc/os-release" &&
		: >"$etc/machine-id" &&
		printf 'ctr\n' >"$etc/hostname" || return 1
	cat >"$etc/systemd/system/cgf-first-packet.service" <<-'UNIT' || return 1
	# The container's first packets, at boot (tests/vm/containers.sh).
	[Unit]
	Description=cgfilterd test: the container's first packets
	ConditionPathExists=/cgf-out/first.args
	# Before the container reports its boot done: `machinectl start`
	# returns with the probe's answer in /cgf-out/first.out.
	DefaultDependencies=no
	Before=sysinit.target
	[Service]
	Type=oneshot
	ExecStart=/bin/sh -c 'exec /opt/cgf/ctrprobe first $$(cat /cgf-out/first.args) >/cgf-out/first.out 2>&1'
	UNIT
	ln -sf ../cgf-first-packet.service "$etc/systemd/system/sysinit.target.wants/cgf-first-packet.service"
}

ctr_tree() {
	local d
	[ -e "$CTR_TREE/.complete" ] && return 0
	rm -rf "$CTR_TREE"
	mkdir -p "$CTR_TREE" || return 1
	cp -al /usr "$CTR_TREE/usr" || return 1
	# bin, sbin, lib*: symlinks into /usr on a merged-/usr system.
	for d in bin sbin lib lib32 lib64 libx32; do
		if [ -L "/$d" ]; then
			cp -P "/$d" "$CTR_TREE/$d" || return 1
		elif [ -d "/$d" ]; then
			cp -al "/$d" "$CTR_TREE/$d" || return 1
		fi
	done
	for d in dev proc sys run tmp var/tmp var/log var/lib root home mnt cgf-out opt/cgf; do
		mkdir -p "$CTR_TREE/$d" || return 1
	done
	chmod 1777 "$CTR_TREE/tmp" "$CTR_TREE/var/tmp"
	_ctr_etc "$CTR_TREE" || return 1
	install -m 0755 "$CGF_BUILD/tests/vm/tools/ctrprobe" "$CGF_BUILD/tests/vm/tools/netprobe" \
		"$CTR_TREE/opt/cgf/" || return 1
	: >"$CTR_TREE/.complete"
}

ctr_machine() {
	local name=$1 bind=${2:-}
	mkdir -p /etc/systemd/nspawn || return 1
	ln -sfn "$CTR_TREE" "/var/lib/machines/$name" || return 1
	{
		echo "# $name: a container tree of the guest's own files (tests/vm/containers.sh)."
		echo "[Exec]"
		echo "# Started (machinectl start returns) once its systemd has booted."
		echo "NotifyReady=yes"
		echo "# The tree has neither, and is read-only."
		echo "Timezone=off"
		echo "ResolvConf=off"
		echo "[Files]"
		echo "Volatile=state"
		echo "PrivateUsersOwnership=map"
		[ -n "$bind" ] && echo "Bind=$bind:/cgf-out"
		echo "[Network]"
		echo "Private=no"
		echo "VirtualEthernet=no"
	} >"/etc/systemd/nspawn/$name.nspawn"
}

ctr_run() {
	local name=$1
	shift
	systemd-nspawn --quiet --machine="$name" --directory="$CTR_TREE" --read-only \
		--console=pipe --resolv-conf=off --timezone=off --link-journal=no "$@"
}

ctr_exec() {
	local name=$1
	shift
	systemd-run --quiet --machine="$name" --wait --pipe --collect "$@"
}

ctr_cgroup() {
	if [ -d "$CTR_CGROOT/systemd-nspawn@$1.service" ]; then
		echo "$CTR_CGROOT/systemd-nspawn@$1.service"
	else
		echo "$CTR_CGROOT/machine-$1.scope"
	fi
}

ctr_leader() { machinectl show "$1" -p Leader --value 2>/dev/null; }

# A reboot ends the container's PID 1 (nspawn exits 133, and
# systemd-nspawn@.service starts it again); the unit is active again once
# the new one has reported its boot done (Type=notify).  180 s: a boot
# under TCG takes tens of seconds.
ctr_wait_rebooted() {
	local _ leader
	for _ in $(seq 1800); do
		leader=$(ctr_leader "$1")
		if [ -n "$leader" ] && [ "$leader" != "$2" ] &&
			[ "$(systemctl is-active "systemd-nspawn@$1.service")" = active ]; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

ctr_gone() {
	local _
	for _ in $(seq 300); do
		[ ! -d "$CTR_CGROOT/machine-$1.scope" ] && [ ! -d "$CTR_CGROOT/systemd-nspawn@$1.service" ] &&
			return 0
		sleep 0.05
	done
	return 1
}

ctr_forget() {
	machinectl terminate "$1" 2>/dev/null
	systemctl stop "systemd-nspawn@$1.service" 2>/dev/null
	systemctl reset-failed "systemd-nspawn@$1.service" "machine-$1.scope" 2>/dev/null
	rm -f "/var/lib/machines/$1" "/etc/systemd/nspawn/$1.nspawn"
}
