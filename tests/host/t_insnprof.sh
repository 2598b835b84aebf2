#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# bench/insnprof.py on snapshots written by hand, whose every count is
# known: instructions per unit and per function, the ratio to II, the
# part of each step between stages that is NetSlice's own code, a
# block of one REP instruction counted once per entry by default and per
# iteration with --rep-iterations (the other count's ratio beside it),
# user space as one bucket, --window's totals, and the budgets' verdicts
# (a ratio, NetSlice's code) either side of their 2% slack, a clear
# error for a budget line that is neither, and --vmlinux's hook sites (a
# compiled object's steps, a linked program's static keys) counted as
# NetSlice's beyond II.  Checked in Python.
# TAP; exit 0 / 1.
here=$(cd "$(dirname "$0")" && pwd)
exec python3 - "$here/../../bench/insnprof.py" "$here/../vm" <<'EOF'
import json, os, shutil, subprocess, sys, tempfile

prof = sys.argv[1]
sys.path.append(sys.argv[2])
from tap import Tap  # noqa: E402

d = tempfile.mkdtemp()
t = Tap()
ok, is_ = t.ok, t.eq


def write(name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


K = 0xffffffff81000000
write("kallsyms", "%x T f_stack\n%x T f_copy\n%x t nsl_thing [netslice]\n" % (K, K + 0x100, K + 0x200))
# Cumulative counts: "vaddr insns execs [iterations]".  The REP block at
# f_copy+0x10 is one instruction, entered 3 times, run 1003 times.
snaps = {
    1: [(K, 10, 100), (K + 0x110, 1, 5, 50), (0x400000, 4, 10)],
    2: [(K, 10, 300), (K + 0x110, 1, 8, 1053), (0x400000, 4, 20)],   # II: 2 units
    3: [(K, 10, 500), (K + 0x110, 1, 11, 2053), (0x400000, 4, 30), (K + 0x200, 7, 20)],  # III
}
for i, rows in snaps.items():
    write("snap.%d" % i, "".join(" ".join([("%x" % r[0])] + [str(x) for x in r[1:]]) + "\n" for r in rows))
write("windows", "w II 1 2 2\nw III 2 3 2\n")


def run(*args):
    return subprocess.run([sys.executable, prof, d] + list(args), capture_output=True, text=True)


r = run("--json", os.path.join(d, "once.json"))
ok(r.returncode == 0, "insnprof.py runs", r.stderr.strip()[-200:])
once = json.load(open(os.path.join(d, "once.json")))["w"]
# II: f_stack 200 runs of 10, the REP 3 entries (1003 iterations), user
# space 10 runs of 4: 2043 over 2 units (3043 per iteration).  III adds
# nsl_thing's 20 runs of 7, and its REP ran 1000 iterations: 2183 (3180).
is_(once["II"]["per_unit"], 2043 / 2, "II per unit, a REP once")
is_(once["III"]["functions"].get("nsl_thing [netslice]"), 70.0, "nsl_thing, 20 runs of 7 over 2 units")
is_(once["III"]["functions"].get("f_copy"), 1.5, "f_copy: 3 entries of its REP block over 2 units")
is_(once["III"]["functions"].get("(user space)"), 20.0, "user space outside nsdump: one bucket")
is_(round(once["III"]["ratio"], 6), round(2183 / 2043, 6), "III / II, a REP once")
is_(round(once["III"]["other_ratio"], 6), round(3180 / 3043, 6), "the other count's ratio: per iteration")
# NetSlice's own code: the module's nsl_thing, not f_stack, f_copy or
# user space outside nsdump; the step from II to III, in all and in it.
is_(once["II"].get("netslice_code"), 0, "NetSlice's code in II: none ran")
is_(once["III"].get("netslice_code"), 70.0, "NetSlice's code in III: nsl_thing alone")
is_(once["III"].get("step"), {"from": "II", "all": 70.0, "netslice_code": 70.0},
    "the step II -> III: 140 more instructions over 2 units, all NetSlice's")
ok(any(l.split()[:3] == ["II", "->", "III"] and l.split()[3:5] == ["+70", "+70"]
       for l in r.stdout.splitlines()), "the step table prints II -> III, +70 and +70")
r = run("--rep-iterations", "--json", os.path.join(d, "iter.json"))
it = json.load(open(os.path.join(d, "iter.json")))["w"]
is_(it["II"]["per_unit"], 3043 / 2, "II per unit, a REP per iteration")
is_(it["III"]["functions"].get("f_copy"), 500.0, "f_copy: 1000 iterations over 2 units")
is_(round(it["III"]["other_ratio"], 6), round(2183 / 2043, 6), "--rep-iterations: the other ratio counts a REP once")
ok("(a REP instruction per iteration; other: once;" in r.stdout,
   "the table says how it counts")
r = run("--window", "1", "2")
w = json.loads(r.stdout)
is_(w["kernel"], [2003, 3003], "--window: kernel once and per iteration")
is_(w["user"], [40, 40], "--window: user space")
is_(w["rep"], [{"vaddr": "%x" % (K + 0x110), "entries": 3, "iterations": 1003}], "--window: the REP block")
for limit, want in (("1.07", 0), ("1.048", 0), ("1.04", 1)):
    write("budget", "# III 1.0685\nw III %s\n" % limit)
    r = run("--budget", os.path.join(d, "budget"))
    is_(r.returncode, want, "budget %s (+2%%) against III 1.0685: exit status" % limit)
for limit, want in (("70", 0), ("68.7", 0), ("68", 1)):
    write("budget", "w III code %s\n" % limit)
    r = run("--budget", os.path.join(d, "budget"))
    is_(r.returncode, want, "a budget of %s (+2%%) on NetSlice's code, 70 a unit: exit status" % limit)
for bad in ("w III\n", "w III code\n", "w III 1.2x\n", "w III code 5000 more\n"):
    write("budget", "# a comment\n" + bad)
    r = run("--budget", os.path.join(d, "budget"))
    ok(r.returncode == 1 and ":2: " in r.stderr and "Traceback" not in r.stderr,
       "a bad budget line %r: a clear error naming line 2" % bad.strip(), r.stderr.strip()[-200:])
write("budget", "w IV 2\n")
r = run("--budget", os.path.join(d, "budget"))
ok(r.returncode == 1 and "not measured" in r.stdout, "a budget for a configuration not run fails")

# --vmlinux: a function that holds a hook's inline step (rdtsc, then sub
# and sbb of a time's halves) counts what it runs beyond II as NetSlice's
# code; one with a bare rdtsc does not, nor NetSlice's own (already
# counted).  f_site runs 10, 10 and 30 times 5 instructions, f_plain 10,
# 10 and 20 times 3: III's code is f_site's 20 runs more, 100.
shutil.rmtree(d)
d = tempfile.mkdtemp()
write("sites.c", '''unsigned long long t0;
#define SINCE() do { unsigned lo, hi; \\
	asm volatile("rdtsc\\n\\tsub %2, %0\\n\\tsbb %3, %1" : "=&a" (lo), "=&d" (hi) \\
		     : "m" (((unsigned *)&t0)[0]), "m" (((unsigned *)&t0)[1]) : "cc"); \\
} while (0)
void f_site(void) { SINCE(); }
void nsl_own(void) { SINCE(); }
void f_plain(void) { asm volatile("rdtsc" ::: "eax", "edx"); }
''')
obj = os.path.join(d, "sites.o")
c = subprocess.run(["cc", "-O2", "-c", "-o", obj, os.path.join(d, "sites.c")],
                   capture_output=True, text=True)
ok(c.returncode == 0, "an object with a hook's step compiled", c.stderr.strip()[-200:])
sys.path.insert(0, os.path.dirname(prof))
import insnprof  # noqa: E402
is_(sorted(insnprof.hook_sites(obj)), ["f_site"], "hook_sites(): f_site alone")
# A hook without a step (an inline block test) is found by its static
# key: a linked program whose jump table names nsl_active for a branch
# in f_keyed and in nsl_keyed (NetSlice's own), another key for f_other.
write("keys.c", '''long nsl_active, other_key;	/* aligned, as a static_key is */
void f_keyed(void) { asm volatile("nop; nop; nop; nop; nop"); }
void nsl_keyed(void) { asm volatile("nop; nop; nop; nop; nop"); }
void f_other(void) { asm volatile("nop"); }
asm(".pushsection __jump_table, \\"aw\\"\\n.balign 8\\n"
    ".long f_keyed + 4 - ., 0\\n.quad nsl_active + 1 - .\\n"
    ".long nsl_keyed - ., 0\\n.quad nsl_active - .\\n"
    ".long f_other - ., 0\\n.quad other_key - .\\n.popsection");
extern char __start___jump_table[], __stop___jump_table[];
int main(void) { return __stop___jump_table - __start___jump_table != 48; }
''')
prog = os.path.join(d, "keys")
c = subprocess.run(["cc", "-O2", "-no-pie", "-o", prog, os.path.join(d, "keys.c")],
                   capture_output=True, text=True)
ok(c.returncode == 0 and subprocess.run([prog]).returncode == 0,
   "a program with a jump table of three entries", c.stderr.strip()[-200:])
is_(sorted(insnprof.key_sites(prog)), ["f_keyed", "nsl_keyed"], "key_sites(): the branches on nsl_active")
is_(sorted(insnprof.hook_sites(prog)), ["f_keyed"], "hook_sites(): f_keyed, NetSlice's own aside")
write("kallsyms", "%x T f_site\n%x T f_plain\n" % (K, K + 0x100))
for i, runs in ((1, (10, 10)), (2, (20, 20)), (3, (50, 40))):
    write("snap.%d" % i, "%x 5 %d\n%x 3 %d\n" % (K, runs[0], K + 0x100, runs[1]))
write("windows", "w II 1 2 1\nw III 2 3 1\n")
for args, want in (((), 0), (("--vmlinux", obj), 100.0)):
    r = run("--json", os.path.join(d, "s.json"), *args)
    got = json.load(open(os.path.join(d, "s.json")))["w"]["III"]["netslice_code"] \
        if r.returncode == 0 else r.stderr.strip()[-200:]
    is_(got, want, "NetSlice's code in III %s" % ("with --vmlinux: f_site's 100 beyond II" if args else "without --vmlinux: none"))
shutil.rmtree(d)
sys.exit(t.done())
EOF
