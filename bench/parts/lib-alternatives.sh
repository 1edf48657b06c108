# shellcheck shell=bash
# bench/parts/lib-alternatives.sh: one policy, written for each of the
# three controllers that bench/parts/3-alternatives compares (cgfilterd,
# nftables, systemd's IPAddressDeny=/IPAddressAllow=).  Only text
# generators: nothing here touches the kernel, so that what each
# controller is given can be read (and diffed) on its own.
#
# The policy, per tenant, egress, IPv4 prefixes (all 10.x.y.0/24, from
# the index, so that every run and every controller gets the same ones):
#   deny  N:  prefixes 0..N-1 denied, everything else passes (the
#             benchmark's 127.0.0.1 UDP among it)
#   allow N:  everything denied but N prefixes: 0..N-2, with 127.0.0.0/8
#             second to last (a lookup that walks the list in order
#             meets it late; a prefix structure does not care)
# Plus a host guard on the tenants' parent, as in
# policies/container-host.yaml: 169.254.169.254 (the cloud metadata
# service) denied for every tenant.

ALT_GUARD_DENY=169.254.169.254

# alt_prefixes KIND N: the tenant rules' prefixes, one per line.
alt_prefixes() {
	awk -v kind="$1" -v n="$2" 'BEGIN {
		for (i = 0; i < n; i++) {
			if (kind == "allow" && i == n - 2) { print "127.0.0.0/8"; continue }
			j = (kind == "allow" && i == n - 1) ? i - 1 : i
			printf "10.%d.%d.0/24\n", int(j / 256), j % 256
		}
	}'
}

# alt_prefix_host INDEX: an address inside prefix INDEX (for the probes
# that check a controller really applied the rules).
alt_prefix_host() { echo "10.$(($1 / 256)).$(($1 % 256)).1"; }

# alt_cgf_policy KIND N PARENT: cgfilterd's policy, the tenant model of
# policies/container-host.yaml: a rules guard on PARENT with mode none,
# and every child t-* (the tenants) and new-* (bench part 2's late
# cgroups) given the tenant rules.
alt_cgf_policy() {
	local kind=$1 n=$2 parent=$3
	cat <<-EOF
	version: 1
	filters:
	  guard:
	    type: rules
	    direction: egress
	    deny:
	      - cidr: $ALT_GUARD_DENY
	  tenant:
	    type: rules
	    direction: egress
	EOF
	[ "$kind" = allow ] && echo "    default: deny"
	echo "    $kind:"
	alt_prefixes "$kind" "$n" | sed 's/^/      - cidr: /'
	cat <<-EOF
	attachments:
	  - cgroup: $parent
	    filters: [guard]
	    mode: none
	    tenants:
	      "t-*": [tenant]
	      "new-*": [tenant]
	EOF
}

# alt_nft_ruleset KIND N STYLE CATCHALL PARENT TENANTS: an nft script
# (for nft -f) that creates table inet cgfbench.  The tenants are the
# cgroups PARENT/t-1 .. PARENT/t-TENANTS (cgroup level 2).  The prefixes
# are in an interval set either way; STYLE says how a packet finds its
# tenant's rules:
#   naive  one rule per tenant, "socket cgroupv2 level 2 PATH goto
#          tenant": evaluated in order, so a tenant's cost grows with
#          its place in the list
#   vmap   one verdict map from tenant cgroup to "goto tenant": a hash
#          lookup, what an nft expert would write
# CATCHALL 1 adds a last rule that drops everything else of PARENT: a
# child no rule or map element names (one created after the ruleset was
# loaded) gets nothing through, which is cgfilterd's fail-closed
# behaviour; without it such a child is not filtered at all.
# nft resolves a cgroup path to its id when it loads the ruleset, so
# every tenant cgroup must exist by then.
alt_nft_ruleset() {
	local kind=$1 n=$2 style=$3 catchall=$4 parent=$5 tenants=$6
	echo "table inet cgfbench {"
	echo "	set prefixes {"
	echo "		type ipv4_addr; flags interval;"
	echo "		elements = {"
	alt_prefixes "$kind" "$n" | sed 's/^/\t\t\t/; s/$/,/'
	echo "		}"
	echo "	}"
	echo "	chain tenant {"
	if [ "$kind" = deny ]; then
		echo "		ip daddr @prefixes drop"
		echo "		accept"
	else
		# Default deny: IPv6 too, as cgfilterd's default: deny does.
		echo "		ip daddr @prefixes accept"
		echo "		drop"
	fi
	echo "	}"
	if [ "$style" = vmap ]; then
		echo "	map tenants {"
		echo "		typeof socket cgroupv2 level 2 : verdict;"
		echo "		elements = {"
		seq -f "			\"$parent/t-%.0f\" : goto tenant," 1 "$tenants"
		echo "		}"
		echo "	}"
	fi
	echo "	chain out {"
	echo "		type filter hook output priority filter; policy accept;"
	echo "		socket cgroupv2 level 1 \"$parent\" ip daddr $ALT_GUARD_DENY drop"
	if [ "$style" = vmap ]; then
		echo "		socket cgroupv2 level 2 vmap @tenants"
	else
		seq -f "		socket cgroupv2 level 2 \"$parent/t-%.0f\" goto tenant" 1 "$tenants"
	fi
	[ "$catchall" = 1 ] && echo "		socket cgroupv2 level 1 \"$parent\" drop"
	echo "	}"
	echo "}"
}

# alt_systemd_props KIND N: the tenant rules as systemd properties, one
# Key=Value per line (for a unit file, or "-p" each for systemd-run).
# systemd's lists are per unit and have no order; an address in both
# lists is allowed, so the allow list is "allow these, deny any".
alt_systemd_props() {
	local kind=$1 n=$2
	if [ "$kind" = deny ]; then
		echo "IPAddressDeny=$(alt_prefixes deny "$n" | tr '\n' ' ' | sed 's/ $//')"
	else
		echo "IPAddressAllow=$(alt_prefixes allow "$n" | tr '\n' ' ' | sed 's/ $//')"
		echo "IPAddressDeny=any"
	fi
}
