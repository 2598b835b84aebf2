// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU rings, mapped into the reader (struct nsl_ring_ctl in netslice.h
 * says what the reader sees).
 *
 * Each CPU id has a control page and ring_bytes of data, all CPUs' in one
 * vmalloc_user() area that mmap() hands out whole.  The producer is the
 * core's deliver callback, on the CPU that frees the skb: with interrupts
 * off it writes its item in place (a block goes in compact, encoded
 * straight into the ring) and then publishes the new head with a release
 * store; no lock, since only that CPU ever writes that ring.  The reader,
 * read() here or a mapper in user space, takes items from tail to head
 * and then moves tail with a release store; the producer loads tail with
 * acquire before it writes over anything.  Whatever else must change a
 * ring (reset, resize, a loss marker placed for the reader) runs on the
 * ring's own CPU with interrupts off (ring_on_cpu()), where no producer
 * can be half-way through an item.
 *
 * tail is written by user space: the producer trusts it only to decide
 * whether there is room (a bogus tail makes the ring full, never makes a
 * write land outside the data), and read() checks every item it copies.
 *
 * Loss accounting: every item the core offers (a block or an event record)
 * takes that ring's next seq, whether it is kept or not.  An item that
 * finds the ring full is dropped and counted; the producer, once it has
 * room for a marker, places a loss item saying how many items are
 * missing and the seq of the first (and read() or poll() places it for
 * a reader that has made room, so the marker does not wait for the next
 * packet).  So within one CPU's stream the seqs are continuous except
 * where a loss item accounts for the gap exactly, and at every moment
 *
 *	offered == items read + dropped + items still in the ring
 *
 * where loss markers are not items.
 *
 * Wake-ups are batched: a sleeping reader is woken when a ring holds
 * wakeup_bytes (at most half the ring), or once the flush timer, armed
 * wakeup_us after items came while it slept, has run: the items that
 * were waiting then stay due until the reader has taken them.  The
 * producer only queues the irq_work when its ring is at the watermark or
 * past it, or lazily (at the next tick, no IPI) when it goes from empty
 * to one item, and only if somebody sleeps.  O_NONBLOCK reads take
 * whatever is there.
 */

#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/container_of.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/errno.h>
#include <linux/irq_work.h>
#include <linux/irqflags.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/smp.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/timex.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "ring.h"

/*
 * Every field is written only by the ring's CPU with interrupts off (the
 * producer, or ring_on_cpu()), or before the ring is in use; others read
 * them with READ_ONCE.  flush_head is the flush timer's.
 */
struct nslm_ring {
	struct nsl_ring_ctl *ctl;	/* the control page, in ring_area */
	u8 *data;		/* size bytes after it */
	u32 size;
	u32 off;		/* data offset of head: head % size */
	u64 head;		/* bytes written; published in ctl->head */
	u32 cpu;		/* goes into hdr.cpu */
	u64 offered;		/* items offered: the next item's seq */
	u64 dropped;		/* items that will never be read */
	u64 lost;		/* drops not yet marked by a loss item */
	u64 lost_seq;		/* seq of the first of those */
	u64 lost_tsc;		/* TSC when it was dropped */
	u64 flush_head;		/* head when the flush timer last ran */
};

static DEFINE_PER_CPU(struct nslm_ring, nslm_rings);

/*
 * The rings' memory: for every CPU id a control page and ring_size bytes.
 * Replaced only by a resize, under nslm_ring_mutex, which a mapping
 * excludes (map_state); read by mmap() in MAPPED state.
 */
static void *ring_area;
static u32 ring_size;

/*
 * Who holds ring_area: the number of VMAs mapping it (a fork with
 * MADV_DOFORK, or mremap, makes more of one mapping), or RING_RESIZING.
 * A mapping and a resize exclude each other.
 */
enum { RING_UNMAPPED = 0, RING_RESIZING = -1 };
static atomic_t map_state = ATOMIC_INIT(RING_UNMAPPED);

/* Serialises readers: read(), resize, reset; see ring.h. */
DEFINE_MUTEX(nslm_ring_mutex);
DECLARE_WAIT_QUEUE_HEAD(nslm_ring_wait);

static unsigned int wakeup_bytes = 32768;

/*
 * watermark(), kept as its inputs change (wakeup_bytes set, a resize --
 * the first at load, before any item -- under nslm_ring_mutex): the
 * producer reads one word, not two and a clamp.
 */
static u32 ring_wm;

static int wakeup_bytes_set(const char *val, const struct kernel_param *kp);

static const struct kernel_param_ops wakeup_bytes_ops = {
	.set = wakeup_bytes_set,
	.get = param_get_uint,
};

module_param_cb(wakeup_bytes, &wakeup_bytes_ops, &wakeup_bytes, 0644);
MODULE_PARM_DESC(wakeup_bytes, "Wake a sleeping reader when a ring holds this many bytes (default 32768, at most half a ring; 1: every item)");

static unsigned int wakeup_us = 5000;
module_param(wakeup_us, uint, 0644);
MODULE_PARM_DESC(wakeup_us, "... or this long after items came (default 5000 us; 0: at once)");

static size_t ring_stride(u32 size)
{
	return PAGE_SIZE + (size_t)size;
}

/* The watermark, at most half a ring (a reader must get room in time). */
static u64 watermark(void)
{
	return READ_ONCE(ring_wm);
}

static void watermark_update(void)
{
	u32 wm = READ_ONCE(wakeup_bytes);

	lockdep_assert_held(&nslm_ring_mutex);
	WRITE_ONCE(ring_wm, clamp_t(u32, wm, 1,
				    max_t(u32, READ_ONCE(ring_size) / 2, 1)));
}

static int wakeup_bytes_set(const char *val, const struct kernel_param *kp)
{
	int ret;

	mutex_lock(&nslm_ring_mutex);
	ret = param_set_uint(val, kp);
	if (!ret)
		watermark_update();
	mutex_unlock(&nslm_ring_mutex);
	return ret;
}

/*
 * Bytes waiting in @ring; more than its size if the reader's tail is bad.
 * Under rcu_read_lock() or the mutex: a resize replaces ring->ctl.
 */
static u64 ring_waiting(const struct nslm_ring *ring)
{
	const struct nsl_ring_ctl *ctl = READ_ONCE(ring->ctl);

	/* Pairs with the producer's release of head in ring_publish(). */
	return smp_load_acquire(&ctl->head) - READ_ONCE(ctl->tail);
}

static void flush_expired(struct timer_list *t)
{
	struct nslm_ring *ring;
	unsigned int cpu;

	rcu_read_lock();
	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		WRITE_ONCE(ring->flush_head, READ_ONCE(ring->ctl->head));
	}
	rcu_read_unlock();
	wake_up_interruptible(&nslm_ring_wait);
}

static DEFINE_TIMER(flush_timer, flush_expired);

/* Items there, and a batch of them or some the flush timer made due. */
static bool ring_ready(const struct nslm_ring *ring, u64 wm, bool now)
{
	u64 tail = READ_ONCE(READ_ONCE(ring->ctl)->tail);
	u64 waiting = ring_waiting(ring);

	return waiting && (now || waiting >= wm ||
			   (s64)(READ_ONCE(ring->flush_head) - tail) > 0);
}

bool nslm_rings_ready(void)
{
	bool now = !READ_ONCE(wakeup_us);
	u64 wm = watermark();
	bool ready = false;
	unsigned int cpu;

	rcu_read_lock();
	for_each_possible_cpu(cpu)
		ready = ready || ring_ready(per_cpu_ptr(&nslm_rings, cpu), wm,
					    now);
	rcu_read_unlock();
	if (ready)
		return true;
	/* Items below the watermark: readable once the timer has run. */
	if (nslm_rings_have_items() && !timer_pending(&flush_timer))
		mod_timer(&flush_timer,
			  jiffies + usecs_to_jiffies(READ_ONCE(wakeup_us)));
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
/*
 * The first item after the reader took everything only arms the flush
 * timer, which can wait for the next tick: queued lazily, it costs no
 * self-IPI (one per batch, at tens of microseconds under QEMU TCG).  The
 * watermark does not wait.
 */
static struct irq_work wake_work_lazy = IRQ_WORK_INIT_LAZY(wake_readers);

/*
 * What the reader sees besides the items; the producer's CPU only.  The
 * loss counters are published where they change (ring_publish_losses()),
 * which an item that fits does not.
 */
static void ring_publish(struct nslm_ring *ring)
{
	struct nsl_ring_ctl *ctl = ring->ctl;

	WRITE_ONCE(ctl->offered, ring->offered);
	/* The items first, then the head that makes them readable. */
	smp_store_release(&ctl->head, ring->head);
}

/* Before ring_publish(): its release covers these stores too. */
static void ring_publish_losses(struct nslm_ring *ring)
{
	WRITE_ONCE(ring->ctl->dropped, ring->dropped);
	WRITE_ONCE(ring->ctl->lost, ring->lost);
}

static void ring_advance(struct nslm_ring *ring, u32 len)
{
	ring->head += len;
	ring->off += len;
	if (ring->off == ring->size)
		ring->off = 0;
}

/*
 * @len contiguous bytes at the head, the end of the data padded if they
 * would not fit before it; NULL, with nothing written, if there is no
 * room.  @len is at most NSLM_ITEM_MAX, far below half a ring.
 */
static __always_inline void *ring_reserve(struct nslm_ring *ring, u32 len)
{
	/* The reader's release of tail: it is done with what lies behind. */
	u64 used = ring->head - smp_load_acquire(&ring->ctl->tail);
	u32 pad = ring->off + len > ring->size ? ring->size - ring->off : 0;
	struct nsl_item_hdr *hdr;

	if (used > ring->size || (u64)len + pad > ring->size - used)
		return NULL;
	if (pad) {
		hdr = (struct nsl_item_hdr *)(ring->data + ring->off);
		hdr->kind = NSL_ITEM_PAD;
		hdr->size = pad;
		hdr->cpu = ring->cpu;
		ring_advance(ring, pad);
	}
	return ring->data + ring->off;
}

/* Marks the drops so far, if there is room; false if there is not. */
static bool ring_push_loss(struct nslm_ring *ring)
{
	struct nsl_loss *loss = ring_reserve(ring, sizeof(*loss));

	if (!loss)
		return false;
	loss->hdr.kind = NSL_ITEM_LOSS;
	loss->hdr.size = sizeof(*loss);
	loss->hdr.cpu = ring->cpu;
	loss->lost = ring->lost;
	loss->first_seq = ring->lost_seq;
	loss->tsc = ring->lost_tsc;
	ring_advance(ring, sizeof(*loss));
	ring->lost = 0;
	ring_publish_losses(ring);
	return true;
}

static void ring_drop(struct nslm_ring *ring, u64 seq)
{
	if (!ring->lost) {
		ring->lost_seq = seq;
		ring->lost_tsc = get_cycles();
	}
	ring->lost++;
	ring->dropped++;
	ring_publish_losses(ring);
}

/* Blocks and event records share the per-CPU seq, at the same offset. */
static u64 *item_seq(struct nsl_item_hdr *item)
{
	BUILD_BUG_ON(offsetof(struct nsl_block, seq) !=
		     offsetof(struct nsl_event_rec, seq));
	BUILD_BUG_ON(offsetof(struct nsl_cblock, seq) !=
		     offsetof(struct nsl_block, seq));
	return &container_of(item, struct nsl_block, hdr)->seq;
}

/*
 * Bytes @item may take in the ring.  A block's are bounded, not counted:
 * the encoder clamps its records and devices to what NSL_CBLOCK_MAX
 * holds.  Reserving the bound costs at most that much padding at the
 * ring's end once a lap; counting it cost every block 15 instructions.
 */
static u32 item_room(const struct nsl_item_hdr *item)
{
	switch (item->kind) {
	case NSL_ITEM_BLOCK:
		return NSL_CBLOCK_MAX;
	case NSL_ITEM_EVENT:
		return item->size == sizeof(struct nsl_event_rec) ?
		       item->size : 0;
	default:
		return 0;
	}
}

/*
 * Producer, interrupts off on @ring's CPU.  Returns the bytes waiting
 * once @item was queued, 0 if it was dropped; *@first: it is all there is.
 */
static u64 ring_offer(struct nslm_ring *ring, const struct nsl_item_hdr *item,
		      bool *first)
{
	u64 seq = ring->offered++, head = ring->head, lost = ring->lost;
	u64 tail;
	u32 room = item_room(item), off = ring->off, len;
	struct nsl_item_hdr *dst;

	BUILD_BUG_ON(NSL_CBLOCK_MAX > NSLM_ITEM_MAX);
	BUILD_BUG_ON(sizeof(struct nsl_event_rec) > NSLM_ITEM_MAX);
	if (WARN_ON_ONCE(!room) || (lost && !ring_push_loss(ring)))
		goto drop;
	dst = ring_reserve(ring, room);
	if (!dst) {
		/* The marker waits for an item it can go in front of. */
		ring->head = head;
		ring->off = off;
		ring->lost = lost;
		goto drop;
	}
	if (item->kind == NSL_ITEM_BLOCK) {
		const struct nsl_block *b = container_of(item, struct nsl_block,
							 hdr);
		unsigned int nlog = nsl_block_log(b);

		/* A log is copied: the reader replays it into records. */
		len = nlog ? nsl_cblock_encode_log_on(b, ring->cpu, dst,
						      b->rec, nlog) :
			     nsl_cblock_encode_on(b, ring->cpu, dst);
		/* item_room() bounds every part the encoder writes. */
		WARN_ON_ONCE(len > room);
	} else {
		len = item->size;
		memcpy(dst, item, len);
		dst->cpu = ring->cpu;
	}
	*item_seq(dst) = seq;
	ring_advance(ring, len);
	ring_publish(ring);
	/*
	 * Whether the reader had taken everything before this offer, seen
	 * after the new head is: a reader that found the ring empty and
	 * went to sleep without arming the timer is then woken.
	 */
	smp_mb();
	tail = READ_ONCE(ring->ctl->tail);
	*first = tail == head;
	return ring->head - tail;

drop:
	ring_drop(ring, seq);
	ring_publish(ring);
	return 0;
}

void nslm_ring_deliver(const struct nsl_item_hdr *item, void *priv)
{
	unsigned long flags;
	bool first = false;
	u64 waiting;

	local_irq_save(flags);
	waiting = ring_offer(this_cpu_ptr(&nslm_rings), item, &first);
	local_irq_restore(flags);

	/*
	 * The first item starts the flush timer; at the watermark and past
	 * it a sleeping reader is woken.
	 */
	if (!waiting || !wq_has_sleeper(&nslm_ring_wait))
		return;
	if (waiting >= watermark())
		irq_work_queue(&wake_work);
	else if (first)
		irq_work_queue(&wake_work_lazy);
}

/*
 * Run @fn(@arg) on @ring's CPU with interrupts off, so that no producer
 * is inside ring_offer() there; an offline CPU has none.
 */
static void ring_on_cpu(struct nslm_ring *ring, smp_call_func_t fn, void *arg)
{
	unsigned long flags;

	cpus_read_lock();
	if (cpu_online(ring->cpu)) {
		smp_call_function_single(ring->cpu, fn, arg, 1);
	} else {
		local_irq_save(flags);
		fn(arg);
		local_irq_restore(flags);
	}
	cpus_read_unlock();
}

/*
 * The item at @pos (tail <= @pos < @head): its header, copied once, in
 * *@hdr, and where it is; NULL if what is there is not a whole item of a
 * kind a ring holds (the reader's tail or a mapper's writes were bad: the
 * data pages are the mapper's to scribble on, so the header is read once
 * and only the copy is trusted).
 */
static const void *ring_item(const struct nslm_ring *ring, u64 pos, u64 head,
			     struct nsl_item_hdr *hdr)
{
	const void *item;
	u32 off;

	div_u64_rem(pos, ring->size, &off);
	item = ring->data + off;
	memcpy(hdr, item, sizeof(*hdr));
	barrier();
	if (off % 8 || hdr->size < sizeof(*hdr) || hdr->size % 8 ||
	    hdr->size > ring->size - off || hdr->size > head - pos)
		return NULL;
	switch (hdr->kind) {
	case NSL_ITEM_PAD:
		return off + hdr->size == ring->size ? item : NULL;
	case NSL_ITEM_CBLOCK:
	case NSL_ITEM_EVENT:
	case NSL_ITEM_LOSS:
		return hdr->size <= NSLM_ITEM_MAX ? item : NULL;
	default:
		return NULL;
	}
}

static void ring_mark_loss(void *arg)
{
	struct nslm_ring *ring = arg;

	if (ring->lost && ring_push_loss(ring))
		ring_publish(ring);
}

/*
 * A reader made room: mark the drops now rather than at the next item
 * (an IPI, so only when there are drops and room for the marker).
 */
static void ring_mark_loss_now(struct nslm_ring *ring)
{
	u64 waiting;

	if (!READ_ONCE(ring->lost))
		return;
	rcu_read_lock();
	waiting = ring_waiting(ring);
	rcu_read_unlock();
	if (waiting <= READ_ONCE(ring->size) - 2 * sizeof(struct nsl_loss))
		ring_on_cpu(ring, ring_mark_loss, ring);
}

void nslm_rings_mark_losses(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		ring_mark_loss_now(per_cpu_ptr(&nslm_rings, cpu));
}

/*
 * Copy the whole items from @ring's tail on that fit in @space bytes to
 * @kbuf, or with @user to @ubuf by copy_to_user() (@ubuf may be anything,
 * NULL too), and move the tail past them: one copy from the ring to the
 * reader.  -EFAULT if the first item would not go to user space, -EIO if
 * the ring holds no whole item at the tail (a mapper wrote there); after
 * any item, what was copied.
 */
static ssize_t ring_copy_out(struct nslm_ring *ring, bool user, void *kbuf,
			     char __user *ubuf, size_t space)
{
	/* Pairs with the producer's release: the items up to head are whole. */
	u64 head = smp_load_acquire(&ring->ctl->head);
	u64 pos = READ_ONCE(ring->ctl->tail);
	struct nsl_item_hdr hdr;
	const void *item;
	ssize_t err = 0;
	size_t len = 0;

	if (head - pos > ring->size)
		return -EIO;
	while (pos != head) {
		item = ring_item(ring, pos, head, &hdr);
		if (!item) {
			err = -EIO;
			break;
		}
		if (hdr.kind != NSL_ITEM_PAD) {
			if (hdr.size > space - len)
				break;
			if (!user) {
				memcpy(kbuf + len, item, hdr.size);
			} else if (copy_to_user(ubuf + len, item, hdr.size)) {
				err = -EFAULT;
				break;
			}
			len += hdr.size;
		}
		pos += hdr.size;
	}
	/* Done with the items: the producer may write over them. */
	smp_store_release(&ring->ctl->tail, pos);
	ring_mark_loss_now(ring);
	return len ? len : err;
}

ssize_t nslm_ring_read(unsigned int cpu, char __user *buf, size_t space)
{
	lockdep_assert_held(&nslm_ring_mutex);
	return ring_copy_out(per_cpu_ptr(&nslm_rings, cpu), true, NULL, buf,
			     space);
}

/* A walk over the items of a ring about to be thrown away. */
struct ring_walk {
	u64 pos;	/* where the walk is: from tail on */
	u64 items;	/* items (not loss markers) seen */
	u64 first;	/* seq of the first item or marker, if seen */
	u64 tsc;	/* ... and when it was lost */
	bool seen;
	bool bad;	/* no whole item at pos: stop there */
};

/*
 * Walk on up to @head.  The items behind head stay as they are until
 * tail moves, which a resize excludes (the mutex holds off read(), and
 * map_state a mapper); so most of the walk can run before the ring is
 * frozen, and only what came since runs with interrupts off.
 */
static void ring_walk_to(const struct nslm_ring *ring, struct ring_walk *w,
			 u64 head)
{
	const struct nsl_loss *loss;
	struct nsl_item_hdr hdr;
	const void *item;

	for (; !w->bad && w->pos != head; w->pos += hdr.size) {
		item = ring_item(ring, w->pos, head, &hdr);
		w->bad = !item;
		if (w->bad || hdr.kind == NSL_ITEM_PAD)
			continue;
		if (hdr.kind == NSL_ITEM_LOSS) {
			loss = item;
			if (!w->seen) {
				w->first = READ_ONCE(loss->first_seq);
				w->tsc = READ_ONCE(loss->tsc);
			}
		} else {
			if (!w->seen) {
				w->first = READ_ONCE(*item_seq((void *)item));
				w->tsc = get_cycles();
			}
			w->items++;
		}
		w->seen = true;
		if (need_resched() && !irqs_disabled())
			cond_resched();
	}
}

static void ring_walk_start(const struct nslm_ring *ring, struct ring_walk *w)
{
	memset(w, 0, sizeof(*w));
	w->pos = READ_ONCE(ring->ctl->tail);
	/* Pairs with the producer's release: the items up to head are whole. */
	w->bad = smp_load_acquire(&ring->ctl->head) - w->pos > ring->size;
}

/*
 * What is in a ring about to be thrown away becomes drops: it is, with
 * the pending drops, the tail of the seq stream, so one loss marker
 * covers all of it.  @w has walked part of the way already.
 */
static void ring_discard(struct nslm_ring *ring, struct ring_walk *w)
{
	ring_walk_to(ring, w, ring->head);
	if (!w->seen)
		return;
	ring->lost_seq = w->first;
	ring->lost_tsc = w->tsc;
	ring->lost = ring->offered - w->first;
	ring->dropped += w->items;
}

static void ring_attach(struct nslm_ring *ring, void *area, u32 size)
{
	WRITE_ONCE(ring->ctl, area);
	ring->data = (u8 *)area + PAGE_SIZE;
	ring->size = size;
	ring->head = 0;
	ring->off = 0;
	WRITE_ONCE(ring->flush_head, 0);
	ring->ctl->watermark = watermark();
}

/* ring_on_cpu() work: move a ring onto new memory. */
struct ring_move {
	struct nslm_ring *ring;
	void *area;
	u32 size;
	struct ring_walk walk;	/* of the old ring, begun outside */
};

static void ring_replace(void *arg)
{
	struct ring_move *m = arg;
	struct nslm_ring *ring = m->ring;

	if (ring->ctl)
		ring_discard(ring, &m->walk);
	ring_attach(ring, m->area, m->size);
	if (ring->lost)
		ring_push_loss(ring);
	ring_publish_losses(ring);
	ring_publish(ring);
}

static void ring_clear(void *arg)
{
	struct nslm_ring *ring = arg;

	ring->offered = 0;
	ring->dropped = 0;
	ring->lost = 0;
	ring_attach(ring, ring->ctl, ring->size);
	WRITE_ONCE(ring->ctl->tail, 0);
	ring_publish_losses(ring);
	ring_publish(ring);
}

u64 nslm_rings_max_bytes(void)
{
	u64 bytes = (u64)totalram_pages() * PAGE_SIZE / 8;

	bytes = div_u64(bytes, nr_cpu_ids);
	/* ring_size is 32 bits; a gigabyte per CPU is plenty. */
	bytes = min_t(u64, bytes, SZ_1G) & PAGE_MASK;
	return max_t(u64, bytes, NSLM_RING_MIN_BYTES);
}

u64 nslm_rings_bytes(void)
{
	return READ_ONCE(ring_size);
}

/* A fresh area: every CPU id's control page says what it is. */
static void *area_alloc(u32 size)
{
	struct nsl_ring_ctl *ctl;
	unsigned int cpu;
	void *area;

	area = vmalloc_user(nr_cpu_ids * ring_stride(size));
	if (unlikely(!area))
		return NULL;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		ctl = area + cpu * ring_stride(size);
		ctl->magic = NSL_RING_MAGIC;
		ctl->cpu = cpu;
		ctl->size = size;
	}
	return area;
}

/*
 * Give every ring @bytes (rounded down to whole pages).  The new area is
 * allocated before any ring is touched, so a failure changes nothing;
 * items in the old rings become drops, marked by a loss item.  EBUSY
 * while the rings are mapped.
 */
int nslm_rings_resize(u64 bytes)
{
	struct ring_move move;
	unsigned int cpu;
	void *area, *old;
	u32 size;
	u64 head;
	int ret = 0;

	lockdep_assert_held(&nslm_ring_mutex);
	if (bytes < NSLM_RING_MIN_BYTES)
		return -EINVAL;
	if (bytes > nslm_rings_max_bytes())
		return -ENOMEM;
	size = bytes & PAGE_MASK;
	if (atomic_cmpxchg(&map_state, RING_UNMAPPED, RING_RESIZING) !=
	    RING_UNMAPPED)
		return -EBUSY;

	area = area_alloc(size);
	if (unlikely(!area)) {
		ret = -ENOMEM;
		goto out;
	}
	old = ring_area;
	WRITE_ONCE(ring_size, size);
	watermark_update();
	for_each_possible_cpu(cpu) {
		move.ring = per_cpu_ptr(&nslm_rings, cpu);
		move.area = area + cpu * ring_stride(size);
		move.size = size;
		if (move.ring->ctl) {
			ring_walk_start(move.ring, &move.walk);
			/* As above: the items up to this head are whole. */
			head = smp_load_acquire(&move.ring->ctl->head);
			ring_walk_to(move.ring, &move.walk, head);
		}
		ring_on_cpu(move.ring, ring_replace, &move);
	}
	ring_area = area;
	/* Readers of ring->ctl without the mutex (poll, the timer) are RCU's. */
	synchronize_rcu();
	vfree(old);
out:
	atomic_set_release(&map_state, RING_UNMAPPED);
	return ret;
}

/* Forget everything: items, counters, seqs restart at 0. */
void nslm_rings_reset(void)
{
	struct nslm_ring *ring;
	unsigned int cpu;

	lockdep_assert_held(&nslm_ring_mutex);
	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		ring_on_cpu(ring, ring_clear, ring);
	}
}

bool nslm_rings_have_items(void)
{
	bool items = false;
	unsigned int cpu;

	rcu_read_lock();
	for_each_possible_cpu(cpu)
		items = items || ring_waiting(per_cpu_ptr(&nslm_rings, cpu));
	rcu_read_unlock();
	return items;
}

/* Exact once the producers are quiet; a snapshot of each ring else. */
void nslm_rings_totals(struct nslm_totals *t)
{
	struct nslm_ring *ring;
	unsigned int cpu;

	memset(t, 0, sizeof(*t));
	for_each_possible_cpu(cpu) {
		ring = per_cpu_ptr(&nslm_rings, cpu);
		t->packets += READ_ONCE(ring->offered);
		t->drops += READ_ONCE(ring->dropped);
	}
}

/*
 * The whole area into @vma, shared; the mapping then excludes a resize
 * until nslm_rings_unmapped().  EBUSY if mapped already (or resizing).
 * Its pages come as the reader touches them (nslm_rings_fault()), a few
 * at a time, or all at once for a reader that asks (MAP_POPULATE, as
 * nsdump does, so that its capture's start-up maps them rather than its
 * first lap round the rings).
 */
int nslm_rings_mmap(struct vm_area_struct *vma)
{
	size_t len = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff || !(vma->vm_flags & VM_MAYSHARE) ||
	    len != nr_cpu_ids * ring_stride(READ_ONCE(ring_size)))
		return -EINVAL;
	if (atomic_cmpxchg(&map_state, RING_UNMAPPED, 1) != RING_UNMAPPED)
		return -EBUSY;
	/* A resize may have finished in between. */
	if (len != nr_cpu_ids * ring_stride(READ_ONCE(ring_size))) {
		atomic_dec(&map_state);
		return -EINVAL;
	}
	/*
	 * Not inherited: a child's stale view must not pin the rings.
	 * Mixed: the fault handler inserts pages itself (vm_insert_pages()).
	 */
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP |
		     VM_MIXEDMAP);
	return 0;
}

/*
 * Pages a fault maps, from the one touched on: as much as the kernel's
 * fault-around maps of a file (fault_around_bytes).  A reader walks a
 * ring forwards, so a page fault costs it every 64 KB of items rather
 * than every page (about 2,000 instructions each under QEMU TCG, where a
 * capture of lat_tcp took one every 4 KB: as much as its CRC).
 */
#define FAULT_PAGES	(SZ_64K >> PAGE_SHIFT)

/*
 * The pages of the area from the offset the mapping faulted at on, up to
 * FAULT_PAGES of them (vm_ops->fault), inserted here: VM_FAULT_NOPAGE.
 * One another fault mapped first stops the insertion there.  The mapping
 * is whole and at offset 0 (mmap, may_split and mremap see to it), and
 * ring_area stays while it is there.
 */
vm_fault_t nslm_rings_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct page *pages[FAULT_PAGES];
	unsigned long n, left;
	int err;

	n = min_t(unsigned long, FAULT_PAGES,
		  (vma->vm_end - vmf->address) >> PAGE_SHIFT);
	for (left = 0; left < n; left++) {
		pages[left] = vmalloc_to_page(ring_area +
					      ((vmf->pgoff + left) << PAGE_SHIFT));
		if (!pages[left])
			break;
	}
	if (!left)
		return VM_FAULT_SIGBUS;
	n = left;
	err = vm_insert_pages(vma, vmf->address, pages, &left);
	/* Nothing inserted and not because another fault did it first. */
	if (err && err != -EBUSY && left == n)
		return vmf_error(err);
	return VM_FAULT_NOPAGE;
}

/* One more VMA of an existing mapping (vm_ops->open). */
void nslm_rings_mapped_again(void)
{
	atomic_inc(&map_state);
}

void nslm_rings_unmapped(void)
{
	atomic_dec(&map_state);
}

int nslm_rings_init(u64 bytes)
{
	unsigned int cpu;
	int ret;

	for_each_possible_cpu(cpu)
		per_cpu_ptr(&nslm_rings, cpu)->cpu = cpu;
	mutex_lock(&nslm_ring_mutex);
	ret = nslm_rings_resize(min(bytes, nslm_rings_max_bytes()));
	mutex_unlock(&nslm_ring_mutex);
	return ret;
}

/* Only once nothing can deliver any more, and nothing is mapped. */
void nslm_rings_uninit(void)
{
	unsigned int cpu;

	irq_work_sync(&wake_work);
	irq_work_sync(&wake_work_lazy);
	timer_shutdown_sync(&flush_timer);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(&nslm_rings, cpu)->ctl = NULL;
	vfree(ring_area);
	ring_area = NULL;
}

#include "selftest/ring_test.c"
