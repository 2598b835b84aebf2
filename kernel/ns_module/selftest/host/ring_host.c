// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c in user space under ASan/UBSan: its DEBUG self-tests, then random
 * interleavings of offers, reads of random sizes, resizes and resets, with
 * the loss-accounting invariant checked after every step.
 */
#define DEBUG
#include "../../ring.c"

static int ntests, nfailed;

static void tap(int ok, const char *what)
{
	ntests++;
	nfailed += !ok;
	printf("%sok %d - %s\n", ok ? "" : "not ", ntests, what);
}

/* Blocks announced lost by the loss markers still in the ring. */
static u64 ring_lost_marked(struct nslm_ring *r)
{
	const struct nsl_loss *l;
	u64 sum = 0;
	u32 i, k;

	for (k = 0, i = r->head; k < r->count; k++, i = (i + 1) % r->nslots) {
		l = ring_slot(r, i);
		if (l->hdr.kind == NSL_ITEM_LOSS)
			sum += l->lost;
	}
	return sum;
}

static int fuzz(long iters)
{
	struct selftest_stream st = { 0 };
	struct nslm_ring *r = &nslm_rings;
	struct nslm_totals t;
	long i;
	int op;

	srand(1);
	if (nslm_rings_init(8 * NSLM_SLOT_SIZE))
		return 0;
	st.buf = malloc(64 * NSLM_SLOT_SIZE);
	for (i = 0; i < iters; i++) {
		op = rand() % 100;
		if (op < 10) {
			ring_offer(r, selftest_event());
		} else if (op < 60) {
			ring_offer(r, selftest_block(rand() % 17));
		} else if (op < 95) {
			if (!selftest_read(r, &st, SELFTEST_SIZE(0) +
					   rand() % (8 * NSLM_SLOT_SIZE)))
				return 0;
		} else if (op < 99) {
			if (nslm_rings_resize((4 + rand() % 30) *
					      NSLM_SLOT_SIZE + rand() % 100))
				return 0;
		} else if (rand() % 1000 == 0) {
			nslm_rings_reset();
			st.next_seq = st.blocks = st.lost = 0;
		}
		nslm_rings_totals(&t);
		if (t.packets != st.blocks + t.drops + t.queued ||
		    r->dropped != st.lost + r->lost + ring_lost_marked(r) ||
		    r->count > r->nslots) {
			printf("# imbalance after step %ld (op %d)\n", i, op);
			return 0;
		}
	}
	while (r->count)
		if (!selftest_read(r, &st, 64 * NSLM_SLOT_SIZE))
			return 0;
	nslm_rings_totals(&t);
	printf("# %llu blocks offered, %llu read, %llu dropped\n",
	       (unsigned long long)t.packets, (unsigned long long)st.blocks,
	       (unsigned long long)t.drops);
	nslm_rings_uninit();
	free(st.buf);
	return t.packets == st.blocks + t.drops && t.drops == st.lost &&
	       st.next_seq == t.packets;
}

int main(void)
{
	tap(nslm_ring_selftest(), "ring self-tests");
	tap(fuzz(2000000), "2M random offers/reads/resizes/resets stay balanced");
	printf("1..%d\n%d passed, %d failed\n", ntests, ntests - nfailed,
	       nfailed);
	return nfailed ? 1 : 0;
}
