#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# smoke.sh OBJ TARGET...: each target fuzzed SMOKE_RUNS runs (libFuzzer's
# count, the corpus' own first pass included) with seed SMOKE_SEED,
# starting from corpus/<t>/ and crashes/<t>/, so that a property an ABI
# change breaks fails `make check`, not a later `make fuzz`.  The corpus
# is left as it is: what the run finds goes to OBJ/smoke/<t>/.  A TAP
# line per target saying what it ran, then "N passed, N failed"; a crash
# is not ok, with its report and its input's path.
obj=$1; shift
here=$(dirname "$0")
runs=${SMOKE_RUNS:-20000} seed=${SMOKE_SEED:-1}
. "$here/../tap.sh"

for t in "$@"; do
	dir=$obj/smoke/$t log=$obj/smoke/$t.log
	rm -rf "$dir"
	mkdir -p "$dir/new" "$dir/artifacts"
	set --
	for d in corpus crashes; do
		[ -d "$here/$d/$t" ] && set -- "$@" "$here/$d/$t"
	done
	inputs=$(find "$@" -type f 2>/dev/null | wc -l)
	t0=$(date +%s%N)
	"$obj/fuzz-$t" -runs="$runs" -seed="$seed" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -close_fd_mask=3 \
		-artifact_prefix="$dir/artifacts/" "$dir/new" "$@" >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	what="$t: ${done_runs:-?} of $runs runs, seed $seed, from $inputs inputs, $((ms / 1000)).$((ms % 1000 / 100)) s"
	if [ $rc -eq 0 ] && [ "${done_runs:-0}" -ge "$runs" ]; then
		ok "fuzz smoke: $what ($((done_runs * 1000 / (ms ? ms : 1))) exec/s)"
	else
		not_ok "fuzz smoke: $what, exit $rc"
		grep -m1 -A20 'property failed\|^==[0-9]*== *ERROR' "$log" |
			sed 's/^/# /'
		for a in "$dir/artifacts"/*; do
			[ -f "$a" ] && echo "# the input: $a (keep it in crashes/$t/ once fixed)"
		done
	fi
done
tap_summary
[ $failed -eq 0 ]
