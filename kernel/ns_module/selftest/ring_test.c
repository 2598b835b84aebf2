// SPDX-License-Identifier: GPL-2.0
/*
 * Self-tests of the ring's loss accounting on a private 4-slot ring,
 * compiled under DEBUG and run at module load: every block offered must
 * come out as itself (a block compact) or inside a loss item, in seq order, whatever the
 * interleaving of offers, reads and a resize.
 */

#ifdef DEBUG

struct selftest_stream {
	u64 next_seq;	/* seq the next item must start at */
	u64 blocks;	/* blocks and event records read */
	u64 lost;	/* items announced lost */
	u8 *buf;	/* room for a whole ring */
};

/* A compact block of selftest_block(): no record needs its extension. */
#define SELFTEST_SIZE(nrec) \
	ALIGN(sizeof(struct nsl_cblock) + (nrec) * sizeof(struct nsl_crec), 8)

static struct nsl_item_hdr *selftest_block(u8 nrec)
{
	static struct nsl_block blk;
	unsigned int i;

	memset(&blk, 0, sizeof(blk));
	blk.hdr.kind = NSL_ITEM_BLOCK;
	blk.hdr.size = NSL_BLOCK_SIZE(nrec);
	blk.hdr.cpu = U32_MAX;
	blk.nrec = nrec;
	blk.seq = U64_MAX;
	for (i = 0; i < nrec; i++)
		blk.rec[i].nmerged = 1;
	return &blk.hdr;
}

static struct nsl_item_hdr *selftest_event(void)
{
	static struct nsl_event_rec ev;

	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = NSL_ITEM_EVENT;
	ev.hdr.size = sizeof(ev);
	ev.seq = U64_MAX;
	return &ev.hdr;
}

/* The reader's copy, to kernel memory. */
static size_t ring_peek(struct nslm_ring *ring, void *buf, size_t space,
			unsigned int *nitems)
{
	return ring_copy_out(ring, false, buf, NULL, space, nitems);
}

/* Read (up to @space bytes of) the ring and check the items. */
static bool selftest_read(struct nslm_ring *ring, struct selftest_stream *st,
			  size_t space)
{
	const struct nsl_item_hdr *hdr;
	const struct nsl_event_rec *ev;
	const struct nsl_cblock *blk;
	const struct nsl_loss *loss;
	unsigned int nitems, i;
	size_t len, off = 0;

	len = ring_peek(ring, st->buf, space, &nitems);
	for (i = 0; i < nitems; i++, off += hdr->size) {
		hdr = (const struct nsl_item_hdr *)(st->buf + off);
		if (off + hdr->size > len || hdr->cpu != ring->cpu)
			return false;
		if (hdr->kind == NSL_ITEM_CBLOCK) {
			blk = (const struct nsl_cblock *)hdr;
			if (blk->seq != st->next_seq ||
			    hdr->size != SELFTEST_SIZE(blk->nrec))
				return false;
			st->next_seq++;
			st->blocks++;
		} else if (hdr->kind == NSL_ITEM_EVENT) {
			ev = (const struct nsl_event_rec *)hdr;
			if (ev->seq != st->next_seq || hdr->size != sizeof(*ev))
				return false;
			st->next_seq++;
			st->blocks++;
		} else if (hdr->kind == NSL_ITEM_LOSS) {
			loss = (const struct nsl_loss *)hdr;
			if (loss->first_seq != st->next_seq || !loss->lost ||
			    hdr->size != sizeof(*loss))
				return false;
			st->next_seq += loss->lost;
			st->lost += loss->lost;
		} else {
			return false;
		}
	}
	ring_consume(ring, nitems);
	return off == len;
}

/* packets == items read + drops + items still in the ring */
static bool selftest_balanced(struct nslm_ring *ring,
			      const struct selftest_stream *st)
{
	return ring->offered == st->blocks + ring->dropped + ring->counted &&
	       ring->dropped == st->lost + ring->lost;
}

bool __init nslm_ring_selftest(void)
{
	const size_t ring_bytes = NSLM_RING_MIN_SLOTS * NSLM_SLOT_SIZE;
	struct selftest_stream st = { };
	struct nslm_ring ring = { .cpu = 7 };
	bool success = true;
	unsigned int i;
	u8 *slots;

#define CHECK(cond) do {						\
		if (!(cond)) {						\
			pr_err("ring self-test %d failed: %s\n",	\
			       __LINE__, #cond);			\
			success = false;				\
		}							\
	} while (0)

	spin_lock_init(&ring.lock);
	ring.slots = kvmalloc(ring_bytes, GFP_KERNEL);
	st.buf = kvmalloc(ring_bytes, GFP_KERNEL);
	if (!ring.slots || !st.buf) {
		kvfree(ring.slots);
		kvfree(st.buf);
		pr_err("ring self-tests: FAIL (no memory)\n");
		return false;
	}
	ring.nslots = NSLM_RING_MIN_SLOTS;

	/* Whole items of every size, nothing lost. */
	CHECK(ring_offer(&ring, selftest_block(0)) == 1);
	CHECK(ring_offer(&ring, selftest_block(1)) == 2);
	CHECK(ring_offer(&ring, selftest_block(NSL_MAX_RECORDS)) == 3);
	CHECK(ring.count == 3);
	/* Too small for the first item: nothing, not a partial item. */
	CHECK(selftest_read(&ring, &st, SELFTEST_SIZE(0) - 8));
	CHECK(st.blocks == 0 && ring.count == 3);
	CHECK(selftest_read(&ring, &st, SELFTEST_SIZE(0) +
			    SELFTEST_SIZE(1)));
	CHECK(st.blocks == 2 && ring.count == 1);
	CHECK(selftest_read(&ring, &st, ring_bytes));
	CHECK(st.blocks == 3 && ring.count == 0 && !ring.lost);
	CHECK(selftest_balanced(&ring, &st));

	/* Overflow: 4 kept (each offer says how many are queued), 3 dropped. */
	for (i = 0; i < 7; i++)
		CHECK(ring_offer(&ring, selftest_block(i)) == (i < 4 ? i + 1 : 0));
	CHECK(ring.lost == 3 && ring.dropped == 3);
	CHECK(selftest_balanced(&ring, &st));
	/* Reading one frees a slot: the reader places the loss marker. */
	CHECK(selftest_read(&ring, &st, SELFTEST_SIZE(0)));
	CHECK(!ring.lost && ring.count == 4);
	/* Full again: this one is dropped, a new loss pending. */
	CHECK(!ring_offer(&ring, selftest_block(2)));
	CHECK(ring.lost == 1);
	CHECK(selftest_read(&ring, &st, SELFTEST_SIZE(1)));
	CHECK(!ring.lost && ring.count == 4);
	CHECK(selftest_read(&ring, &st, ring_bytes));
	CHECK(!ring.count && !ring.lost);
	CHECK(selftest_balanced(&ring, &st));
	CHECK(st.next_seq == ring.offered);

	/* A resize turns what was in the ring into one loss marker. */
	CHECK(ring_offer(&ring, selftest_block(1)));
	CHECK(ring_offer(&ring, selftest_block(1)));
	slots = kvmalloc(ring_bytes, GFP_KERNEL);
	CHECK(slots);
	if (slots) {
		kvfree(ring_replace(&ring, slots, NSLM_RING_MIN_SLOTS));
		CHECK(ring.count == 1 && !ring.lost && ring.dropped == 6);
		CHECK(selftest_read(&ring, &st, ring_bytes));
		CHECK(selftest_balanced(&ring, &st));
		CHECK(st.next_seq == ring.offered);
		CHECK(ring_offer(&ring, selftest_block(0)));
		CHECK(ring_offer(&ring, selftest_event()));
		CHECK(selftest_read(&ring, &st, ring_bytes));
		CHECK(st.next_seq == ring.offered && st.blocks == 9);
	}
#undef CHECK

	kvfree(ring.slots);
	kvfree(st.buf);
	if (success)
		pr_info("ring self-tests: pass\n");
	else
		pr_err("ring self-tests: FAIL\n");
	return success;
}

#endif /* DEBUG */
