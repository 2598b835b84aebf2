// SPDX-License-Identifier: GPL-2.0
/*
 * Aggregate mode (include/netslice.h, NSIOCSAGG): each block delivered is
 * folded into this CPU's histograms and goes no further, unless it passes
 * the exemplar threshold and a reader has /dev/ns open: then it is also
 * delivered whole.  /dev/ns-hist gives a snapshot to any number of
 * readers, each open() its own.
 *
 * Lifetime: struct nslm_agg is made by NSIOCSAGG on and published under
 * RCU; deliver() runs under RCU, so off (or unload) unpublishes it, waits
 * a grace period and frees it.  agg_mutex serialises the switches.
 */

#include <linux/bitops.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/netslice.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "agg.h"
#include "device.h"
#include "ring.h"

/* One CPU's histograms; written only on that CPU, interrupts off. */
struct nslm_agg_cpu {
	u64 blocks, trunc, open, exemplars, other;
	u64 sum[NSL_AGG_GROUPS][NSL_R_MAX];
	u32 bucket[NSL_AGG_GROUPS][NSL_R_MAX][NSL_AGG_BUCKETS];
};

/* What a group holds blocks of; a slot once filled never changes. */
struct nslm_agg_group {
	u32 ifindex, netns;
	u16 family, proto;
	u8 dir;
};

struct nslm_agg {
	struct nsl_agg conf;		/* as set; read only */
	u64 tau_o, tau_b;		/* ticks, from a calibration at on */
	u64 since_ns;			/* wall clock at on */
	u64 threshold;			/* ticks; P99: agg_p99() moves it */
	/* Slots 1 .. ngroups - 1 are filled; group_lock orders adders. */
	unsigned int ngroups;		/* smp_store_release() */
	raw_spinlock_t group_lock;
	struct nslm_agg_group group[NSL_AGG_GROUPS];
	struct delayed_work p99_work;	/* with NSL_AGG_P99 only */
	struct nslm_agg_cpu *cpu[];	/* nr_cpu_ids, possible ones vzalloc'd */
};

struct nslm_agg __rcu *nslm_agg_now;	/* agg_mutex to change */
static DEFINE_MUTEX(agg_mutex);
static u64 load_id;

#define P99_PERIOD	(HZ / 4)
#define P99_MIN_COUNT	100		/* fewer values: no exemplars yet */

/* ------------------------------------------------------------- fold */

/* Slots filled: acquire pairs with group_of()'s release of a new one. */
static unsigned int groups_filled(const struct nslm_agg *a)
{
	/* A slot counted is a slot whose key was written before. */
	return smp_load_acquire(&a->ngroups);
}

static bool group_is(const struct nslm_agg_group *g,
		     const struct nslm_agg_group *key)
{
	return g->ifindex == key->ifindex && g->netns == key->netns &&
	       g->family == key->family && g->proto == key->proto &&
	       g->dir == key->dir;
}

/* The slot of @key's group, made on first sight; 0 when all are taken. */
static unsigned int group_of(struct nslm_agg *a,
			     const struct nslm_agg_group *key)
{
	unsigned int i, n = groups_filled(a);
	unsigned long flags;

	for (i = 1; i < n; i++)
		if (group_is(&a->group[i], key))
			return i;
	if (n >= NSL_AGG_GROUPS)
		return 0;
	raw_spin_lock_irqsave(&a->group_lock, flags);
	for (n = a->ngroups; i < n; i++)
		if (group_is(&a->group[i], key))
			goto out;
	if (n < NSL_AGG_GROUPS) {
		a->group[n] = *key;
		/* The key before the count that shows it: groups_filled(). */
		smp_store_release(&a->ngroups, n + 1);
	} else {
		i = 0;
	}
out:
	raw_spin_unlock_irqrestore(&a->group_lock, flags);
	return i;
}

static void block_key(const struct nsl_block *b, struct nslm_agg_group *key)
{
	unsigned int i;

	memset(key, 0, sizeof(*key));
	key->ifindex = b->ifindex;
	key->family = b->family;
	key->proto = b->proto;
	key->dir = b->dir;
	for (i = 0; i < b->ndev && i < NSL_MAX_DEVS; i++)
		if (b->dev[i].ifindex == b->ifindex)
			key->netns = b->dev[i].netns;
}

/* Whether a block of values @val (@have of them) passes the threshold. */
static bool exemplar(const struct nslm_agg *a, const u64 *val, u32 have)
{
	u32 r = a->conf.region;

	if (a->conf.flags & NSL_AGG_ALL)
		return true;
	return r < NSL_R_MAX && (have & BIT(r)) &&
	       val[r] > READ_ONCE(a->threshold);
}

/*
 * Folds @b; returns whether it is to be delivered whole too: an
 * exemplar, with a reader there to take it (@reader).
 */
static bool agg_fold(struct nslm_agg *a, const struct nsl_block *b,
		     bool reader)
{
	struct nslm_agg_group key;
	struct nslm_agg_cpu *c;
	unsigned long flags, have;
	unsigned int g, r;
	u64 val[NSL_R_MAX];
	bool whole;
	int open;

	have = nsl_agg_values(b, a->tau_o, a->tau_b, val, &open);
	block_key(b, &key);
	g = group_of(a, &key);
	whole = reader && exemplar(a, val, have);

	local_irq_save(flags);
	c = a->cpu[smp_processor_id()];
	c->blocks++;
	c->trunc += !!(b->flags & NSL_BF_TRUNC);
	c->open += open;
	c->other += !g;
	c->exemplars += whole;
	for_each_set_bit(r, &have, NSL_R_MAX) {
		c->bucket[g][r][nsl_agg_bucket(val[r])]++;
		c->sum[g][r] += val[r];
	}
	local_irq_restore(flags);
	return whole;
}

/* A block that kept a log, its records replayed to be folded. */
static DEFINE_PER_CPU(struct nsl_block, agg_replay);

/*
 * agg_fold() of a block that kept a log (nsl_block_log()): on its records,
 * replayed into this CPU's block, which is the fold's until it is done.
 * Out of line: its locals would cost every block nslm_agg_take() passes.
 */
static noinline bool agg_fold_log(struct nslm_agg *a, const struct nsl_block *b,
				  unsigned int nlog)
{
	struct nsl_log_state st = { .merge_region = NSL_R_NONE };
	unsigned long flags;
	struct nsl_block *r;
	bool whole;

	local_irq_save(flags);
	r = this_cpu_ptr(&agg_replay);
	memcpy(r, b, offsetof(struct nsl_block, rec));
	nsl_log_replay(r, &st, b->rec, nlog, NET_SLICE_CONF);
	whole = agg_fold(a, r, nslm_device_is_open());
	local_irq_restore(flags);
	return whole;
}

bool nslm_agg_take(const struct nsl_item_hdr *item)
{
	const struct nsl_block *b = container_of(item, struct nsl_block, hdr);
	unsigned int nlog;
	struct nslm_agg *a;

	if (item->kind != NSL_ITEM_BLOCK)
		return false;
	a = rcu_dereference(nslm_agg_now);
	if (!a)
		return false;
	nlog = nsl_block_log(b);
	if (nlog)
		return !agg_fold_log(a, b, nlog);
	return !agg_fold(a, b, nslm_device_is_open());
}

/* ------------------------------------------------------- the p99 */

/* The values of region @r in group @g, over every CPU, into @out. */
static u64 hist_sum(const struct nslm_agg *a, unsigned int g, unsigned int r,
		    u32 *out, u64 *sum)
{
	unsigned int cpu, i;
	u64 count = 0;

	memset(out, 0, NSL_AGG_BUCKETS * sizeof(*out));
	*sum = 0;
	for_each_possible_cpu(cpu) {
		const struct nslm_agg_cpu *c = a->cpu[cpu];

		for (i = 0; i < NSL_AGG_BUCKETS; i++)
			out[i] += READ_ONCE(c->bucket[g][r][i]);
		*sum += READ_ONCE(c->sum[g][r]);
	}
	for (i = 0; i < NSL_AGG_BUCKETS; i++)
		count += out[i];
	return count;
}

/*
 * NSL_AGG_P99: the threshold is the upper bound of the bucket that holds
 * the 99th percentile of the exemplar region, over every group and CPU,
 * so an exemplar is above the running p99 by at most a bucket's width.
 */
static void agg_p99(struct work_struct *work)
{
	struct nslm_agg *a = container_of(to_delayed_work(work),
					  struct nslm_agg, p99_work);
	unsigned int g, i, n = groups_filled(a);
	u32 *tmp = kmalloc_array(2, NSL_AGG_BUCKETS * sizeof(u32), GFP_KERNEL);
	u64 count = 0, seen = 0, sum;

	if (!tmp)
		goto again;
	memset(tmp + NSL_AGG_BUCKETS, 0, NSL_AGG_BUCKETS * sizeof(u32));
	for (g = 0; g < n; g++) {
		count += hist_sum(a, g, a->conf.region, tmp, &sum);
		for (i = 0; i < NSL_AGG_BUCKETS; i++)
			tmp[NSL_AGG_BUCKETS + i] += tmp[i];
	}
	if (count < P99_MIN_COUNT)
		goto out;
	for (i = 0; i < NSL_AGG_BUCKETS - 1; i++) {
		seen += tmp[NSL_AGG_BUCKETS + i];
		if (seen * 100 >= count * 99)
			break;
	}
	WRITE_ONCE(a->threshold, i < NSL_AGG_BUCKETS - 1 ?
		   nsl_agg_bucket_low(i + 1) - 1 : U64_MAX);
out:
	kfree(tmp);
again:
	schedule_delayed_work(&a->p99_work, P99_PERIOD);
}

/* -------------------------------------------------------- snapshot */

struct snapshot {
	size_t len;
	u8 data[];
};

static void snap_head(const struct nslm_agg *a, struct nsl_agg_head *h)
{
	unsigned int cpu;

	memset(h, 0, sizeof(*h));
	h->magic = NSL_AGG_MAGIC;
	h->abi_version = NSL_ABI_VERSION;
	h->load_id = load_id;
	h->tsc_khz = nsl_tsc_khz();
	h->emitted = nsl_emitted();
	if (!a)
		return;
	h->since_realtime_ns = a->since_ns;
	h->conf = a->conf;
	h->tau_o = a->tau_o;
	h->tau_b = a->tau_b;
	h->threshold_ticks = (a->conf.flags & NSL_AGG_ALL) ? 0 :
			     READ_ONCE(a->threshold);
	for_each_possible_cpu(cpu) {
		const struct nslm_agg_cpu *c = a->cpu[cpu];

		h->blocks += READ_ONCE(c->blocks);
		h->trunc += READ_ONCE(c->trunc);
		h->open += READ_ONCE(c->open);
		h->exemplars += READ_ONCE(c->exemplars);
		h->other += READ_ONCE(c->other);
	}
}

/* The histogram of region @r in group @g; false if it is empty. */
static bool snap_hist(const struct nslm_agg *a, unsigned int g,
		      unsigned int r, struct nsl_agg_hist *h)
{
	const struct nslm_agg_group *grp = &a->group[g];

	memset(h, 0, sizeof(*h));
	if (!hist_sum(a, g, r, h->bucket, &h->sum_ticks))
		return false;
	h->region = r;
	h->dir = grp->dir;
	h->family = grp->family;
	h->proto = grp->proto;
	h->group = g;
	h->ifindex = grp->ifindex;
	h->netns = grp->netns;
	return true;
}

/* A snapshot of what is there now; NULL without memory. */
static struct snapshot *snap_take(void)
{
	size_t most = sizeof(struct nsl_agg_head) +
		      NSL_AGG_GROUPS * NSL_R_MAX * sizeof(struct nsl_agg_hist);
	struct nsl_agg_head *head;
	struct nsl_agg_hist *h;
	struct snapshot *s;
	struct nslm_agg *a;
	unsigned int g, r, n;

	s = kvmalloc(sizeof(*s) + most, GFP_KERNEL);
	if (!s)
		return NULL;
	head = (void *)s->data;
	h = (void *)(head + 1);
	rcu_read_lock();
	a = rcu_dereference(nslm_agg_now);
	snap_head(a, head);
	n = a ? groups_filled(a) : 0;
	for (g = 0; g < n; g++)
		for (r = 0; r < NSL_R_MAX; r++)
			if (snap_hist(a, g, r, h))
				h++;
	rcu_read_unlock();
	head->nhist = h - (struct nsl_agg_hist *)(head + 1);
	s->len = (u8 *)h - s->data;
	return s;
}

int nslm_agg_read(struct nsl_agg_read __user *arg)
{
	struct nsl_agg_read rd;
	struct snapshot *s;
	int ret = 0;

	if (copy_from_user(&rd, arg, sizeof(rd)))
		return -EFAULT;
	s = snap_take();
	if (!s)
		return -ENOMEM;
	if (rd.len < s->len)
		ret = -ENOSPC;
	else if (copy_to_user(u64_to_user_ptr(rd.buf), s->data, s->len))
		ret = -EFAULT;
	rd.len = s->len;
	if (ret != -EFAULT && copy_to_user(arg, &rd, sizeof(rd)))
		ret = -EFAULT;
	kvfree(s);
	return ret;
}

/* ----------------------------------------------------- /dev/ns-hist */

static int hist_open(struct inode *inode, struct file *file)
{
	file->private_data = snap_take();
	return file->private_data ? 0 : -ENOMEM;
}

static ssize_t hist_read(struct file *file, char __user *buf, size_t count,
			 loff_t *pos)
{
	struct snapshot *s = file->private_data;

	return simple_read_from_buffer(buf, count, pos, s->data, s->len);
}

static int hist_release(struct inode *inode, struct file *file)
{
	kvfree(file->private_data);
	return 0;
}

static const struct file_operations hist_fops = {
	.owner		= THIS_MODULE,
	.open		= hist_open,
	.read		= hist_read,
	.llseek		= default_llseek,
	.release	= hist_release,
};

static struct miscdevice hist_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "ns-hist",
	.fops		= &hist_fops,
	.mode		= 0444,
};

/* ---------------------------------------------------- on and off */

static void agg_free(struct nslm_agg *a)
{
	unsigned int cpu;

	if (!a)
		return;
	for_each_possible_cpu(cpu)
		vfree(a->cpu[cpu]);
	kfree(a);
}

/* The macros' own cost, as nsdump takes it off (stage/correct.h). */
static void agg_calibrate(struct nslm_agg *a)
{
	struct nsl_calib *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (c) {
		c->cpu = raw_smp_processor_id();
		if (!nsl_calibrate(c)) {
			a->tau_o = c->cost[NSL_C_NSO].ticks;
			a->tau_b = c->cost[NSL_C_NSA].ticks;
			a->conf.flags |= NSL_AGG_CORRECTED;
		}
	}
	kfree(c);
}

static struct nslm_agg *agg_alloc(const struct nsl_agg *conf)
{
	struct nslm_agg *a;
	unsigned int cpu;

	a = kzalloc(struct_size(a, cpu, nr_cpu_ids), GFP_KERNEL);
	if (!a)
		return NULL;
	for_each_possible_cpu(cpu) {
		a->cpu[cpu] = vzalloc(sizeof(*a->cpu[cpu]));
		if (!a->cpu[cpu])
			goto err;
	}
	a->conf = *conf;
	a->conf.flags &= ~NSL_AGG_RESET;
	a->ngroups = 1;		/* group 0: the others */
	raw_spin_lock_init(&a->group_lock);
	INIT_DELAYED_WORK(&a->p99_work, agg_p99);
	a->since_ns = ktime_get_real_ns();
	a->threshold = U64_MAX;
	if (conf->threshold_ns && !(conf->flags & NSL_AGG_P99))
		a->threshold = div_u64(conf->threshold_ns * nsl_tsc_khz(),
				       1000000);
	agg_calibrate(a);
	return a;
err:
	agg_free(a);
	return NULL;
}

/* Unpublishes @old, waits for the folds still in it, frees it. */
static void agg_retire(struct nslm_agg *old)
{
	if (!old)
		return;
	cancel_delayed_work_sync(&old->p99_work);
	synchronize_rcu();
	agg_free(old);
}

static int agg_check(const struct nsl_agg *conf)
{
	if (conf->flags & ~NSL_AGG_FLAGS)
		return -EINVAL;
	if (conf->region >= NSL_R_MAX)
		return -EINVAL;
	/* ticks = ns * khz / 10^6 must not overflow */
	if (conf->threshold_ns > U64_MAX / (u64)(nsl_tsc_khz() + 1))
		return -ERANGE;
	return 0;
}

/*
 * NSIOCSAGG.  On again with the same exemplar choice keeps the
 * histograms (a reader that comes back); a new choice, or
 * NSL_AGG_RESET, starts them anew.
 */
int nslm_agg_set(const struct nsl_agg *conf)
{
	struct nslm_agg *old, *a = NULL;
	int ret = agg_check(conf);

	if (ret)
		return ret;
	mutex_lock(&agg_mutex);
	old = rcu_dereference_protected(nslm_agg_now, lockdep_is_held(&agg_mutex));
	if (old && (conf->flags & NSL_AGG_ON) &&
	    !(conf->flags & NSL_AGG_RESET) &&
	    (old->conf.flags & NSL_AGG_FLAGS) == conf->flags &&
	    old->conf.region == conf->region &&
	    old->conf.threshold_ns == conf->threshold_ns)
		goto out;
	if (conf->flags & NSL_AGG_ON) {
		a = agg_alloc(conf);
		if (!a) {
			ret = -ENOMEM;
			goto out;
		}
	}
	rcu_assign_pointer(nslm_agg_now, a);
	if (a && (a->conf.flags & NSL_AGG_P99))
		schedule_delayed_work(&a->p99_work, P99_PERIOD);
	agg_retire(old);
out:
	mutex_unlock(&agg_mutex);
	return ret;
}

int nslm_agg_init(void)
{
	load_id = get_random_u64();
	return misc_register(&hist_misc);
}

void nslm_agg_uninit(void)
{
	misc_deregister(&hist_misc);
	/* The receiver is gone: no fold runs. */
	agg_retire(rcu_dereference_protected(nslm_agg_now, true));
	RCU_INIT_POINTER(nslm_agg_now, NULL);
}
