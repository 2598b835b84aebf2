#!/bin/sh
# Run the unit tests and the command-line tests; print every TAP line and
# end with "N passed, N failed".  Exit status 1 if anything failed or a
# test program died (a sanitizer report aborts it).
obj=${1:-obj}
here=$(dirname "$0")
log=$(mktemp)
status=0
trap 'rm -f "$log"' EXIT

# not through a pipe: its status would be tee's, and a sanitizer abort lost
run() {	# run NAME COMMAND...: its TAP lines into the log, a line if it died
	name=$1; shift
	out=$(mktemp)
	"$@" >"$out" 2>&1; rc=$?
	cat "$out" | tee -a "$log"
	rm -f "$out"
	[ $rc -eq 0 ] || echo "not ok - $name exited with status $rc" | tee -a "$log"
}
run "unit tests" "$obj/unit"
run "cli tests" sh "$here/cli.sh" "$obj"

passed=$(grep -c '^ok' "$log")
failed=$(grep -c '^not ok' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
