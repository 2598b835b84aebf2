// SPDX-License-Identifier: GPL-2.0
/*
 * Self-tests of a ring on a private one-page ring, compiled under DEBUG
 * and run at module load (and in user space by selftest/host): every item
 * offered must come out as itself (a block compact) or inside a loss
 * item, in seq order, whatever the interleaving of offers, reads, wraps,
 * a bad tail and a resize.
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

static u64 selftest_offer(struct nslm_ring *ring, struct nsl_item_hdr *item)
{
	bool first;

	return ring_offer(ring, item, &first);
}

/* Items (not markers) in the ring, and the drops its markers announce. */
static void selftest_count(const struct nslm_ring *ring, u64 *items,
			   u64 *marked)
{
	u64 pos = ring->ctl->tail, head = ring->ctl->head;
	struct nsl_item_hdr hdr;
	const void *item;

	*items = 0;
	*marked = 0;
	for (; pos != head; pos += hdr.size) {
		item = ring_item(ring, pos, head, &hdr);
		if (!item)
			return;
		if (hdr.kind == NSL_ITEM_LOSS)
			*marked += ((const struct nsl_loss *)item)->lost;
		else if (hdr.kind != NSL_ITEM_PAD)
			(*items)++;
	}
}

/* Check the items in @buf, @len bytes, as a reader of @ring's stream. */
static bool selftest_check(const struct nslm_ring *ring,
			   struct selftest_stream *st, const u8 *buf,
			   size_t len)
{
	const struct nsl_item_hdr *hdr;
	const struct nsl_event_rec *ev;
	const struct nsl_cblock *blk;
	const struct nsl_loss *loss;
	size_t off;

	for (off = 0; off < len; off += hdr->size) {
		hdr = (const struct nsl_item_hdr *)(buf + off);
		if (hdr->size < sizeof(*hdr) || off + hdr->size > len ||
		    hdr->cpu != ring->cpu)
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
			return false;	/* read() never hands out a PAD */
		}
	}
	return true;
}

/* read() (up to @space bytes of) the ring and check the items. */
static bool selftest_read(struct nslm_ring *ring, struct selftest_stream *st,
			  size_t space)
{
	ssize_t len = ring_copy_out(ring, false, st->buf, NULL, space);

	return len >= 0 && selftest_check(ring, st, st->buf, len);
}

/* offered == items read + dropped + items still in the ring, and so on */
static bool selftest_balanced(const struct nslm_ring *ring,
			      const struct selftest_stream *st)
{
	u64 items, marked;

	selftest_count(ring, &items, &marked);
	return ring->offered == st->blocks + ring->dropped + items &&
	       ring->dropped == st->lost + ring->lost + marked &&
	       ring->ctl->offered == ring->offered &&
	       ring->ctl->dropped == ring->dropped &&
	       ring->ctl->lost == ring->lost && ring->ctl->head == ring->head;
}

bool __init nslm_ring_selftest(void)
{
	const u32 size = PAGE_SIZE;
	struct selftest_stream st = { };
	struct nslm_ring ring = { .cpu = 0 };
	struct ring_move move = { .ring = &ring, .size = size };
	bool success = true, pads = false;
	u64 waiting, head;
	unsigned int i;

#define CHECK(cond) do {						\
		if (!(cond)) {						\
			pr_err("ring self-test %d failed: %s\n",	\
			       __LINE__, #cond);			\
			success = false;				\
		}							\
	} while (0)

	move.area = vmalloc_user(ring_stride(size));
	st.buf = vmalloc(size);
	if (!move.area || !st.buf) {
		vfree(move.area);
		vfree(st.buf);
		pr_err("ring self-tests: FAIL (no memory)\n");
		return false;
	}
	ring_replace(&move);

	/* Whole items of every size, nothing lost. */
	CHECK(selftest_offer(&ring, selftest_block(0)) == SELFTEST_SIZE(0));
	CHECK(selftest_offer(&ring, selftest_block(1)) ==
	      SELFTEST_SIZE(0) + SELFTEST_SIZE(1));
	CHECK(selftest_offer(&ring, selftest_block(NSL_MAX_RECORDS)));
	CHECK(ring.ctl->head == ring.head && ring.ctl->offered == 3);
	/* Too small for the first item: nothing, not a partial item. */
	CHECK(ring_copy_out(&ring, false, st.buf, NULL,
			    SELFTEST_SIZE(0) - 8) == 0);
	CHECK(ring.ctl->tail == 0);
	CHECK(selftest_read(&ring, &st, SELFTEST_SIZE(0) +
			    SELFTEST_SIZE(1)));
	CHECK(st.blocks == 2 && ring.ctl->tail == SELFTEST_SIZE(0) +
	      SELFTEST_SIZE(1));
	CHECK(selftest_read(&ring, &st, size));
	CHECK(st.blocks == 3 && ring.ctl->tail == ring.head && !ring.lost);
	CHECK(selftest_balanced(&ring, &st));

	/* Overflow: what fits is kept, the rest dropped and counted. */
	for (i = 0; i < 200; i++)
		selftest_offer(&ring, selftest_event());
	CHECK(ring.lost && ring.dropped == ring.lost);
	CHECK(ring.head - ring.ctl->tail <= size);
	CHECK(selftest_balanced(&ring, &st));
	/* Reading makes room: the reader's copy places the loss marker. */
	CHECK(selftest_read(&ring, &st, sizeof(struct nsl_event_rec)));
	CHECK(!ring.lost);
	CHECK(selftest_balanced(&ring, &st));
	CHECK(selftest_read(&ring, &st, size));
	CHECK(ring.ctl->tail == ring.head && !ring.lost);
	CHECK(st.next_seq == ring.offered && st.lost == ring.dropped);

	/* Round and round: items never wrap, a PAD fills each end. */
	for (i = 0; i < 100; i++) {
		head = ring.head;
		waiting = selftest_offer(&ring, selftest_block(i % 17));
		CHECK(waiting == ring.head - ring.ctl->tail);
		pads |= ring.head - head > SELFTEST_SIZE(i % 17);
		CHECK(selftest_read(&ring, &st, size));
	}
	CHECK(pads && ring.head > 2 * size);
	CHECK(st.next_seq == ring.offered && selftest_balanced(&ring, &st));

	/* A tail no reader could have written: full, and read() refuses. */
	head = ring.ctl->tail;
	ring.ctl->tail = ring.head + 8;
	CHECK(!selftest_offer(&ring, selftest_block(0)));
	CHECK(ring_copy_out(&ring, false, st.buf, NULL, size) == -EIO);
	ring.ctl->tail = head;
	CHECK(selftest_offer(&ring, selftest_block(0)));
	CHECK(selftest_read(&ring, &st, size));
	CHECK(st.next_seq == ring.offered && st.lost == ring.dropped);

	/* A resize turns what was in the ring into one loss marker. */
	CHECK(selftest_offer(&ring, selftest_block(1)));
	CHECK(selftest_offer(&ring, selftest_event()));
	move.area = vmalloc_user(ring_stride(size));
	CHECK(move.area);
	if (move.area) {
		void *old = ring.ctl;

		ring_walk_start(&ring, &move.walk);
		ring_replace(&move);
		vfree(old);
		CHECK(!ring.lost && ring.head == sizeof(struct nsl_loss));
		CHECK(selftest_read(&ring, &st, size));
		CHECK(selftest_balanced(&ring, &st));
		CHECK(st.next_seq == ring.offered);
		CHECK(selftest_offer(&ring, selftest_block(0)));
		CHECK(selftest_read(&ring, &st, size));
		CHECK(st.next_seq == ring.offered && st.lost == ring.dropped);
	}
#undef CHECK

	vfree(ring.ctl);
	vfree(st.buf);
	if (success)
		pr_info("ring self-tests: pass\n");
	else
		pr_err("ring self-tests: FAIL\n");
	return success;
}

#endif /* DEBUG */
