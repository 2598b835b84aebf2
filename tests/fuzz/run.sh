#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# run.sh OBJ TARGET...: each target fuzzed FUZZ_SECONDS seconds in one
# process (the machine's other core is someone else's), starting from
# corpus/<t>/ and OBJ/seeds/<t>/; then corpus/<t>/ is replaced by the
# minimized merge (-merge=1) of itself, the seeds and what the run found.
# A crash stops that target's run: its input goes to crashes/<t>/ and the
# script fails at the end.  One summary line per target, S the seconds it
# ran (less than FUZZ_SECONDS when a crash stopped it):
#   fuzz <t>: N runs in S s (E exec/s), cov C ft F, corpus A -> B inputs
obj=$1; shift
here=$(dirname "$0")
secs=${FUZZ_SECONDS:-60}
status=0

max_len() {
	case $1 in
	file) echo 16384 ;;	# the largest seed (events and blocks) fits
	stream) echo 8192 ;;
	*) echo 512 ;;
	esac
}

for t in "$@"; do
	fuzzer=$obj/fuzz-$t
	work=$obj/work/$t merged=$obj/merged/$t art=$obj/artifacts/$t
	corpus=$here/corpus/$t log=$obj/fuzz-$t.log
	rm -rf "$work" "$merged" "$art"
	mkdir -p "$work" "$merged" "$art" "$corpus"
	before=$(ls "$corpus" | wc -l)
	# new inputs go to the first directory; stdout and stderr of the
	# target closed (nsdump's messages), libFuzzer's own kept
	t0=$(date +%s%N) crashed=
	"$fuzzer" -max_total_time="$secs" -max_len="$(max_len "$t")" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-close_fd_mask=3 -artifact_prefix="$art/" \
		"$work" "$corpus" "$obj/seeds/$t" >"$log" 2>&1
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	for a in "$art"/*; do
		[ -f "$a" ] || continue
		crashed=", stopped by a crash"
		mkdir -p "$here/crashes/$t"
		cp "$a" "$here/crashes/$t/"
		echo "fuzz $t: CRASH, input kept as crashes/$t/${a##*/}; fix it:" >&2
		grep -m1 -A12 '^==[0-9]*==ERROR\|property failed\|^SUMMARY' "$log" >&2
		status=1
	done
	[ $rc -eq 0 ] || [ $status -ne 0 ] || {
		echo "fuzz $t: libFuzzer exited $rc, see $log" >&2; status=1; }
	"$fuzzer" -merge=1 -max_len="$(max_len "$t")" -close_fd_mask=3 \
		"$merged" "$corpus" "$obj/seeds/$t" "$work" >"$log.merge" 2>&1 || {
		echo "fuzz $t: merge failed, see $log.merge" >&2; status=1; continue; }
	rm -f "$corpus"/*
	cp "$merged"/* "$corpus"/
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	# libFuzzer's own exec/s counts whole seconds: 0 for a crash in the first
	eps=$(( ${runs:-0} * 1000 / (ms ? ms : 1) ))
	last=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
	echo "fuzz $t: ${runs:-?} runs in $((ms / 1000)).$((ms % 1000 / 100)) s ($eps exec/s)$crashed, cov ${cov:-?} ft ${ft:-?}, corpus $before -> $(ls "$corpus" | wc -l) inputs"
done
exit $status
