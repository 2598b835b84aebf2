// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice calibration: what the macros themselves cost on one CPU.
 *
 * Every sample runs with interrupts off on the CPU being measured, on a
 * private skb, and the cost of the two TSC reads around it is subtracted.
 * The median is reported; the CV is computed over the samples up to the
 * 99th percentile so that an NMI or a cache-cold first sample does not
 * dominate it.
 *
 * tau_o (NSO) is what an empty START..STOP records; tau_beta (NSA) is
 * what one START/STOP pair adds to the region enclosing it.  NSE is timed
 * up to the hand-off, with the block copied to a scratch buffer as the
 * module's ring would copy it, so no calibration block reaches a reader.
 *
 * Warm, the samples run back to back on the same block: code, data and
 * translations cached, which the stack's own work between two macros
 * takes away.  Cold (NSL_CALIB_COLD), every sample starts with the TLB
 * flushed, global entries included, as a context switch leaves it (under
 * QEMU's TCG that also drops the lookup cache of translated code), and
 * with the skb and its block evicted; NSA is then the inner pair timed
 * from outside, since the enclosing START would warm it up.
 *
 * A calibration must not hog the machine: one runs at a time (the others
 * wait for it, interruptibly), it is capped at NSL_CALIB_REPS_MAX samples
 * per phase (a sort of that many is a millisecond or so), it lets other
 * tasks run every 1024 samples, and a signal to the caller stops it at the
 * next such point.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/smp.h>
#include <linux/workqueue.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/cpumask.h>
#include <linux/math64.h>
#include <linux/export.h>
#include <linux/cacheflush.h>
#include <asm/tlbflush.h>

#include "core.h"
#include "record.h"

#define NSL_CALIB_REPS		4096
#define NSL_CALIB_REPS_MAX	BIT(16)

/* One calibration at a time: each hogs a CPU with interrupts off. */
static DEFINE_MUTEX(nsl_calib_lock);

struct nsl_calib_run {
	struct work_struct work;	/* runs on the CPU measured */
	struct completion done;
	bool stop;			/* the caller got a signal */
	int ret;
	struct nsl_calib *out;
	u64 *samples;			/* [reps] ticks */
	u64 *counts;			/* [reps * NSL_MAX_EVENTS] */
	u64 *col;			/* [reps] one event's counts */
	struct nsl_block *scratch;	/* NSE's copy target */
	u32 reps;
	bool cold;			/* NSL_CALIB_COLD */
};

static int nsl_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Median, minimum and trimmed CV of @n samples (sorted in place). */
static void nsl_summarise(u64 *v, u32 n, struct nsl_cost *c)
{
	u32 keep = n - n / 100, i;
	u64 sum = 0, mean, var = 0;

	sort(v, n, sizeof(*v), nsl_cmp_u64, NULL);
	c->ticks = v[n / 2];
	c->min = v[0];
	c->samples = keep;
	for (i = 0; i < keep; i++)
		sum += v[i];
	mean = div64_u64(sum, keep);
	for (i = 0; i < keep; i++) {
		s64 d = (s64)(v[i] - mean);

		var += (u64)(d * d);
	}
	var = div64_u64(var, keep);
	c->cv_ppm = mean ? (u32)min_t(u64, div64_u64(int_sqrt64(var) *
						       1000000, mean),
				      U32_MAX) : 0;
}

static void nsl_summarise_counts(struct nsl_calib_run *run,
				 struct nsl_cost *c, u8 nevents)
{
	u64 *col = run->col;
	u32 i;
	int e;

	for (e = 0; e < nevents; e++) {
		for (i = 0; i < run->reps; i++)
			col[i] = run->counts[i * NSL_MAX_EVENTS + e];
		sort(col, run->reps, sizeof(*col), nsl_cmp_u64, NULL);
		c->count[e] = col[run->reps / 2];
	}
}

/* Forget every record of @b (between samples, untimed). */
static void nsl_calib_reset(struct nsl_skb_block *b)
{
	nsl_records_reset(b);
}

enum { NSL_OP_INIT, NSL_OP_START, NSL_OP_STOP, NSL_OP_EXIT };

/*
 * NSE hands off a typical send block: six records, five closed and the
 * NIC's open, which NSE closes.  Each one written now, none left from a
 * sample before.  No link region: the test skb has no device to add.
 */
static void nsl_calib_send_block(struct sk_buff *skb)
{
	static const u8 closed[] = {
		NSL_R_WRITE, NSL_R_TCP, NSL_R_SNDQ, NSL_R_IP, NSL_R_QDISC,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(closed); i++) {
		__nsl_start(closed[i], skb);
		__nsl_stop(closed[i], skb);
	}
	__nsl_start(NSL_R_NIC, skb);
}

/*
 * Before a cold sample, interrupts off: the skb and its block written back
 * and evicted, then every TLB entry dropped (kernel text and data are
 * global mappings, which a plain CR3 write would keep).
 */
static void nsl_calib_chill(struct nsl_calib_run *run, struct sk_buff *skb)
{
	struct nsl_skb_block *b;

	if (!run->cold)
		return;
	b = skb_ext_find(skb, SKB_EXT_NETSLICE);
	if (b)
		clflush_cache_range(b, NSL_SKB_BLOCK_SIZE);
	clflush_cache_range(skb, sizeof(*skb));
	__flush_tlb_all();
}

/* One timed macro call, with its untimed set-up. */
static u64 nsl_calib_macro(struct sk_buff *skb, int op,
			   struct nsl_calib_run *run, struct nsl_record *cr,
			   u8 nevents, u32 gen)
{
	struct nsl_skb_block *b;
	unsigned long flags;
	u64 t0, t1;

	if (op == NSL_OP_INIT)
		skb_ext_reset(skb);
	b = skb_ext_find(skb, SKB_EXT_NETSLICE);
	if (b) {
		nsl_calib_reset(b);
		if (op == NSL_OP_STOP)
			__nsl_start(NSL_R_WRITE, skb);
		if (op == NSL_OP_EXIT)
			nsl_calib_send_block(skb);
	}
	memset(cr, 0, sizeof(*cr));
	cr->cpu = raw_smp_processor_id();

	local_irq_save(flags);
	nsl_calib_chill(run, skb);
	if (nevents)
		nsl_counters_start(cr, nevents, gen);
	t0 = rdtsc_ordered();
	switch (op) {
	case NSL_OP_INIT:
		__nsl_init(skb, NSL_DIR_TX);
		break;
	case NSL_OP_START:
		__nsl_start(NSL_R_WRITE, skb);
		break;
	case NSL_OP_STOP:
		__nsl_stop(NSL_R_WRITE, skb);
		break;
	case NSL_OP_EXIT:
		nsl_exit_copy(skb, run->scratch);
		break;
	}
	t1 = rdtsc_ordered();
	if (nevents)
		nsl_counters_stop(cr, nevents, gen);
	local_irq_restore(flags);
	return t1 - t0;
}

/*
 * What the block records for an empty region (@inner false) or for a
 * region around one empty START/STOP pair (@inner true).
 */
static u64 nsl_calib_region(struct nsl_calib_run *run, struct nsl_skb_block *b,
			    struct sk_buff *skb, bool inner,
			    struct nsl_record *cr)
{
	unsigned long flags;

	nsl_calib_reset(b);
	local_irq_save(flags);
	nsl_calib_chill(run, skb);
	__nsl_start(NSL_R_WRITE, skb);
	if (inner) {
		__nsl_start(NSL_R_TCP, skb);
		__nsl_stop(NSL_R_TCP, skb);
	}
	__nsl_stop(NSL_R_WRITE, skb);
	local_irq_restore(flags);
	nsl_records_now(b);
	*cr = b->blk.rec[0];
	return cr->ticks;
}

/*
 * A cold tau_beta: one START/STOP pair inside an open region, timed from
 * outside (less the two TSC reads, by the caller) after the chill.
 */
static u64 nsl_calib_pair(struct nsl_calib_run *run, struct nsl_skb_block *b,
			  struct sk_buff *skb, struct nsl_record *cr,
			  u8 nevents, u32 gen)
{
	unsigned long flags;
	u64 t0, t1;

	nsl_calib_reset(b);
	memset(cr, 0, sizeof(*cr));
	cr->cpu = raw_smp_processor_id();
	local_irq_save(flags);
	__nsl_start(NSL_R_WRITE, skb);
	nsl_calib_chill(run, skb);
	if (nevents)
		nsl_counters_start(cr, nevents, gen);
	t0 = rdtsc_ordered();
	__nsl_start(NSL_R_TCP, skb);
	__nsl_stop(NSL_R_TCP, skb);
	t1 = rdtsc_ordered();
	if (nevents)
		nsl_counters_stop(cr, nevents, gen);
	__nsl_stop(NSL_R_WRITE, skb);
	local_irq_restore(flags);
	return t1 - t0;
}

/*
 * Up to NSL_CALIB_REPS_MAX samples per phase run in one kworker: let
 * others in now and then (between samples, so no sample is stretched),
 * and stop there when the caller was interrupted.  True: stop.
 */
static bool nsl_calib_yield(struct nsl_calib_run *run, u32 i)
{
	if (i & 1023)
		return false;
	cond_resched();
	return READ_ONCE(run->stop);
}

static int nsl_calib_on_cpu(struct nsl_calib_run *run)
{
	struct nsl_calib *out = run->out;
	struct nsl_skb_block *b;
	struct nsl_record cr;
	struct sk_buff *skb;
	u64 tsc_pair, t0;
	u32 gen = 0, i;
	u8 nevents;
	int op, ret = 0;

	skb = alloc_skb(0, GFP_KERNEL);
	if (unlikely(!skb))
		return -ENOMEM;
	/* The calibration skb must never be emitted, whatever its state. */
	__nsl_init(skb, NSL_DIR_TX);
	b = skb_ext_find(skb, SKB_EXT_NETSLICE);
	if (unlikely(!b)) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	nevents = b->blk.nevents;
	gen = b->gen;
	out->nevents = nevents;

	/* The cost of the two TSC reads themselves. */
	for (i = 0; i < run->reps; i++) {
		unsigned long flags;

		local_irq_save(flags);
		t0 = rdtsc_ordered();
		run->samples[i] = rdtsc_ordered() - t0;
		local_irq_restore(flags);
		if (nsl_calib_yield(run, i))
			goto stopped;
	}
	sort(run->samples, run->reps, sizeof(u64), nsl_cmp_u64, NULL);
	tsc_pair = run->samples[run->reps / 2];

	for (op = NSL_OP_INIT; op <= NSL_OP_EXIT; op++) {
		for (i = 0; i < run->reps; i++) {
			u64 t = nsl_calib_macro(skb, op, run, &cr, nevents,
						gen);

			run->samples[i] = t > tsc_pair ? t - tsc_pair : 0;
			memcpy(&run->counts[i * NSL_MAX_EVENTS], cr.count,
			       sizeof(cr.count));
			if (nsl_calib_yield(run, i))
				goto stopped;
		}
		nsl_summarise_counts(run, &out->cost[op], nevents);
		nsl_summarise(run->samples, run->reps, &out->cost[op]);
	}

	/*
	 * Every INIT sample replaced the skb's extension: look the block up
	 * again (the last INIT may also have found no memory).
	 */
	b = skb_ext_find(skb, SKB_EXT_NETSLICE);
	if (unlikely(!b)) {
		ret = -ENOMEM;
		goto out;
	}

	/* tau_o: an empty region as recorded. */
	for (i = 0; i < run->reps; i++) {
		run->samples[i] = nsl_calib_region(run, b, skb, false, &cr);
		memcpy(&run->counts[i * NSL_MAX_EVENTS], cr.count,
		       sizeof(cr.count));
		if (nsl_calib_yield(run, i))
			goto stopped;
	}
	nsl_summarise_counts(run, &out->cost[NSL_C_NSO], nevents);
	nsl_summarise(run->samples, run->reps, &out->cost[NSL_C_NSO]);

	/*
	 * tau_beta: what one inner pair adds to the enclosing region; cold,
	 * the pair timed from outside, as the macros are.
	 */
	for (i = 0; i < run->reps; i++) {
		u64 t, base;

		if (run->cold) {
			t = nsl_calib_pair(run, b, skb, &cr, nevents, gen);
			run->samples[i] = t > tsc_pair ? t - tsc_pair : 0;
			memcpy(&run->counts[i * NSL_MAX_EVENTS], cr.count,
			       sizeof(cr.count));
		} else {
			t = nsl_calib_region(run, b, skb, true, &cr);
			base = out->cost[NSL_C_NSO].ticks;
			run->samples[i] = t > base ? t - base : 0;
			for (op = 0; op < nevents; op++) {
				base = out->cost[NSL_C_NSO].count[op];
				run->counts[i * NSL_MAX_EVENTS + op] =
					cr.count[op] > base ?
					cr.count[op] - base : 0;
			}
		}
		if (nsl_calib_yield(run, i))
			goto stopped;
	}
	nsl_summarise_counts(run, &out->cost[NSL_C_NSA], nevents);
	nsl_summarise(run->samples, run->reps, &out->cost[NSL_C_NSA]);

	goto out;
stopped:
	ret = -EINTR;
out:
	/* Not eligible, but make sure: this block is never delivered. */
	b = skb_ext_find(skb, SKB_EXT_NETSLICE);
	if (b)
		set_bit(NSL_ST_DEAD, &b->state);
	kfree_skb(skb);
	return ret;
}

static void nsl_calib_work(struct work_struct *work)
{
	struct nsl_calib_run *run = container_of(work, struct nsl_calib_run,
						 work);

	run->ret = nsl_calib_on_cpu(run);
	complete(&run->done);
}

/*
 * Run the calibration in a kworker bound to @cpu and wait for it; a
 * signal stops it at its next yield (a few ms at most) and returns -EINTR.
 * As smp_call_on_cpu(), no hotplug lock: a CPU that goes down meanwhile
 * has the work finish elsewhere, and its figures are merely less exact.
 */
static int nsl_calib_run_on(struct nsl_calib_run *run, unsigned int cpu)
{
	if (cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	INIT_WORK_ONSTACK(&run->work, nsl_calib_work);
	init_completion(&run->done);
	queue_work_on(cpu, system_wq, &run->work);
	if (wait_for_completion_interruptible(&run->done)) {
		WRITE_ONCE(run->stop, true);
		wait_for_completion(&run->done);
	}
	flush_work(&run->work);
	destroy_work_on_stack(&run->work);
	return run->ret;
}

int nsl_calibrate(struct nsl_calib *c)
{
	struct nsl_calib_run run = { .out = c };
	int ret;

	if ((c->flags & ~NSL_CALIB_COLD) || c->nevents)
		return -EINVAL;
	run.cold = c->flags & NSL_CALIB_COLD;
	if (c->reps > NSL_CALIB_REPS_MAX)
		return -EINVAL;
	run.reps = c->reps ? c->reps : NSL_CALIB_REPS;
	if (run.reps < 16)
		return -EINVAL;
	memset(c->cost, 0, sizeof(c->cost));

	run.samples = kvmalloc_array(run.reps, sizeof(u64), GFP_KERNEL);
	run.counts = kvmalloc_array(run.reps, sizeof(u64) * NSL_MAX_EVENTS,
				    GFP_KERNEL | __GFP_ZERO);
	run.col = kvmalloc_array(run.reps, sizeof(u64), GFP_KERNEL);
	run.scratch = kmalloc(sizeof(*run.scratch), GFP_KERNEL);
	if (!run.samples || !run.counts || !run.col || !run.scratch) {
		ret = -ENOMEM;
		goto out;
	}

	ret = mutex_lock_interruptible(&nsl_calib_lock);
	if (ret)
		goto out;
	ret = nsl_calib_run_on(&run, c->cpu);
	mutex_unlock(&nsl_calib_lock);
	c->reps = run.reps;
out:
	kfree(run.scratch);
	kvfree(run.col);
	kvfree(run.counts);
	kvfree(run.samples);
	return ret;
}
EXPORT_SYMBOL_GPL(nsl_calibrate);
