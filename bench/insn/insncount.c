// SPDX-License-Identifier: GPL-2.0
/*
 * insncount: a QEMU TCG plugin that counts every guest instruction by the
 * address of the translation block it runs in, and writes the counts when
 * the guest asks, so that two snapshots taken around a workload give its
 * exact instruction count per function (bench/insnprof.py maps the
 * addresses to symbols with the guest's /proc/kallsyms).
 *
 *   qemu-system-x86_64 -accel tcg,thread=single \
 *       -plugin bench/insn/insncount.so,dir=<host dir> ...
 *
 * The guest takes a snapshot by executing the marker instruction,
 * NSL_MARK_INSN below (a NOP with a displacement nothing else uses;
 * bench/insn/nsmark runs it on request).  The plugin finds it as it
 * translates and calls back when it executes: the counters are then
 * written to <dir>/snap.<n>, n counting markers from 1.  With
 * thread=single every vCPU runs in the one thread that runs the callback,
 * so the snapshot is exact: nothing in the guest runs while it is taken.
 *
 * With thread=single one host thread runs every vCPU, so the counters
 * need no atomics; TCG's translation runs under its own lock, and
 * @table_lock orders it against the snapshot's walk of the table.
 *
 * A string instruction with a REP prefix is one instruction to the CPU
 * (INST_RETIRED counts it once, however many bytes it moves), but TCG
 * runs it one iteration at a time: the first in the block that reaches
 * it, every later one as a block of that instruction alone, which jumps
 * back to itself.  Counting block executions would count a 1,500-byte
 * `rep movsb` as 1,500 instructions.  Such a one-instruction block is
 * therefore counted only when it is entered, not when it repeats: when
 * the block that ran just before it was neither itself nor the block
 * that ends with the same instruction.  Every block adds one to @tb_seq,
 * so "just before" is a difference of one.  Its executions are written
 * too, as a fourth column, for a count of iterations as TCG runs them
 * (bench/insnprof.py --rep-iterations).  An interrupt in the middle of a
 * REP makes its resumption count once more, as a new entry.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plugin_api.h"
#include "mark.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

/*
 * One translated block: where it starts, its length, how often it ran.
 * For a block of one REP string instruction, @execs counts its entries
 * and @iters every execution (see above).
 */
struct tb_count {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;		/* added to by the translated code */
	uint64_t iters;		/* a REP block's executions, else 0 */
	uint64_t last_seq;	/* @tb_seq at its last execution */
	bool rep;		/* a block of one REP string instruction */
	struct tb_count *next;	/* hash chain */
};

#define TABLE_BITS	16
#define TABLE_SIZE	(1u << TABLE_BITS)

static struct tb_count *table[TABLE_SIZE];	/* under table_lock */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[4096];	/* where snapshots go */
static unsigned int marks;	/* snapshots taken; only the vCPU thread */
static uint64_t tb_seq;		/* blocks executed, added to inline */
/* The last block that ended in a REP string instruction: its address */
static uint64_t rep_tail_vaddr, rep_tail_seq;

static unsigned int slot(uint64_t vaddr, uint64_t insns)
{
	uint64_t h = (vaddr ^ (insns << 48)) * 0x9e3779b97f4a7c15ull;

	return h >> (64 - TABLE_BITS);
}

/*
 * A block retranslated at the same address with the same length keeps
 * its counter; one of another length (a breakpoint, a page boundary)
 * gets its own.
 */
static struct tb_count *tb_count_get(uint64_t vaddr, uint64_t insns)
{
	unsigned int i = slot(vaddr, insns);
	struct tb_count *c;

	pthread_mutex_lock(&table_lock);
	for (c = table[i]; c; c = c->next)
		if (c->vaddr == vaddr && c->insns == insns)
			goto out;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->vaddr = vaddr;
		c->insns = insns;
		c->next = table[i];
		table[i] = c;
	}
out:
	pthread_mutex_unlock(&table_lock);
	return c;
}


/* Writes every block that ran to @path (through a temporary name). */
static int snapshot(const char *path)
{
	char tmp[4500];
	unsigned int i;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < TABLE_SIZE; i++) {
		const struct tb_count *c;

		for (c = table[i]; c; c = c->next) {
			if (c->rep && c->iters)
				fprintf(f, "%llx %llu %llu %llu\n",
					(unsigned long long)c->vaddr,
					(unsigned long long)c->insns,
					(unsigned long long)c->execs,
					(unsigned long long)c->iters);
			else if (c->execs)
				fprintf(f, "%llx %llu %llu\n",
					(unsigned long long)c->vaddr,
					(unsigned long long)c->insns,
					(unsigned long long)c->execs);
		}
	}
	pthread_mutex_unlock(&table_lock);
	if (fclose(f))
		return -errno;
	return rename(tmp, path) ? -errno : 0;
}

/* The marker executes: the counters as they stand, to snap.<n>. */
static void at_mark(unsigned int vcpu, void *udata)
{
	char path[4200];

	(void)vcpu;
	(void)udata;
	snprintf(path, sizeof(path), "%s/snap.%u", dir, ++marks);
	if (snapshot(path))
		fprintf(stderr, "insncount: %s: %s\n", path, strerror(errno));
}

static bool is_mark(const struct qemu_plugin_insn *insn)
{
	static const unsigned char mark[] = { NSL_MARK_BYTES };

	return qemu_plugin_insn_size(insn) == sizeof(mark) &&
	       !memcmp(qemu_plugin_insn_data(insn), mark, sizeof(mark));
}

/* Whether @insn is a string instruction with a REP (or REPNE) prefix. */
static bool is_rep_string(const struct qemu_plugin_insn *insn)
{
	const unsigned char *p = qemu_plugin_insn_data(insn);
	size_t i, len = qemu_plugin_insn_size(insn);
	bool rep = false;

	for (i = 0; i < len; i++) {
		switch (p[i]) {
		case 0xf2: case 0xf3:
			rep = true;
			continue;
		case 0x26: case 0x2e: case 0x36: case 0x3e:
		case 0x64: case 0x65: case 0x66: case 0x67:
			continue;
		}
		break;
	}
	if (i < len && (p[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (!rep || i >= len)
		return false;
	/* INS, OUTS; MOVS, CMPS; STOS, LODS, SCAS */
	return (p[i] >= 0x6c && p[i] <= 0x6f) || (p[i] >= 0xa4 && p[i] <= 0xa7) ||
	       (p[i] >= 0xaa && p[i] <= 0xaf);
}

/* A block of one REP instruction runs: an entry, or one more iteration. */
static void rep_exec(unsigned int vcpu, void *udata)
{
	struct tb_count *c = udata;

	(void)vcpu;
	c->iters++;
	if (tb_seq != c->last_seq + 1 &&
	    !(rep_tail_vaddr == c->vaddr && tb_seq == rep_tail_seq + 1))
		c->execs++;
	c->last_seq = tb_seq;
}

/* A block that ends in a REP instruction at @udata runs its first pass. */
static void rep_tail_exec(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	rep_tail_vaddr = (uintptr_t)udata;
	rep_tail_seq = tb_seq;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct tb_count *c = tb_count_get(qemu_plugin_tb_vaddr(tb), n);
	struct qemu_plugin_insn *last = n ? qemu_plugin_tb_get_insn(tb, n - 1) : NULL;

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &tb_seq, 1);
	if (c && n == 1 && is_rep_string(last)) {
		c->rep = true;
		qemu_plugin_register_vcpu_tb_exec_cb(tb, rep_exec,
						     QEMU_PLUGIN_CB_NO_REGS, c);
	} else if (c) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &c->execs, 1);
		if (last && is_rep_string(last))
			qemu_plugin_register_vcpu_tb_exec_cb(tb, rep_tail_exec,
							     QEMU_PLUGIN_CB_NO_REGS,
							     (void *)(uintptr_t)qemu_plugin_insn_vaddr(last));
	}
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (is_mark(insn))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, at_mark,
							       QEMU_PLUGIN_CB_NO_REGS,
							       NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
	char path[4200];

	(void)id;
	(void)p;
	snprintf(path, sizeof(path), "%s/snap.exit", dir);
	snapshot(path);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	(void)info;
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "dir=", 4))
			snprintf(dir, sizeof(dir), "%s", argv[i] + 4);
	if (!dir[0]) {
		fprintf(stderr, "insncount: no dir=<directory> argument\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
