# shellcheck shell=bash
# Shared helpers for the scripts in this folder.  Sourced, never run.
#
# Everything heavy lives in one cache folder outside the checkout, so a
# fresh clone reuses earlier kernel builds, ccache objects and the base
# image.  Override with CGF_CACHE=/some/where.

CGF_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CGF_CACHE=${CGF_CACHE:-/var/cache/cgfilterd}
CGF_KVERSION=6.1

die() {
	printf '%s: error: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

say() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
}

# need_pkgs PKG...: install the Debian packages that are missing.
# Stamp-free: dpkg is the source of truth, so this is cheap when nothing
# is missing and it works the same on a fresh machine.
need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || die "missing Debian packages (run as root to install): ${missing[*]}"
	say "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq || die "apt-get update failed"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install failed for: ${missing[*]}"
}

# hash_files FILE...: one digest over the names and contents of FILEs,
# for "did the inputs of this step change" stamps.
hash_files() {
	local f
	for f in "$@"; do
		printf '%s\0' "${f##*/}"
		cat "$f"
	done | sha256sum | cut -d' ' -f1
}

# cache_lock NAME: hold an exclusive lock on the cache's NAME until this
# script exits, waiting (and saying so) while another checkout or session
# builds into the same cache.  Two kernel builds into one tree at once
# would corrupt it; two at once on two cores would only be slower.
cache_lock() {
	local fd
	mkdir -p "$CGF_CACHE"
	exec {fd}>"$CGF_CACHE/.$1.lock"
	if ! flock -n "$fd"; then
		say "waiting for another $1 build in $CGF_CACHE"
		flock "$fd"
	fi
}

# git_k: git in the kernel cache repository, with an identity of its own
# (commits there are build state, never project history).
git_k() { git -c user.name=cgfilterd-build -c user.email=build@cgfilterd.invalid "$@"; }

# ensure_worktree REPO TREE ARGS...: a worktree of the kernel repository
# at TREE, created with `git worktree add ARGS` when it is missing.
ensure_worktree() {
	local repo=$1 tree=$2
	shift 2
	[ -d "$tree" ] && return 0
	git_k -C "$repo" worktree prune
	git_k -C "$repo" worktree add -q "$@" "$tree" pristine
}
