/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU rings of whole items (blocks and loss markers), filled by the
 * core's deliver callback on the CPU that frees the skb and drained by
 * read() on /dev/ns.
 */
#ifndef _NSLM_RING_H
#define _NSLM_RING_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/netslice.h>

/* Every ring slot holds one item; a block is the largest. */
#define NSLM_SLOT_SIZE		sizeof(struct nsl_block)

enum {
	/* Smallest ring: a loss marker, a block and room to spare. */
	NSLM_RING_MIN_SLOTS	= 4,
	NSLM_RING_DEFAULT_BYTES	= 1024 * 1024,
};

struct nslm_totals {
	u64 packets;	/* items offered since the last reset */
	u64 drops;	/* of those, items that will never be read */
	u64 queued;	/* items waiting in the rings (not loss markers) */
};

/* Serialises the consumer side: peek/consume, resize, reset. */
extern struct mutex nslm_ring_mutex;
/* Woken (irq_work, flush timer) when there is a batch to read. */
extern struct wait_queue_head nslm_ring_wait;

int nslm_rings_init(u64 bytes);
void nslm_rings_uninit(void);
int nslm_rings_resize(u64 bytes);
void nslm_rings_reset(void);
bool nslm_rings_have_items(void);
/*
 * Worth a wake-up: a ring at the watermark, or the flush timer ran since
 * the last read; else, with items queued, the timer is armed.
 */
bool nslm_rings_ready(void);
void nslm_rings_read_done(void);
void nslm_rings_totals(struct nslm_totals *t);
u64 nslm_rings_bytes(void);
u64 nslm_rings_max_bytes(void);

void nslm_ring_deliver(const struct nsl_item_hdr *item, void *priv);
/*
 * Whole items of @cpu's ring to @buf, at most @space bytes; *@nitems gets
 * how many (left in the ring until nslm_ring_consume()).  -EFAULT when
 * not even the first would copy.
 */
ssize_t nslm_ring_read(unsigned int cpu, char __user *buf, size_t space,
		       unsigned int *nitems);
void nslm_ring_consume(unsigned int cpu, unsigned int nitems);

#ifdef DEBUG
bool nslm_ring_selftest(void);
#endif

#endif /* _NSLM_RING_H */
