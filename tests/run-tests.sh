#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The `make check` aggregator: builds, host tests, ABI test, checkpatch and
# the in-VM tests, as one TAP stream ending in "N passed, N failed, N skipped".
#
#   tests/run-tests.sh [build] [host] [checkpatch] [deb] [vm] [debug]  (default: all)
#
# Environment:
#   TESTS=t_boot.sh,t_x.sh   only these VM tests (default every tests/vm/t_*.sh)
#   DEBUG_TESTS=...          the VM tests the debug phase boots on the debug
#                            kernel (default t_stress.sh,t_ioctl.sh,t_recv.sh;
#                            none when TESTS is given)
#   VM_JOBS=N                VMs run at once (default 2: under TCG with
#                            thread=single each VM keeps one host core busy)
#   V=1                      print every test's output, not just failures'
#   ALLOW_MISSING=1          a suite that does not exist yet is a skip, not a
#                            failure (never in CI)
#   plus everything tests/vm/run-vm.sh reads (KIMAGE, VM_MODULE,
#   VM_TIMEOUT, ...): a kernel and module copied aside stay under test
#   while the build goes on.
#
# Suites other people provide, and how they are found:
#   nsdump unit tests    `make -C nsdump test`
#   fuzz corpus replay   `make -C tests/fuzz replay`
#   host tests           tests/host/Makefile (target check, else test, else
#                        default) and/or executable tests/host/t_* (exit 0
#                        pass, 1 fail, 4 skip with a last line "SKIP: why")
#   ABI header test      tests/abi/Makefile (same targets) or tests/abi/run.sh
#   VM tests             executable tests/vm/t_*.sh, run as PID 1's command in
#                        a fresh VM each; exit 0 pass, 1 fail, 4 skip (print
#                        the reason as the last line, e.g. "SKIP: no PMU");
#                        host-built helpers: tests/vm/*.mk, run with make -f
#                        on the host before the VM tests
# Logs: build/tests/<name>.log (VM tests: build/tests/<name>/{output,console}.log)

set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
LOGS=$REPO/build/tests
mkdir -p "$LOGS"
KSRC_DIR=${KSRC:-$REPO/build/linux}
V=${V:-0}
ALLOW_MISSING=${ALLOW_MISSING:-0}
[[ ${CI:-} == true ]] && ALLOW_MISSING=0

n=0 passed=0 failed=0 skipped=0 missing=0
failures=() subfailures=()

echo "TAP version 13"

diag() { sed 's/^/# /'; }

# Show a log: whole if V=1 or asked, else the tail.
show_log() {
	local log=$1 lines=${2:-40}
	[[ -s $log ]] || return 0
	if [[ $V == 1 ]]; then diag <"$log"; else tail -n "$lines" "$log" | diag; fi
}

. "$REPO/tests/tap.sh"
# A failure is also named again in the summary.
tap_on_fail() { failures+=("$1"); }
missing() {
	missing=$((missing + 1))
	if [[ $ALLOW_MISSING == 1 ]]; then
		skip "$1" "MISSING: $2"
	else
		not_ok "$1" "MISSING: $2"
	fi
}

# run_logged <name> <log> <command...>: one TAP line from an exit status;
# 4 is a skip (a host test that cannot run here), its reason the last
# "SKIP" line of the log, as for the VM tests.
run_logged() {
	local name=$1 log=$2 rc reason
	shift 2
	"$@" >"$log" 2>&1
	rc=$?
	if ((rc == 0)); then
		ok "$name"
		[[ $V == 1 ]] && show_log "$log"
	elif ((rc == 4)); then
		reason=$(grep -E '^(# )?SKIP' "$log" | tail -n1)
		skip "$name" "${reason#*SKIP}"
		[[ $V == 1 ]] && show_log "$log"
	else
		not_ok "$name" "exit $rc, log $log"
		show_log "$log"
		failed_subtests "$name" "$log"
	fi
	return $rc
}

# The make target a suite directory offers: check, else test, else default.
suite_target() {
	local t
	for t in check test; do
		make -C "$1" -n "$t" >/dev/null 2>&1 && { echo "$t"; return; }
	done
	echo all
}

# The debug kernel builds in the background from the start, at nice 19:
# it takes only the CPU the rest leaves idle (the other kernel's links,
# the host tests' waits, a VM waiting for its analysis on the host), and
# phase_debug waits for it.  One core builds it while one VM test runs on
# the other: cold, the two builds and the VM tests together take less
# time than one after the other.
DEBUG_KOBJ=$REPO/build/linux-debug
debug_build_pid=
debug_build_start() {
	[[ -n $DEBUG_TESTS && -z $debug_build_pid ]] || return 0
	rm -f "$LOGS/build-debug.rc"
	# A session of its own, so that a run that ends early (a bail-out,
	# a signal) takes the whole build down with it.  Where the scheduler
	# groups tasks by session (autogroup), nice counts only within the
	# group, and a new session is a new group with an equal share of the
	# CPU: the group's own nice (/proc/self/autogroup) puts it behind.
	setsid bash -c '
		echo 19 >/proc/self/autogroup 2>/dev/null
		nice -n 19 make -s --no-print-directory module FLAVOUR=debug \
			KOBJ="$1" KIMAGE="$1/arch/x86/boot/bzImage" >"$2.log" 2>&1
		echo "$? $SECONDS" >"$2.rc"' _ "$DEBUG_KOBJ" "$LOGS/build-debug" &
	debug_build_pid=$!
	trap debug_build_stop EXIT
	trap 'exit 143' TERM INT HUP
}
debug_build_stop() {
	[[ -n $debug_build_pid && ! -f $LOGS/build-debug.rc ]] || return 0
	kill -- "-$debug_build_pid" 2>/dev/null
}

phase_build() {
	[[ " ${phases[*]} " == *" debug "* ]] && debug_build_start
	run_logged "build: user tools (make)" "$LOGS/build-tools.log" make -s --no-print-directory all
	if ! run_logged "build: kernel (make kernel FLAVOUR=${FLAVOUR:-netslice})" \
			"$LOGS/build-kernel.log" make -s --no-print-directory kernel; then
		echo "Bail out! kernel build failed"
		summary
	fi
	if [[ -f kernel/ns_module/Kbuild || -f kernel/ns_module/Makefile ]]; then
		run_logged "build: module (make module)" "$LOGS/build-module.log" \
			make -s --no-print-directory module
	else
		missing "build: module" "kernel/ns_module has no Kbuild or Makefile"
	fi
}

phase_host() {
	if [[ -f nsdump/Makefile ]] && make -C nsdump -n test >/dev/null 2>&1; then
		run_logged "host: nsdump unit tests (make -C nsdump test)" \
			"$LOGS/host-nsdump.log" make -s --no-print-directory -C nsdump test
	elif [[ ! -d tests/host ]]; then
		missing "host: unit tests" "neither 'make -C nsdump test' nor tests/host/"
	fi
	if [[ -f tests/host/Makefile ]]; then
		local t
		t=$(suite_target tests/host)
		run_logged "host: tests/host (make $t)" "$LOGS/host-tests.log" \
			make -s --no-print-directory -C tests/host "$t"
	fi
	local f
	for f in tests/host/t_*; do
		[[ -x $f && -f $f ]] || continue
		run_logged "host: $f" "$LOGS/host-${f##*/}.log" "$f"
	done

	# The workloads' own loopback self-test, and the module's ring code
	# run in user space under ASan/UBSan.
	if [[ -f bench/Makefile ]]; then
		run_logged "host: bench self-test (make -C bench test)" \
			"$LOGS/host-bench.log" make -s --no-print-directory -C bench test
	fi
	# The fuzz targets' corpus and crash inputs, replayed without clang.
	if [[ -f tests/fuzz/Makefile ]]; then
		run_logged "host: fuzz corpus replay (make -C tests/fuzz replay)" \
			"$LOGS/host-fuzz-replay.log" \
			make -s --no-print-directory -C tests/fuzz replay
		# then each target a few seconds from it, seed fixed (clang)
		run_logged "host: fuzz smoke, fixed seed (make -C tests/fuzz smoke)" \
			"$LOGS/host-fuzz-smoke.log" \
			make -s --no-print-directory -C tests/fuzz smoke
	fi
	# START and STOP's fast path (record.h), the kernel's own source,
	# against the search it replaces, under ASan/UBSan.
	if [[ -f kernel/ns_core/selftest/host/Makefile ]]; then
		run_logged "host: ns_core hot path in user space (selftest/host)" \
			"$LOGS/host-hotpath.log" \
			make -s --no-print-directory -C kernel/ns_core/selftest/host test
	fi
	if [[ -f kernel/ns_module/selftest/host/Makefile ]]; then
		run_logged "host: ns_module ring in user space (selftest/host)" \
			"$LOGS/host-ring.log" \
			make -s --no-print-directory -C kernel/ns_module/selftest/host test
	fi

	if [[ -f tests/abi/Makefile ]]; then
		local t
		t=$(suite_target tests/abi)
		run_logged "abi: header test (make -C tests/abi $t)" "$LOGS/abi.log" \
			make -s --no-print-directory -C tests/abi "$t"
	elif [[ -x tests/abi/run.sh ]]; then
		run_logged "abi: header test (tests/abi/run.sh)" "$LOGS/abi.log" tests/abi/run.sh
	else
		missing "abi: header test" "no tests/abi/Makefile or tests/abi/run.sh"
	fi
}

# checkpatch.pl --strict, run from the kernel tree on the installed copies so
# path-based rules apply as they will upstream (net/ comment style, uapi
# rules).  The module lives out of tree: its files are checked with --no-tree
# from the repo, which only skips the checks that look things up in the
# tree.  No message type is ignored.
phase_checkpatch() {
	if ! kernel/build-kernel.sh install >"$LOGS/checkpatch-install.log" 2>&1; then
		not_ok "checkpatch: install ns_core into $KSRC_DIR" "log $LOGS/checkpatch-install.log"
		show_log "$LOGS/checkpatch-install.log"
		return
	fi
	local cp=$KSRC_DIR/scripts/checkpatch.pl opts=(--strict --color=never --show-types --summary-file)
	local p f any=0
	if [[ -s $KSRC_DIR/.netslice-applied/series ]]; then
		while read -r p; do
			[[ -n $p ]] || continue
			any=1
			run_logged "checkpatch: patches/$p" "$LOGS/checkpatch-$p.log" \
				bash -c 'cd "$1" && "$2" "${@:4}" "$3"' _ "$KSRC_DIR" "$cp" \
				"$REPO/kernel/ns_core/patches/$p" "${opts[@]}"
		done <"$KSRC_DIR/.netslice-applied/series"
	fi
	((any)) || missing "checkpatch: kernel/ns_core/patches" "no hook patches yet"
	if [[ -s $KSRC_DIR/.netslice-applied/files ]]; then
		while read -r f; do
			[[ $f == *.[ch] ]] || continue
			run_logged "checkpatch: $f (kernel/ns_core)" "$LOGS/checkpatch-${f//\//_}.log" \
				bash -c 'cd "$1" && "$2" "${@:4}" -f "$3"' _ "$KSRC_DIR" "$cp" \
				"$f" "${opts[@]}"
		done <"$KSRC_DIR/.netslice-applied/files"
	fi
	any=0
	for f in kernel/ns_module/*.[ch]; do
		[[ -f $f && $f != *.mod.c ]] || continue
		any=1
		run_logged "checkpatch: $f" "$LOGS/checkpatch-${f//\//_}.log" \
			"$cp" "${opts[@]}" --no-tree -f "$f"
	done
	((any)) || missing "checkpatch: kernel/ns_module" "no module sources yet"
}

# The Debian packages, built into build/tests/deb and checked there
# (tests/deb/run.sh): nsdump's and netslice-dkms' with lintian, the
# kernel's from build/linux-netslice, the module built by dkms against its
# headers package, which t_dkms.sh then loads in the VM.  lintian's
# warnings are printed whatever the result.
phase_deb() {
	run_logged "deb: make deb, lintian, make deb-kernel, dkms build (tests/deb/run.sh)" \
		"$LOGS/deb.log" tests/deb/run.sh
	[[ $V == 1 ]] || grep '^# lintian:' "$LOGS/deb.log"
	return 0
}

phase_vm() {
	local kimage=${KIMAGE:-$REPO/build/linux-${FLAVOUR:-netslice}/arch/x86/boot/bzImage}
	local tests=() t
	if [[ -n ${TESTS:-} ]]; then
		IFS=', ' read -r -a tests <<<"$TESTS"
	else
		# The longest first (their times in the README's test notes),
		# so that two VMs at a time end together.
		for t in t_paths.sh t_filter.sh t_counters.sh t_send.sh t_magnet.sh \
			 tests/vm/t_*.sh; do
			t=${t##*/}
			[[ -f tests/vm/$t && -x tests/vm/$t ]] || continue
			[[ " ${tests[*]} " == *" $t "* ]] || tests+=("$t")
		done
	fi
	((${#tests[@]})) || { missing "vm: tests" "no executable tests/vm/t_*.sh"; return; }
	# The module built for this kernel (build-kernel.sh keeps a copy beside
	# it: kernel/ns_module's may be another flavour's by now).
	local ko=${VM_MODULE:-$REPO/build/linux-${FLAVOUR:-netslice}/netslice.ko}
	[[ -f $ko ]] || ko=
	# A test of two VMs (a "# vm-launcher:" line: t_join2.sh) keeps both
	# cores busy by itself and times the wire between them: it runs after
	# the others, alone.
	local one=() two=()
	for t in "${tests[@]}"; do
		if grep -q '^# vm-launcher: ' "tests/vm/$t" 2>/dev/null; then
			two+=("$t")
		else
			one+=("$t")
		fi
	done
	# Two VMs at a time and the debug build behind them: t_filter took
	# 507 s of run-vm.sh's default 600 on a cold run, so give them room.
	((${#one[@]})) &&
		VM_TIMEOUT=${VM_TIMEOUT:-1500} run_vm_tests vm "$kimage" "$ko" "${one[@]}"
	((${#two[@]})) &&
		VM_JOBS=1 VM_TIMEOUT=${VM_TIMEOUT:-1500} run_vm_tests vm "$kimage" "$ko" "${two[@]}"
	return 0
}

# The debug kernel (KASAN, lockdep, kmemleak, DEBUG_ATOMIC_SLEEP: see
# kernel/ns_core/config/debug.config) built beside the other one, and a
# subset of the VM tests booted on it: run-vm.sh fails a test on any
# splat in the console, and init.sh scans kmemleak after the test, so an
# unreferenced object fails it too.  DEBUG_TESTS picks the subset.
# With TESTS= given and DEBUG_TESTS not, no debug run (a developer's
# quick check).
DEBUG_TESTS=${DEBUG_TESTS-$([[ -n ${TESTS:-} ]] || echo t_stress.sh,t_ioctl.sh,t_recv.sh)}
phase_debug() {
	local tests=() rc secs
	[[ -n $DEBUG_TESTS ]] || return 0
	debug_build_start
	wait "$debug_build_pid"
	read -r rc secs <"$LOGS/build-debug.rc" || rc=1
	if ((rc == 0)); then
		ok "build: debug kernel and module (make module FLAVOUR=debug, $secs s in the background)"
		[[ $V == 1 ]] && show_log "$LOGS/build-debug.log"
	else
		not_ok "build: debug kernel and module (make module FLAVOUR=debug)" \
			"exit $rc, log $LOGS/build-debug.log"
		show_log "$LOGS/build-debug.log"
		return
	fi
	IFS=', ' read -r -a tests <<<"$DEBUG_TESTS"
	# KASAN under TCG runs the same test several times slower.  And
	# ACPI's interpreter, with KASAN and lockdep, runs the PCI routing
	# method (_PRT) into its 30 s loop timeout again and again: boots took
	# 170-230 s, and a routing it gave up on left the e1000 without its
	# interrupt (no carrier, a failed run).  The BIOS's $PIR table routes
	# the same PIC lines without AML (init after 15 s).
	VM_APPEND="${VM_APPEND:-} pci=noacpi" VM_TIMEOUT=${DEBUG_VM_TIMEOUT:-2400} \
		run_vm_tests "vm(debug)" "$DEBUG_KOBJ/arch/x86/boot/bzImage" \
		"$DEBUG_KOBJ/netslice.ko" "${tests[@]}"
}

# run_vm_tests <label> <kernel image> <module or ""> <test...>: one VM
# each, VM_JOBS of them at once (each keeps one host core busy under TCG
# with thread=single); the TAP lines come in the order given, each as
# soon as its test and those before it have ended.  Put the longest
# first.
VM_JOBS=${VM_JOBS:-2}
run_vm_tests() {
	local label=$1 kimage=$2 module=$3 t i
	shift 3
	if [[ ! -f $kimage ]]; then
		not_ok "$label: kernel image $kimage" "missing, run make kernel"
		return
	fi
	# Host-built helpers of VM tests (the guest cannot compile into the
	# read-only root): each tests/vm/*.mk is run with make -f first.
	local mk
	for mk in tests/vm/*.mk; do
		[[ -f $mk ]] || continue
		run_logged "build: $mk" "$LOGS/build-${mk##*/}.log" \
			make -s --no-print-directory -f "$mk"
	done
	vm_names=() vm_next=0
	local pids=() done_n
	for t in "$@"; do
		local name=${t%.sh}
		[[ $label == vm ]] || name=$name-debug
		vm_names+=("$name")
		rm -rf "${LOGS:?}/$name"
		mkdir -p "$LOGS/$name/scratch"
	done
	for ((i = 0; i < $#; i++)); do
		while :; do
			vm_report "$label" "$@"
			done_n=0
			for name in "${vm_names[@]:0:i}"; do
				[[ -f $LOGS/$name/rc ]] && done_n=$((done_n + 1))
			done
			((i - done_n < VM_JOBS)) && break
			sleep 1
		done
		vm_one "$kimage" "$module" "${@:i+1:1}" "${vm_names[i]}" &
		pids+=($!)
	done
	while ((vm_next < $#)); do
		vm_report "$label" "$@"
		((vm_next < $#)) && sleep 1
	done
	wait "${pids[@]}"
}

# vm_one <kernel image> <module> <test> <name>: one VM; its status and
# time in $LOGS/<name>/rc.
vm_one() {
	local t=$3 dir=$LOGS/$4 rc t0=$SECONDS
	if [[ ! -x tests/vm/$t ]]; then
		echo "notexec 0" >"$dir/rc"
		return
	fi
	# t_insn.sh counts every instruction: its VM runs the plugin.
	local extra=${QEMU_EXTRA:-}
	if [[ $t == t_insn.sh ]]; then
		mkdir -p "$dir/scratch/insn"
		extra+=" -plugin $REPO/bench/insn/insncount.so,dir=$dir/scratch/insn"
	fi
	# A test of several VMs names its launcher (t_join2.sh: two-vm.sh).
	local launcher
	launcher=$(sed -n 's/^# vm-launcher: //p' "tests/vm/$t" | head -n1)
	KIMAGE=$1 VM_MODULE=${2:-$REPO/kernel/ns_module/netslice.ko} \
	QEMU_EXTRA=$extra \
	VM_SCRATCH=$dir/scratch VM_CONSOLE_LOG=$dir/console.log \
	VM_OUTPUT_LOG=$dir/output.log \
		"${launcher:-tests/vm/run-vm.sh}" "$REPO/tests/vm/$t" >"$dir/stdout.log" 2>"$dir/harness.log"
	rc=$?
	echo "$rc $((SECONDS - t0))" >"$dir/rc.tmp" && mv "$dir/rc.tmp" "$dir/rc"
}

# vm_report <label> <test...>: the TAP lines of the tests from vm_next on
# that have ended, in order.
vm_report() {
	local label=$1
	shift
	while ((vm_next < $#)) && [[ -f $LOGS/${vm_names[vm_next]}/rc ]]; do
		vm_result "$label" "${@:vm_next+1:1}" "$LOGS/${vm_names[vm_next]}"
		vm_next=$((vm_next + 1))
	done
}

# vm_result <label> <test> <dir>: one test's TAP line from its rc file.
vm_result() {
	local label=$1 t=$2 dir=$3 rc secs reason
	read -r rc secs <"$dir/rc"
	if [[ $rc == notexec ]]; then
		not_ok "$label: $t" "not an executable in tests/vm/"
		return
	fi
	# The debug kernel's kmemleak verdict (init.sh), beside the
	# result: a debug run without one did not scan.
	local leak=
	if [[ $label != vm ]]; then
		leak=$(grep -aEo 'kmemleak: [0-9]+ leaks' \
			"$dir/console.log" 2>/dev/null | tail -n1)
		if ((rc == 0)) && [[ -z $leak ]]; then
			echo "run-tests: no kmemleak verdict in $dir/console.log" >>"$dir/harness.log"
			rc=1
		fi
	fi
	case $rc in
	0)
		ok "$label: $t ($secs s${leak:+; $leak})"
		[[ $V == 1 ]] && show_log "$dir/output.log"
		;;
	4)
		reason=$(grep -E '^(# )?SKIP' "$dir/output.log" | tail -n1)
		[[ -n $reason ]] || reason=$(grep -v '^[[:space:]]*$' "$dir/output.log" | tail -n1)
		reason=${reason#\# }
		skip "$label: $t" "${reason#SKIP}"
		[[ $V == 1 ]] && show_log "$dir/output.log"
		;;
	*)
		not_ok "$label: $t" "exit $rc after $secs s, logs in $dir/"
		# What the harness saw (a kernel problem in the console,
		# a timeout) first: where only part of the output is
		# kept, the cause must not be the part left out.
		show_log "$dir/harness.log" 60
		show_log "$dir/output.log"
		failed_subtests "$label: $t" "$dir/output.log"
		;;
	esac
	return 0
}

# The failed subtests of a suite's TAP log, each with the comment lines
# just before it, so a failure is explained even where only the end of
# the output is kept (CI); remembered for the summary.
failed_subtests() { # <suite> <log>
	local suite=$1 log=$2 line
	[[ -s $log ]] || return 0
	grep -q '^not ok' "$log" || return 0
	echo "# --- $suite: failed subtests, with their comments"
	grep -B6 '^not ok' "$log" | diag
	while IFS= read -r line; do
		subfailures+=("$suite: $line")
	done < <(grep '^not ok' "$log")
}

summary() {
	echo "1..$n"
	if ((${#failures[@]})); then
		echo "# failed:"
		printf '#   %s\n' "${failures[@]}"
	fi
	((${#subfailures[@]})) && printf '#     %s\n' "${subfailures[@]}"
	((missing)) && echo "# $missing suite(s) missing (counted as $( ((ALLOW_MISSING)) && echo skipped || echo failed))"
	echo "$passed passed, $failed failed, $skipped skipped"
	((failed == 0))
	exit
}

phases=("$@")
((${#phases[@]})) || phases=(build host checkpatch deb vm debug)
phase_times=()
for ph in "${phases[@]}"; do
	case $ph in
	build|host|checkpatch|deb|vm|debug)
		t0=$SECONDS
		"phase_$ph"
		phase_times+=("$ph $((SECONDS - t0)) s")
		;;
	*) echo "run-tests: unknown phase '$ph' (build host checkpatch deb vm debug)" >&2; exit 2 ;;
	esac
done
echo "# time per phase: $(IFS=,; echo "${phase_times[*]}" | sed 's/,/, /g'); in all $SECONDS s"
summary
