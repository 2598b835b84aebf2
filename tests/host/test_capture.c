// SPDX-License-Identifier: GPL-2.0
/*
 * nsdump's mapped reader (capture.c) over rings laid out by hand as the
 * module lays them out: every item comes out once, in order, whole, as
 * runs that never cross the end of a ring's data (an item that ends it
 * exactly, a PAD), and every tail ends at its head.  A reader of runs
 * gets the blocks and loss items counted as they are found, once.
 */
#include <stdlib.h>
#include <string.h>
#include "source/capture.h"
#include "tap.h"
#include "tests.h"

#define RING	4096	/* data bytes per ring */
#define STRIDE	(4096 + RING)

struct writer {
	struct nsl_ring_ctl *ctl;
	unsigned char *data;
	uint64_t seq;
};

/* An item of @size bytes at the head: @kind, the next seq after hdr. */
static void put(struct writer *w, uint16_t kind, uint16_t size)
{
	struct nsl_item_hdr *h = (void *)(w->data + w->ctl->head % RING);

	memset(h, 0, size);
	h->kind = kind;
	h->size = size;
	h->cpu = w->ctl->cpu;
	if (kind != NSL_ITEM_PAD)
		memcpy(h + 1, &w->seq, 8), w->seq++;
	w->ctl->head += size;
}

#define CB	((uint16_t)((sizeof(struct nsl_cblock) + 7) / 8 * 8))

/*
 * A reader of runs: each run of compact blocks and loss items comes out
 * counted (d->run), the rest as before, uncounted.
 */
static void test_capture_runs(struct ns_dev *d, struct writer *w)
{
	static volatile sig_atomic_t no;
	uint64_t counted = 0, blocks = 0, loss_items = 0, other = 0;
	const unsigned char *p;
	ssize_t n;

	/* cpu 0: a run, a PAD, a run from 0 */
	w[0].ctl->head = w[0].ctl->tail = 5 * RING - (2 * CB + 32 + 48);
	put(&w[0], NSL_ITEM_CBLOCK, CB);
	put(&w[0], NSL_ITEM_LOSS, 32);
	put(&w[0], NSL_ITEM_CBLOCK, CB);
	put(&w[0], NSL_ITEM_PAD, 48);
	put(&w[0], NSL_ITEM_CBLOCK, CB);
	put(&w[0], NSL_ITEM_CBLOCK, CB);
	/* cpu 1: a run, then an event record and a block, uncounted */
	put(&w[1], NSL_ITEM_CBLOCK, CB);
	put(&w[1], NSL_ITEM_EVENT, 152);
	put(&w[1], NSL_ITEM_CBLOCK, CB);
	d->runs = true;
	while ((n = ns_dev_next(d, NULL, 0, &p, &no, &no, 0)) > 0) {
		if (d->run.len == (size_t)n && d->run.buf == p) {
			counted++;
			blocks += d->run.blocks;
			loss_items += d->run.loss_items;
		} else {
			other += d->run.len == 0 && n == 152 + CB;
		}
		ns_dev_done(d);
	}
	d->runs = false;
	TAP_EQ(n, 0, "capture runs: the mapped rings read to the end");
	TAP_EQ(counted, 3, "capture runs: 3 runs counted as found");
	TAP_EQ(blocks, 5, "capture runs: 5 blocks in them");
	TAP_EQ(loss_items, 1, "capture runs: 1 loss item in them");
	TAP_EQ(other, 1, "capture runs: the event record and its block, uncounted");
	TAP_EQ(w[0].ctl->tail, w[0].ctl->head, "capture runs: cpu 0's tail at its head");
	TAP_EQ(w[1].ctl->tail, w[1].ctl->head, "capture runs: cpu 1's tail at its head");
}

void test_capture(void)
{
	static volatile sig_atomic_t no;
	unsigned char *map = aligned_alloc(4096, 2 * STRIDE);
	uint64_t next[2] = { 0, 0 }, runs = 0, items = 0, bad = 0;
	struct ns_dev d = { .fd = -1, .path = "test" };
	const unsigned char *p;
	struct writer w[2];
	ssize_t n;

	memset(map, 0, 2 * STRIDE);
	for (int c = 0; c < 2; c++) {
		w[c].ctl = (void *)(map + c * STRIDE);
		w[c].data = map + c * STRIDE + 4096;
		w[c].seq = 0;
		w[c].ctl->magic = NSL_RING_MAGIC;
		w[c].ctl->cpu = c;
		w[c].ctl->size = RING;
	}
	/* cpu 0: two events end the data exactly, then on from 0 */
	w[0].ctl->head = w[0].ctl->tail = 3 * RING - 2 * 152;
	put(&w[0], NSL_ITEM_EVENT, 152);
	put(&w[0], NSL_ITEM_EVENT, 152);
	put(&w[0], NSL_ITEM_LOSS, 32);
	put(&w[0], NSL_ITEM_EVENT, 152);
	/* cpu 1: a PAD at the end, with items on both sides of it */
	w[1].ctl->head = w[1].ctl->tail = RING - 200;
	put(&w[1], NSL_ITEM_EVENT, 152);
	put(&w[1], NSL_ITEM_PAD, 48);
	put(&w[1], NSL_ITEM_LOSS, 32);
	put(&w[1], NSL_ITEM_EVENT, 152);

	d.map = map;
	d.stride = STRIDE;
	d.map_len = 2 * STRIDE;
	d.info.ncpus = 2;
	d.info.ring_bytes = RING;
	d.sysinfo_read = true;
	while ((n = ns_dev_next(&d, NULL, 0, &p, &no, &no, 0)) > 0) {
		size_t off = (size_t)(p - map) % STRIDE - 4096;

		runs++;
		bad += off + n > RING;	/* a run past the end of the data */
		for (ssize_t pos = 0; pos < n; ) {
			const struct nsl_item_hdr *h = (const void *)(p + pos);
			uint64_t seq;

			memcpy(&seq, h + 1, 8);
			bad += h->kind == NSL_ITEM_PAD || h->cpu > 1 ||
			       seq != next[h->cpu] || pos + h->size > n;
			next[h->cpu % 2]++;
			items++;
			pos += h->size;
		}
		ns_dev_done(&d);
	}
	TAP_EQ(n, 0, "capture: the mapped rings read to the end");
	TAP_EQ(items, 7, "capture: 7 items out of 2 rings (%llu runs)",
	       (unsigned long long)runs);
	TAP_EQ(bad, 0, "capture: each once, in order, whole, no run past the end of a ring, no PAD");
	TAP_EQ(runs, 4, "capture: a run ends where the data does, exactly or at a PAD");
	TAP_EQ(w[0].ctl->tail, w[0].ctl->head, "capture: cpu 0's tail at its head");
	TAP_EQ(w[1].ctl->tail, w[1].ctl->head, "capture: cpu 1's tail at its head, past the PAD");

	/* a tail no reader could have: an error, nothing handed out */
	w[1].ctl->tail = w[1].ctl->head + 8;
	TAP_EQ(ns_dev_next(&d, NULL, 0, &p, &no, &no, 0), -1,
	       "capture: a tail past the head is an error (%s)", d.err);
	w[1].ctl->tail = w[1].ctl->head;
	test_capture_runs(&d, w);
	free(map);
}
