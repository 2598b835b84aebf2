// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c in user space under ASan/UBSan: its DEBUG self-tests, then random
 * interleavings of offers, read()s of random sizes, a mapper's takes
 * (items walked in place, tail moved as nsdump does), resizes and resets,
 * with the loss-accounting invariant checked after every step.
 */
#define DEBUG
#include "../../ring.c"
#define TAP_IMPLEMENT
#include "../../../../tests/tap.h"

#define tap(ok, what)	tap_ok(ok, "%s", what)

/*
 * What a mapper does: take the items from tail to head (at most @max),
 * in place, checking them as read() would hand them out, then move tail.
 */
static bool map_take(struct nslm_ring *r, struct selftest_stream *st,
		     unsigned int max)
{
	struct nsl_ring_ctl *ctl = r->ctl;
	u64 head = smp_load_acquire(&ctl->head), pos = ctl->tail;
	struct nsl_item_hdr hdr;
	const void *item;

	for (; pos != head && max; pos += hdr.size) {
		item = ring_item(r, pos, head, &hdr);
		if (!item)
			return false;
		if (hdr.kind == NSL_ITEM_PAD)
			continue;
		if (!selftest_check(r, st, item, hdr.size))
			return false;
		max--;
	}
	smp_store_release(&ctl->tail, pos);
	return true;
}

static int fuzz(long iters)
{
	struct selftest_stream st = { 0 };
	struct nslm_ring *r = &nslm_rings;
	struct nslm_totals t;
	u64 pads = 0;
	u32 off;
	bool first;
	long i;
	int op;

	srand(1);
	if (nslm_rings_init(2 * PAGE_SIZE))
		return 0;
	st.buf = malloc(64 * NSLM_ITEM_MAX);
	for (i = 0; i < iters; i++) {
		op = rand() % 100;
		off = r->off;
		if (op < 10) {
			ring_offer(r, selftest_event(), &first);
		} else if (op < 60) {
			if (ring_offer(r, selftest_block(rand() % 17), &first))
				pads += r->off < off;
		} else if (op < 78) {
			if (!selftest_read(r, &st, SELFTEST_SIZE(0) +
					   rand() % (8 * NSLM_ITEM_MAX)))
				return 0;
		} else if (op < 95) {
			if (!map_take(r, &st, rand() % 16))
				return 0;
		} else if (op < 99) {
			if (nslm_rings_resize(PAGE_SIZE + rand() % (8 * PAGE_SIZE)))
				return 0;
		} else if (rand() % 1000 == 0) {
			nslm_rings_reset();
			st.next_seq = st.blocks = st.lost = 0;
		}
		nslm_rings_totals(&t);
		if (t.packets != r->offered || t.drops != r->dropped ||
		    !selftest_balanced(r, &st)) {
			printf("# imbalance after step %ld (op %d)\n", i, op);
			return 0;
		}
	}
	while (r->ctl->tail != r->head)
		if (!selftest_read(r, &st, 64 * NSLM_ITEM_MAX))
			return 0;
	nslm_rings_mark_losses();
	if (!selftest_read(r, &st, 64 * NSLM_ITEM_MAX))
		return 0;
	nslm_rings_totals(&t);
	printf("# since the last reset: %llu items offered, %llu read, %llu dropped; %llu wraps in all\n",
	       (unsigned long long)t.packets, (unsigned long long)st.blocks,
	       (unsigned long long)t.drops, (unsigned long long)pads);
	nslm_rings_uninit();
	free(st.buf);
	return t.packets == st.blocks + t.drops && t.drops == st.lost &&
	       st.next_seq == t.packets && pads && t.drops;
}

int main(void)
{
	tap(nslm_ring_selftest(), "ring self-tests");
	tap(fuzz(2000000),
	    "2M random offers/reads/mapped takes/resizes/resets stay balanced");
	return tap_finish();
}
