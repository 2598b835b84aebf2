// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU rings.
 *
 * Each possible CPU has a ring of fixed-size slots; a slot holds one item,
 * copied with its own hdr.size.  The producer is the core's deliver
 * callback, running in any context on the CPU that frees the skb, so every
 * ring has an irq-safe spinlock.  The consumer is the reader of /dev/ns,
 * serialised by nslm_ring_mutex: it copies items straight from their
 * slots to user space, the spinlock held only to see which slots hold
 * items, and only then frees the slots (consume), so a faulting user
 * buffer loses nothing.
 *
 * Loss accounting: every item the core offers (a block or an event record)
 * takes that ring's next seq, whether it is kept or not.  An item that
 * finds the ring full is dropped and counted; whoever next finds room (the
 * reader once it has freed a slot, or else the producer when it has room
 * for the marker and its item) places a loss item saying how many items
 * are missing and the seq of the first.  So within one CPU's stream the
 * seqs are continuous except where a loss item accounts for the gap
 * exactly, and at every moment
 *
 *	packets == items read + drops + items still in the rings
 *
 * where packets counts the items offered and loss markers are not items.
 *
 * Wake-ups are batched: a sleeping reader is woken when a ring reaches
 * wakeup_items items, or wakeup_us after items came while it slept, so a
 * stream costs a wake-up per batch and a trickle one per wakeup_us, not
 * one per packet.  The producer only queues the irq_work when its ring
 * goes from empty to one item or is at the watermark or past it; the irq_work
 * wakes the reader or arms the flush timer, whose expiry makes whatever
 * is queued readable.  A reader about to sleep with items below the
 * watermark arms the timer itself.  O_NONBLOCK reads take whatever is
 * there.
 */

#include <linux/build_bug.h>
#include <linux/container_of.h>
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/irq_work.h>
#include <linux/lockdep.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/timex.h>

#include "ring.h"

struct nslm_ring {
	spinlock_t lock;	/* protects every field below */
	u8 *slots;		/* nslots slots of NSLM_SLOT_SIZE bytes */
	u32 nslots;
	u32 head;		/* slot of the oldest item */
	u32 count;		/* items in the ring; poll peeks locklessly */
	u32 cpu;		/* goes into hdr.cpu */
	u64 counted;		/* items that are not loss markers */
	u64 offered;		/* items offered: the next item's seq */
	u64 dropped;		/* items that will never be read */
	u64 lost;		/* drops not yet marked by a loss item */
	u64 lost_seq;		/* seq of the first of those */
	u64 lost_tsc;		/* TSC when it was dropped */
};

static DEFINE_PER_CPU(struct nslm_ring, nslm_rings);
static u32 ring_slots;		/* slots in every ring; nslm_ring_mutex */

/* Serialises consumers: peek/consume, resize, reset; see ring.h. */
DEFINE_MUTEX(nslm_ring_mutex);
DECLARE_WAIT_QUEUE_HEAD(nslm_ring_wait);

static unsigned int wakeup_items = 64;
module_param(wakeup_items, uint, 0644);
MODULE_PARM_DESC(wakeup_items, "Wake a sleeping reader when a ring holds this many items (default 64; 1: every item)");

static unsigned int wakeup_us = 5000;
module_param(wakeup_us, uint, 0644);
MODULE_PARM_DESC(wakeup_us, "... or this long after items came (default 5000 us; 0: at once)");

/* Set by the flush timer, cleared by a read that empties the rings. */
static bool flush_due;		/* READ_ONCE/WRITE_ONCE */

/* The watermark, at most half a ring (a reader must get room in time). */
static u32 watermark(void)
{
	u32 wm = READ_ONCE(wakeup_items);

	return clamp_t(u32, wm, 1, max_t(u32, READ_ONCE(ring_slots) / 2, 1));
}

static void flush_expired(struct timer_list *t)
{
	WRITE_ONCE(flush_due, true);
	wake_up_interruptible(&nslm_ring_wait);
}

static DEFINE_TIMER(flush_timer, flush_expired);

static bool rings_at_watermark(void)
{
	u32 wm = watermark();
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (READ_ONCE(per_cpu_ptr(&nslm_rings, cpu)->count) >= wm)
			return true;
	return false;
}

bool nslm_rings_ready(void)
{
	unsigned int us = READ_ONCE(wakeup_us);

	if (!nslm_rings_have_items())
		return false;
	if (!us || READ_ONCE(flush_due) || rings_at_watermark())
		return true;
	/* Items below the watermark: readable once the timer has run. */
	if (!timer_pending(&flush_timer))
		mod_timer(&flush_timer, jiffies + usecs_to_jiffies(us));
	return false;
}

/*
 * deliver() may run where taking the wait queue's lock is not safe (an skb
 * freed under a scheduler or printk lock), so the wake-up is deferred.
 */
static void wake_readers(struct irq_work *work)
{
	if (nslm_rings_ready())
		wake_up_interruptible(&nslm_ring_wait);
}

static DEFINE_IRQ_WORK(wake_work, wake_readers);

static void *ring_slot(struct nslm_ring *ring, u32 i)
{
	return ring->slots + (size_t)i * NSLM_SLOT_SIZE;
}

static u32 ring_room(const struct nslm_ring *ring)
{
	return ring->nslots - ring->count;
}

/* Takes the slot after the last item. */
static struct nsl_item_hdr *ring_reserve(struct nslm_ring *ring)
{
	u32 tail = ring->head + ring->count;

	lockdep_assert_held(&ring->lock);
	if (tail >= ring->nslots)
		tail -= ring->nslots;
	WRITE_ONCE(ring->count, ring->count + 1);
	return ring_slot(ring, tail);
}

static void *ring_push(struct nslm_ring *ring, const void *item, u16 size)
{
	return memcpy(ring_reserve(ring), item, size);
}

/*
 * A block goes in compact (the item read() returns, NSL_ITEM_CBLOCK): the
 * copy out and the reader's bytes are those of the records it has, not
 * of the room the skb's extension keeps.
 */
static struct nsl_item_hdr *ring_push_item(struct nslm_ring *ring,
					   const struct nsl_item_hdr *item)
{
	struct nsl_item_hdr *dst;

	BUILD_BUG_ON(NSL_CBLOCK_MAX > NSLM_SLOT_SIZE);
	BUILD_BUG_ON(offsetof(struct nsl_cblock, seq) !=
		     offsetof(struct nsl_block, seq));
	if (item->kind != NSL_ITEM_BLOCK)
		return ring_push(ring, item, item->size);
	dst = ring_reserve(ring);
	nsl_cblock_encode(container_of(item, struct nsl_block, hdr), dst);
	return dst;
}

static void ring_push_loss(struct nslm_ring *ring)
{
	struct nsl_loss loss = {
		.hdr = {
			.kind = NSL_ITEM_LOSS,
			.size = sizeof(loss),
			.cpu = ring->cpu,
		},
		.lost = ring->lost,
		.first_seq = ring->lost_seq,
		.tsc = ring->lost_tsc,
	};

	ring_push(ring, &loss, sizeof(loss));
	ring->lost = 0;
}

static void ring_drop(struct nslm_ring *ring, u64 seq)
{
	if (!ring->lost) {
		ring->lost_seq = seq;
		ring->lost_tsc = get_cycles();
	}
	ring->lost++;
	ring->dropped++;
}

/* Blocks and event records share the per-CPU seq, at the same offset. */
static u64 *item_seq(struct nsl_item_hdr *item)
{
	BUILD_BUG_ON(offsetof(struct nsl_block, seq) !=
		     offsetof(struct nsl_event_rec, seq));
	return &container_of(item, struct nsl_block, hdr)->seq;
}

static bool item_is_sane(const struct nsl_item_hdr *item)
{
	const struct nsl_block *blk;

	BUILD_BUG_ON(sizeof(struct nsl_event_rec) > NSLM_SLOT_SIZE);
	switch (item->kind) {
	case NSL_ITEM_BLOCK:
		blk = container_of(item, struct nsl_block, hdr);
		return blk->nrec <= NSL_MAX_RECORDS &&
		       item->size == NSL_BLOCK_SIZE(blk->nrec);
	case NSL_ITEM_EVENT:
		return item->size == sizeof(struct nsl_event_rec);
	default:
		return false;
	}
}

/* Returns the items in the ring once @item was queued; 0: dropped. */
static u32 ring_offer(struct nslm_ring *ring, const struct nsl_item_hdr *item)
{
	struct nsl_item_hdr *dst;
	unsigned long flags;
	u32 queued = 0;
	u64 seq;

	spin_lock_irqsave(&ring->lock, flags);
	seq = ring->offered++;
	if (WARN_ON_ONCE(!item_is_sane(item))) {
		ring_drop(ring, seq);
	} else if (ring_room(ring) >= (ring->lost ? 2 : 1)) {
		if (ring->lost)
			ring_push_loss(ring);
		dst = ring_push_item(ring, item);
		dst->cpu = ring->cpu;
		*item_seq(dst) = seq;
		ring->counted++;
		queued = ring->count;
	} else {
		ring_drop(ring, seq);
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	return queued;
}

void nslm_ring_deliver(const struct nsl_item_hdr *item, void *priv)
{
	/* Preemption may move us; the lock, not the CPU, guards the ring. */
	u32 count = ring_offer(raw_cpu_ptr(&nslm_rings), item);

	/*
	 * The first item starts the flush timer; at the watermark and past
	 * it (a loss marker and its item add two) a sleeping reader is woken.
	 */
	if ((count == 1 || count >= watermark()) &&
	    wq_has_sleeper(&nslm_ring_wait))
		irq_work_queue(&wake_work);
}

/* After a read: what is left waits for the watermark or the timer. */
void nslm_rings_read_done(void)
{
	WRITE_ONCE(flush_due, false);
	nslm_rings_ready();
}

/*
 * Copy out the whole items at the head of @ring that fit in @space bytes,
 * to @kbuf, or with @user to @ubuf by copy_to_user() (one copy from the
 * ring to the reader, the ring's lock not held meanwhile; @ubuf may be
 * anything, NULL too); *@nitems gets how many.
 * The lock is taken only to see which slots hold items: producers append
 * after them and never write them, and whatever else moves the head
 * (consume, resize, reset) needs nslm_ring_mutex, which the reader holds
 * (or, in the self-tests, nobody else runs).  -EFAULT if the first item
 * would not go to user space; after any other, what was copied.
 */
static ssize_t ring_copy_out(struct nslm_ring *ring, bool user, void *kbuf,
			     char __user *ubuf, size_t space,
			     unsigned int *nitems)
{
	const struct nsl_item_hdr *hdr;
	unsigned long flags;
	unsigned int n = 0;
	bool fault = false;
	size_t len = 0;
	u32 i, count;

	spin_lock_irqsave(&ring->lock, flags);
	i = ring->head;
	count = ring->count;
	spin_unlock_irqrestore(&ring->lock, flags);
	for (; n < count; n++) {
		hdr = ring_slot(ring, i);
		if (hdr->size > space - len)
			break;
		if (!user)
			memcpy(kbuf + len, hdr, hdr->size);
		else if (copy_to_user(ubuf + len, hdr, hdr->size))
			fault = true;
		if (fault)
			break;
		len += hdr->size;
		if (++i == ring->nslots)
			i = 0;
	}
	*nitems = n;
	return fault && !n ? -EFAULT : len;
}

static void ring_consume(struct nslm_ring *ring, unsigned int nitems)
{
	const struct nsl_item_hdr *hdr;
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	for (; nitems && ring->count; nitems--) {
		hdr = ring_slot(ring, ring->head);
		if (hdr->kind != NSL_ITEM_LOSS)
			ring->counted--;
		if (++ring->head == ring->nslots)
			ring->head = 0;
		WRITE_ONCE(ring->count, ring->count - 1);
	}
	/* Mark drops now rather than wait for the next block. */
	if (ring->lost && ring_room(ring))
		ring_push_loss(ring);
	spin_unlock_irqrestore(&ring->lock, flags);
}

ssize_t nslm_ring_read(unsigned int cpu, char __user *buf, size_t space,
		       unsigned int *nitems)
{
	lockdep_assert_held(&nslm_ring_mutex);
	return ring_copy_out(per_cpu_ptr(&nslm_rings, cpu), true, NULL, buf,
			     space, nitems);
}

void nslm_ring_consume(unsigned int cpu, unsigned int nitems)
{
	lockdep_assert_held(&nslm_ring_mutex);
	ring_consume(per_cpu_ptr(&nslm_rings, cpu), nitems);
}

/*
 * Empty a ring whose contents are about to be thrown away, turning them
 * into drops: what is in a ring, followed by the pending drops, is always
 * the tail of the seq stream, so one loss marker covers all of it.
 */
static void ring_discard(struct nslm_ring *ring)
{
	struct nsl_item_hdr *first;
	const struct nsl_loss *loss;

	lockdep_assert_held(&ring->lock);
	if (!ring->count)
		return;
	first = ring_slot(ring, ring->head);
	if (first->kind == NSL_ITEM_LOSS) {
		loss = container_of(first, struct nsl_loss, hdr);
		ring->lost_seq = loss->first_seq;
		ring->lost_tsc = loss->tsc;
	} else {
		ring->lost_seq = *item_seq(first);
		ring->lost_tsc = get_cycles();
	}
	ring->lost = ring->offered - ring->lost_seq;
	ring->dropped += ring->counted;
	ring->head = 0;
	ring->counted = 0;
	WRITE_ONCE(ring->count, 0);
}

/* Move @ring onto @slots; returns the old slots, whose items are drops. */
static u8 *ring_replace(struct nslm_ring *ring, u8 *slots, u32 nslots)
{
	unsigned long flags;
	u8 *old;

	spin_lock_irqsave(&ring->lock, flags);
	ring_discard(ring);
	old = ring->slots;
	ring->slots = slots;
	ring->nslots = nslots;
	ring->head = 0;		/* may lie beyond a smaller ring */
	if (ring->lost)
		ring_push_loss(ring);
	spin_unlock_irqrestore(&ring->lock, flags);
	return old;
}

u64 nslm_rings_max_bytes(void)
{
	u64 bytes = (u64)totalram_pages() * PAGE_SIZE / 8;

	bytes = div_u64(bytes, num_possible_cpus());
	/* kvmalloc() refuses (and warns about) more than INT_MAX bytes. */
	bytes = min_t(u64, bytes, INT_MAX);
	bytes = div_u64(bytes, NSLM_SLOT_SIZE) * NSLM_SLOT_SIZE;
	return max_t(u64, bytes, NSLM_RING_MIN_SLOTS * NSLM_SLOT_SIZE);
}

u64 nslm_rings_bytes(void)
{
	return (u64)READ_ONCE(ring_slots) * NSLM_SLOT_SIZE;
}

/*
 * Give every ring @bytes (rounded down to whole slots).  The new rings are
 * all allocated before any old one is touched, so a failure changes
 * nothing; items in the old rings become drops, marked by a loss item.
 */
int nslm_rings_resize(u64 bytes)
{
	u64 nslots = div_u64(bytes, NSLM_SLOT_SIZE);
	unsigned int cpu;
	u8 **fresh;
	int ret = 0;

	lockdep_assert_held(&nslm_ring_mutex);
	if (nslots < NSLM_RING_MIN_SLOTS)
		return -EINVAL;
	if (bytes > nslm_rings_max_bytes())
		return -ENOMEM;

	fresh = kcalloc(nr_cpu_ids, sizeof(*fresh), GFP_KERNEL);
	if (unlikely(!fresh))
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		fresh[cpu] = kvmalloc_node(nslots * NSLM_SLOT_SIZE,
					   GFP_KERNEL | __GFP_NOWARN,
					   cpu_to_node(cpu));
		if (unlikely(!fresh[cpu])) {
			ret = -ENOMEM;
			goto out_free;
		}
	}

	for_each_possible_cpu(cpu)
		fresh[cpu] = ring_replace(per_cpu_ptr(&nslm_rings, cpu),
					  fresh[cpu], nslots);
	WRITE_ONCE(ring_slots, nslots);

out_free:
	for_each_possible_cpu(cpu)
		kvfree(fresh[cpu]);
	kfree(fresh);
	return ret;
}

/* Forget everything: items, counters, seqs restart at 0. */
void nslm_rings_reset(void)
{
	struct nslm_ring *ring;
	unsigned long flags;
	unsigned int cpu;

	lockdep_assert_held(&nslm_ring_mutex);
	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		spin_lock_irqsave(&ring->lock, flags);
		ring->head = 0;
		WRITE_ONCE(ring->count, 0);
		ring->counted = 0;
		ring->offered = 0;
		ring->dropped = 0;
		ring->lost = 0;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
}

bool nslm_rings_have_items(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		if (READ_ONCE(per_cpu_ptr(&nslm_rings, cpu)->count))
			return true;
	return false;
}

void nslm_rings_totals(struct nslm_totals *t)
{
	struct nslm_ring *ring;
	unsigned long flags;
	unsigned int cpu;

	memset(t, 0, sizeof(*t));
	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		spin_lock_irqsave(&ring->lock, flags);
		t->packets += ring->offered;
		t->drops += ring->dropped;
		t->queued += ring->counted;
		spin_unlock_irqrestore(&ring->lock, flags);
	}
}

int nslm_rings_init(u64 bytes)
{
	struct nslm_ring *ring;
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		spin_lock_init(&ring->lock);
		ring->cpu = cpu;
	}
	mutex_lock(&nslm_ring_mutex);
	ret = nslm_rings_resize(min(bytes, nslm_rings_max_bytes()));
	mutex_unlock(&nslm_ring_mutex);
	return ret;
}

/* Only once nothing can deliver any more. */
void nslm_rings_uninit(void)
{
	struct nslm_ring *ring;
	unsigned int cpu;

	irq_work_sync(&wake_work);
	timer_shutdown_sync(&flush_timer);
	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		kvfree(ring->slots);
		ring->slots = NULL;
	}
}

#include "selftest/ring_test.c"
