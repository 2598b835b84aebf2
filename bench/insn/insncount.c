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

/* One translated block: where it starts, its length, how often it ran. */
struct tb_count {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;		/* added to by the translated code */
	struct tb_count *next;	/* hash chain */
};

#define TABLE_BITS	16
#define TABLE_SIZE	(1u << TABLE_BITS)

static struct tb_count *table[TABLE_SIZE];	/* under table_lock */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char dir[4096];	/* where snapshots go */
static unsigned int marks;	/* snapshots taken; only the vCPU thread */

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

		for (c = table[i]; c; c = c->next)
			if (c->execs)
				fprintf(f, "%llx %llu %llu\n",
					(unsigned long long)c->vaddr,
					(unsigned long long)c->insns,
					(unsigned long long)c->execs);
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

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);
	struct tb_count *c = tb_count_get(qemu_plugin_tb_vaddr(tb), n);

	(void)id;
	if (c)
		qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
							 &c->execs, 1);
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
