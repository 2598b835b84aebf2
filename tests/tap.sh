# SPDX-License-Identifier: GPL-2.0
#
# TAP for every test script, sh or bash, written once.  Source it:
#   . "$REPO/tests/tap.sh"
#   ok DESC                 a pass
#   not_ok DESC [REASON]    a failure (the reason as a comment)
#   skip DESC REASON        a test that cannot run here
#   tap STATUS DESC         a pass if STATUS is 0, as an exit status is
#   tap_plan                "1..N"
#   tap_summary             "N passed, N failed" (", N skipped" if any)
#   tap_finish              both, then exit 0, or 1 if anything failed
# The counts, for the caller to read: n (lines so far), passed, failed,
# skipped; a function tap_on_fail, if the caller defines one, gets each
# failure's description.  POSIX sh: the fuzz, ABI and host scripts are sh scripts.
n=0 passed=0 failed=0 skipped=0

ok() {
	n=$((n + 1)) passed=$((passed + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1${2:+ # $2}"
	if command -v tap_on_fail >/dev/null; then tap_on_fail "$1"; fi
}

skip() {
	n=$((n + 1)) skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
}

tap() {
	if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi
}

tap_plan() {
	echo "1..$n"
}

tap_summary() {
	if [ "$skipped" -gt 0 ]; then
		echo "$passed passed, $failed failed, $skipped skipped"
	else
		echo "$passed passed, $failed failed"
	fi
}

tap_finish() {
	tap_plan
	tap_summary
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}
