#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host's half of host_run (tests/vm/lib.sh): runs, natively and one at
# a time, the analysis a VM test asks for (nsdump -r on a trace, the Python
# checks), so that it does not run under TCG, where parsing one NIC run's
# JSON took 25-40 s against 1 s here.  Started and stopped by run-vm.sh.
#
#   tests/vm/hostrun.sh <queue dir> <scratch dir> <guest's scratch path>
#
# A request is <queue>/<id>.go, written by the guest whole and then renamed:
# NUL-separated fields, the file its stdout goes to ("" for <id>.out), the
# file its stdin comes from ("" for /dev/null), NAME=value settings for its
# environment, then the command and its arguments.  The guest's scratch
# path in any field is this host's scratch directory; the command must be
# python3 or a program of this repository (the guest is ours, but a typo
# should not run an arbitrary host command).  It runs in the repository;
# its stderr goes to <id>.err, and its status to <id>.rc, which is renamed
# into place last: the guest waits for it.

set -u
(($# == 3)) || { echo "usage: $0 <queue dir> <scratch dir> <guest scratch path>" >&2; exit 2; }
QUEUE=$1 SCRATCH=$2 GUEST=$3
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Sets status: the request's exit status (126 refused).
run_request() { # <id>
	local id=$1 fields=() out in i envs=()
	mapfile -d '' fields <"$id.run"
	for i in "${!fields[@]}"; do
		fields[i]=${fields[i]//"$GUEST/"/"$SCRATCH/"}
	done
	out=${fields[0]:-$id.out} in=${fields[1]:-/dev/null}
	fields=("${fields[@]:2}")
	while [[ ${fields[0]:-} =~ ^[A-Z_][A-Z0-9_]*= ]]; do
		envs+=("${fields[0]}")
		fields=("${fields[@]:1}")
	done
	case ${fields[0]:-} in
	python3 | "$REPO"/*) ;;
	*)
		echo "hostrun: refused '${fields[0]:-}': not python3 nor a program in $REPO" >"$id.err"
		status=126
		return ;;
	esac
	(cd "$REPO" && exec env "${envs[@]}" "${fields[@]}") <"$in" >"$out" 2>"$id.err"
	status=$?
}

serve() { # <id>.go
	local id=${1%.go} status
	mv "$1" "$id.run" 2>/dev/null || return 0
	run_request "$id"
	echo "$status" >"$id.rc.tmp" && mv "$id.rc.tmp" "$id.rc"
}

# Polled: no inotify tool is in a minimal Debian, and a request comes a
# few times a minute.
while [[ -d $QUEUE ]]; do
	for go in "$QUEUE"/*.go; do
		[[ -e $go ]] && serve "$go"
	done
	sleep 0.05
done
