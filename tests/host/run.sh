#!/bin/sh
# Run the unit tests and the command-line tests; print every TAP line and
# end with "N passed, N failed".  Exit status 1 if anything failed or a
# test program died (a sanitizer report aborts it).
obj=${1:-obj}
here=$(dirname "$0")
log=$(mktemp)
status=0
trap 'rm -f "$log"' EXIT

"$obj/unit" | tee "$log" || { echo "not ok - unit tests exited with status $?" | tee -a "$log"; }
sh "$here/cli.sh" "$obj" | tee -a "$log" || { echo "not ok - cli tests exited with status $?" | tee -a "$log"; }

passed=$(grep -c '^ok' "$log")
failed=$(grep -c '^not ok' "$log")
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status
