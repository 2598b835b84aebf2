# SPDX-License-Identifier: GPL-2.0
#
# What every in-VM test script shares; source it first:
#   . "${NS_REPO:?}/tests/vm/lib.sh"
# TAP on stdout: tap <status> <description> (status 0 is a pass, like an
# exit status), skip <description> <reason>, die <reason> (fails and
# exits), and at the end `tap_finish` (prints the plan, exits 0 or 1).
set -u
REPO=${NS_REPO:?}
NSDUMP=${NS_NSDUMP:-$REPO/nsdump/nsdump}
BENCH=$REPO/bench
W=$(mktemp -d)

n=0 failed=0
tap() {
	n=$((n + 1))
	if [[ $1 == 0 ]]; then echo "ok $n - $2"; else
		failed=$((failed + 1)); echo "not ok $n - $2"; fi
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
die() { echo "# $*"; tap 1 "$*"; echo "1..$n"; exit 1; }
tap_finish() {
	echo "1..$n"
	((failed == 0))
	exit $?
}

# Run a command in the peer network namespace (eth1, $NS_PEER_IP).
peer() { ip netns exec "$NS_PEER_NS" "$@"; }
