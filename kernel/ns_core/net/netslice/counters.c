// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice counters: one pinned kernel perf event per CPU per chosen event.
 *
 * perf owns the PMU; the core only asks it for counters and reads them:
 * events of the CPU's own PMU with rdpmc on the index perf assigned, all
 * others (software, IBS, uncore, RAPL) with perf_event_read_local().  A
 * reading that cannot be trusted (event not active, counter not in a
 * register, a configuration change between START and STOP) marks the
 * record NSL_RF_INVALID.
 */

#include <linux/perf_event.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/cpu.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/export.h>
#include <linux/string.h>
#include <linux/init.h>

#include "core.h"

/*
 * Width of the core PMU's counters, as perf takes it: CPUID leaf 0xa
 * where the CPU has an architectural PMU (Intel, Zhaoxin), 48 bits on AMD.
 */
static u64 nsl_pmc_mask __ro_after_init = GENMASK_ULL(47, 0);

struct nsl_counter_set {
	u32 nevents;
	u32 gen;			/* changes with every new set */
	bool hw[NSL_MAX_EVENTS];	/* on the core PMU: read with rdpmc */
	struct perf_event * __percpu *ev;	/* [nevents] per CPU */
	struct rcu_head rcu;
};

/* Current set (NULL: no events); written under nsl_ctr_lock. */
static struct nsl_counter_set __rcu *nsl_ctrs;
static DEFINE_MUTEX(nsl_ctr_lock);
static u32 nsl_mode;		/* NSL_MODE_*; under nsl_ctr_lock */
static u32 nsl_ctr_gen;		/* under nsl_ctr_lock */

u8 nsl_counters_nevents(u32 *gen)
{
	struct nsl_counter_set *set;
	u8 n = 0;

	if (READ_ONCE(nsl_mode) != NSL_MODE_COUNT)
		return 0;
	rcu_read_lock();
	set = rcu_dereference(nsl_ctrs);
	if (set) {
		n = set->nevents;
		*gen = set->gen;
	}
	rcu_read_unlock();
	return n;
}

#ifdef CONFIG_X86
static int __init nsl_pmc_width(void)
{
	const struct cpuinfo_x86 *c = &boot_cpu_data;
	unsigned int bits;

	if (c->x86_vendor == X86_VENDOR_AMD ||
	    c->x86_vendor == X86_VENDOR_HYGON || c->cpuid_level < 0xa)
		return 0;
	bits = (cpuid_eax(0xa) >> 16) & 0xff;
	if (bits >= 32 && bits <= 64)
		nsl_pmc_mask = GENMASK_ULL(bits - 1, 0);
	return 0;
}
subsys_initcall(nsl_pmc_width);

/*
 * The CPU's own PMU, whose counters rdpmc reads: "cpu" (PERF_TYPE_RAW),
 * or "cpu_core" and "cpu_atom" on hybrid parts.  Not AMD's IBS, uncore or
 * RAPL PMUs, whose counts live elsewhere: perf_event_read_local() for them.
 */
static bool nsl_core_pmu(const struct pmu *pmu)
{
	return pmu->type == PERF_TYPE_RAW || !strcmp(pmu->name, "cpu_core") ||
	       !strcmp(pmu->name, "cpu_atom");
}

/*
 * The event's 64-bit count as perf keeps it, from one rdpmc: what perf
 * has accumulated plus what the register gained since perf last read it.
 * A raw register value would not do: perf reloads the register when it
 * overflows and may move the event to another one when it schedules it.
 * Interrupts are off, so only an NMI (the PMI) can update the two
 * software fields under us: read again if it did.
 */
static bool nsl_pmc_read(struct perf_event *ev, u64 *val)
{
	struct hw_perf_event *hwc = &ev->hw;
	u64 prev, raw, count;

	lockdep_assert_irqs_disabled();
	do {
		prev = local64_read(&hwc->prev_count);
		if (unlikely(READ_ONCE(hwc->idx) < 0))
			return false;
		raw = native_read_pmc(hwc->event_base_rdpmc);
		count = local64_read(&ev->count);
	} while (unlikely(local64_read(&hwc->prev_count) != prev));
	*val = count + ((raw - prev) & nsl_pmc_mask);
	return true;
}
#else
static bool nsl_core_pmu(const struct pmu *pmu)
{
	return false;
}
#endif

/* Reads event @i of @set on this CPU; false if it cannot be trusted. */
static bool nsl_counter_read(struct nsl_counter_set *set, int i, u64 *val)
{
	struct perf_event *ev = per_cpu_ptr(set->ev, smp_processor_id())[i];

	if (unlikely(!ev || READ_ONCE(ev->state) != PERF_EVENT_STATE_ACTIVE))
		return false;
#ifdef CONFIG_X86
	if (set->hw[i])
		return nsl_pmc_read(ev, val);
#endif
	return perf_event_read_local(ev, val, NULL, NULL) == 0;
}

/*
 * START subtracts the readings from count[], STOP adds them, so count[]
 * ends as the delta, summed over merged intervals.  The TSC is read next
 * to the counters with interrupts off, after them at START and before
 * them at STOP, so that no interrupt handler runs between the readings
 * and is in one delta but not the other.  Returns that TSC.
 */
static u64 nsl_counters_apply(struct nsl_record *r, u8 nevents, u32 gen,
			      bool stop)
{
	struct nsl_counter_set *set;
	unsigned long flags;
	u64 tsc = 0;
	int i;

	local_irq_save(flags);
	if (stop)
		tsc = nsl_now();
	rcu_read_lock();
	set = rcu_dereference(nsl_ctrs);
	if (unlikely(!set || set->gen != gen || set->nevents != nevents)) {
		r->flags |= NSL_RF_INVALID;
		goto out;
	}
	for (i = 0; i < nevents; i++) {
		u64 v;

		if (!nsl_counter_read(set, i, &v)) {
			r->flags |= NSL_RF_INVALID;
			continue;
		}
		r->count[i] = stop ? r->count[i] + v : r->count[i] - v;
	}
out:
	rcu_read_unlock();
	if (!stop)
		tsc = nsl_now();
	local_irq_restore(flags);
	return tsc;
}

u64 nsl_counters_start(struct nsl_record *r, u8 nevents, u32 gen)
{
	return nsl_counters_apply(r, nevents, gen, false);
}

u64 nsl_counters_stop(struct nsl_record *r, u8 nevents, u32 gen)
{
	return nsl_counters_apply(r, nevents, gen, true);
}

static void nsl_set_release(struct nsl_counter_set *set)
{
	int cpu, i;

	if (!set)
		return;
	for_each_possible_cpu(cpu) {
		struct perf_event **ev = per_cpu_ptr(set->ev, cpu);

		for (i = 0; i < set->nevents; i++)
			if (ev[i])
				perf_event_release_kernel(ev[i]);
	}
	free_percpu(set->ev);
	kfree(set);
}

static int nsl_event_check(const struct nsl_event *e)
{
	if (e->flags)
		return -EINVAL;
	switch (e->type) {
	case PERF_TYPE_HARDWARE:
		if ((e->config & 0xffffffff) >= PERF_COUNT_HW_MAX)
			return -EINVAL;
		break;
	case PERF_TYPE_SOFTWARE:
		if (e->config >= PERF_COUNT_SW_MAX ||
		    e->config == PERF_COUNT_SW_BPF_OUTPUT ||
		    e->config == PERF_COUNT_SW_DUMMY)
			return -EINVAL;
		break;
	case PERF_TYPE_HW_CACHE:
		if ((e->config & 0xff) >= PERF_COUNT_HW_CACHE_MAX ||
		    ((e->config >> 8) & 0xff) >= PERF_COUNT_HW_CACHE_OP_MAX ||
		    ((e->config >> 16) & 0xff) >=
			PERF_COUNT_HW_CACHE_RESULT_MAX ||
		    e->config >> 24)
			return -EINVAL;
		break;
	case PERF_TYPE_RAW:
		break;
	default:
		/* Dynamic PMUs (types past PERF_TYPE_MAX) are left to perf. */
		if (e->type < PERF_TYPE_MAX)
			return -EINVAL;
	}
	return 0;
}

static struct nsl_counter_set *nsl_set_create(const struct nsl_events *req)
{
	struct nsl_counter_set *set;
	int cpu, i, err;

	set = kzalloc(sizeof(*set), GFP_KERNEL);
	if (unlikely(!set))
		return ERR_PTR(-ENOMEM);
	set->ev = __alloc_percpu(sizeof(struct perf_event *) * NSL_MAX_EVENTS,
				 sizeof(void *));
	if (unlikely(!set->ev)) {
		kfree(set);
		return ERR_PTR(-ENOMEM);
	}
	set->nevents = req->nevents;
	for (i = 0; i < req->nevents; i++)
		set->hw[i] = IS_ENABLED(CONFIG_X86);

	/*
	 * No cpus_read_lock() here: perf takes it itself (software events
	 * bump a static key), and a nested read of it deadlocks against a
	 * waiting hotplug writer.  perf refuses a CPU that is not online; one
	 * that goes away meanwhile is left without counters, and its records
	 * read as INVALID, as do those of a CPU that comes up later.
	 */
	for_each_online_cpu(cpu) {
		struct perf_event **ev = per_cpu_ptr(set->ev, cpu);

		for (i = 0; i < req->nevents; i++) {
			struct perf_event_attr attr = {
				.type = req->ev[i].type,
				.size = sizeof(attr),
				.config = req->ev[i].config,
				.config1 = req->ev[i].config1,
				.config2 = req->ev[i].config2,
				.pinned = 1,
				.exclude_user = 1,
			};

			ev[i] = perf_event_create_kernel_counter(&attr, cpu,
								 NULL, NULL,
								 NULL);
			if (IS_ERR(ev[i])) {
				err = PTR_ERR(ev[i]);
				ev[i] = NULL;
				/* a CPU coming up or going down */
				if (err == -ENODEV && !cpu_active(cpu))
					break;
				goto err_release;
			}
			if (!nsl_core_pmu(ev[i]->pmu))
				set->hw[i] = false;
		}
	}
	return set;

err_release:
	nsl_set_release(set);
	/* perf says ENOENT when no PMU takes the event */
	return ERR_PTR(err == -ENOENT ? -ENODEV : err);
}

int nsl_counters_set(const struct nsl_events *req)
{
	struct nsl_counter_set *set = NULL, *old;
	int i, err;

	if (req->flags || req->nevents > NSL_MAX_EVENTS)
		return -EINVAL;
	for (i = 0; i < NSL_MAX_EVENTS; i++) {
		if (i >= req->nevents) {
			if (memchr_inv(&req->ev[i], 0, sizeof(req->ev[i])))
				return -EINVAL;
			continue;
		}
		err = nsl_event_check(&req->ev[i]);
		if (err)
			return err;
	}
	if (req->nevents) {
		set = nsl_set_create(req);
		if (IS_ERR(set))
			return PTR_ERR(set);
	}

	mutex_lock(&nsl_ctr_lock);
	if (set)
		set->gen = ++nsl_ctr_gen;
	else
		++nsl_ctr_gen;
	old = rcu_replace_pointer(nsl_ctrs, set,
				  lockdep_is_held(&nsl_ctr_lock));
	mutex_unlock(&nsl_ctr_lock);
	/* Nobody reads the old counters after this. */
	synchronize_rcu();
	nsl_set_release(old);
	return 0;
}
EXPORT_SYMBOL_GPL(nsl_counters_set);

int nsl_counters_set_mode(u32 mode)
{
	if (mode != NSL_MODE_DURATION && mode != NSL_MODE_COUNT)
		return -EINVAL;
	mutex_lock(&nsl_ctr_lock);
	WRITE_ONCE(nsl_mode, mode);
	mutex_unlock(&nsl_ctr_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(nsl_counters_set_mode);
