/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU rings of whole items (blocks, event records, loss markers),
 * filled by the core's deliver callback on the CPU that frees the skb and
 * drained by read() on /dev/ns or by a reader that maps them.
 */
#ifndef _NSLM_RING_H
#define _NSLM_RING_H

#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/netslice.h>

/* The largest item a ring takes, and the least a read() must take. */
#define NSLM_ITEM_MAX		sizeof(struct nsl_block)

enum {
	NSLM_RING_MIN_BYTES	= PAGE_SIZE,
	NSLM_RING_DEFAULT_BYTES	= 1024 * 1024,
};

struct nslm_totals {
	u64 packets;	/* items offered since the last reset */
	u64 drops;	/* of those, items that will never be read */
};

struct vm_area_struct;

/* Serialises readers in the kernel: read(), resize, reset. */
extern struct mutex nslm_ring_mutex;
/* Woken (irq_work, flush timer) when there is a batch to read. */
extern struct wait_queue_head nslm_ring_wait;

int nslm_rings_init(u64 bytes);
void nslm_rings_uninit(void);
/* EBUSY while mapped. */
int nslm_rings_resize(u64 bytes);
void nslm_rings_reset(void);
bool nslm_rings_have_items(void);
/*
 * Worth a wake-up: a ring at the watermark, or holding items the flush
 * timer made due; else, with items waiting, the timer is armed.
 */
bool nslm_rings_ready(void);
/* Place the loss markers pending where a reader has made room. */
void nslm_rings_mark_losses(void);
void nslm_rings_totals(struct nslm_totals *t);
u64 nslm_rings_bytes(void);
u64 nslm_rings_max_bytes(void);
/* Map every ring into @vma (EBUSY: mapped already); until unmapped(). */
int nslm_rings_mmap(struct vm_area_struct *vma);
/* vm_ops->fault of that mapping: its pages as touched, 64 KB at once. */
vm_fault_t nslm_rings_fault(struct vm_fault *vmf);
void nslm_rings_mapped_again(void);
void nslm_rings_unmapped(void);

void nslm_ring_deliver(const struct nsl_item_hdr *item, void *priv);
/*
 * Whole items of @cpu's ring to @buf, at most @space bytes, taken off
 * the ring.  -EFAULT when not even the first would copy, -EIO if the
 * ring is corrupt (a mapper wrote over it).
 */
ssize_t nslm_ring_read(unsigned int cpu, char __user *buf, size_t space);

#ifdef DEBUG
bool nslm_ring_selftest(void);
#endif

#endif /* _NSLM_RING_H */
