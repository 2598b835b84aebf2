// SPDX-License-Identifier: GPL-2.0
/*
 * START and STOP's fast path (net/netslice/record.h) in user space.
 *
 *   hotpath            the semantics, as TAP: nesting, merging, stacked
 *                      regions, truncation, the TSC read last in START and
 *                      first in STOP, and the open records the block keeps
 *                      against a search, over random sequences
 *   hotpath --tsc      the step time's x86 instructions (nsl_log_since()),
 *                      in the timing build: the others read it in C
 *   hotpath --bench [-n N]
 *                      native timing on the CPU it runs on (pinned): the
 *                      macros' cost against two bare rdtsc, warm and with
 *                      the block flushed from the caches, in TSC ticks
 *
 * The timing is of the same source the kernel runs, without what only a
 * kernel has: skb_ext_find() is mimicked (a bit test and an offset, as in
 * skbuff.h), counters are off (duration mode), interrupts are on (the
 * medians of many samples are reported, so a rare interrupt does not
 * count).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "../../net/netslice/record.h"
#include "../../net/netslice/record.c"
#define TAP_IMPLEMENT
#include "../../../../tests/tap.h"

int shim_cpu;
u32 nsl_log_cpu;
u64 shim_tsc;
struct static_key_false nsl_active = { 1 }, nsl_staged, nsl_magnet;

/*
 * The core's entries the inline hooks (linux/netslice.h) go to where a
 * step is not one in the log, as core.c has them: without a stage, with
 * no link device and no MAGNeT event to add.
 */
void __nsl_start_on(int region, struct sk_buff *skb)
{
	nsl_start_block(nsl_block_known(skb), region, NSL_NOW);
}

void __nsl_start_link(struct sk_buff *skb)
{
	__nsl_start_on(NSL_R_LINK, skb);
}

void __nsl_start(int region, struct sk_buff *skb)
{
	abort();	/* only for MAGNeT's ip, which is off */
}

void nsl_log_unstart(struct nsl_skb_block *b, int region)
{
	b->open.last[region]--;
	b->nstart--;
}

void __nsl_stop_at(int region, struct sk_buff *skb, u64 now)
{
	nsl_stop_records(nsl_block_known(skb), region, now);
}

void __nsl_stop_on(int region, struct sk_buff *skb)
{
	nsl_stop_block(nsl_block_known(skb), region, nsl_now());
}

void __nsl_stop(int region, struct sk_buff *skb)
{
	__nsl_stop_on(region, skb);
}

/* Duration mode only: a count-mode block never reaches these. */
u64 nsl_counters_start(struct nsl_record *r, u8 nevents, u32 gen)
{
	abort();
}

u64 nsl_counters_stop(struct nsl_record *r, u8 nevents, u32 gen)
{
	abort();
}

/* ---- the semantics ---- */

#define tap(ok, what)	tap_ok(ok, "%s", what)

/* EXPECT_EQ(a, b): names both terms and their values when they differ. */
static int expect_failed;
#define EXPECT_EQ(a, b) do {						\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ != b_) {							\
		printf("#   line %d: %s == %lld, expected %s == %lld\n",	\
		       __LINE__, #a, a_, #b, b_);			\
		expect_failed = 1;					\
	}								\
} while (0)
#define EXPECT_TRUE(c) do {						\
	if (!(c)) {							\
		printf("#   line %d: %s is false\n", __LINE__, #c);	\
		expect_failed = 1;					\
	}								\
} while (0)
#define CHECK(what) do { tap(!expect_failed, what); expect_failed = 0; } while (0)

/*
 * A block is as big as the kernel's extension makes it (room for
 * NET_SLICE_CONF records), so ASan catches a record written past it.
 */
static struct nsl_skb_block *block_alloc(void)
{
	return malloc(NSL_SKB_BLOCK_SIZE);
}

/*
 * A block that keeps records, as one in count mode or one whose log was
 * replayed does: what the tests before test_log_replay() check, the
 * records' own engine, which the log's replay must agree with.
 */
static void records_reset(struct nsl_skb_block *b)
{
	nsl_records_reset(b);
	nsl_keep_records(b);
}

static void block_reset(struct nsl_skb_block *b)
{
	memset(b, 0, NSL_SKB_BLOCK_SIZE);
	b->blk.tsc0 = nsl_now();
	records_reset(b);
}

static void test_nesting(struct nsl_skb_block *b)
{
	block_reset(b);
	nsl_start_block(b, NSL_R_WRITE, NSL_NOW);
	nsl_start_block(b, NSL_R_TCP, NSL_NOW);
	nsl_start_block(b, NSL_R_IP, NSL_NOW);
	EXPECT_EQ(b->nopen, 3);
	nsl_stop_block(b, NSL_R_IP, nsl_now());
	nsl_stop_block(b, NSL_R_TCP, nsl_now());
	EXPECT_EQ(b->blk.nrec, 3);
	EXPECT_EQ(b->nopen, 1);
	EXPECT_EQ(b->blk.rec[0].depth, 0);
	EXPECT_EQ(b->blk.rec[1].depth, 1);
	EXPECT_EQ(b->blk.rec[2].depth, 2);
	EXPECT_TRUE(b->blk.rec[0].flags & NSL_RF_OPEN);
	EXPECT_TRUE(!(b->blk.rec[1].flags & NSL_RF_OPEN));
	EXPECT_TRUE(!(b->blk.rec[2].flags & NSL_RF_OPEN));
	/* The inner region starts after and ends before the outer one. */
	EXPECT_TRUE(b->blk.rec[2].start >= b->blk.rec[1].start);
	EXPECT_TRUE(b->blk.rec[2].start + b->blk.rec[2].ticks <=
		    b->blk.rec[1].start + b->blk.rec[1].ticks);
	nsl_stop_block(b, NSL_R_WRITE, nsl_now());
	EXPECT_EQ(b->nopen, 0);
	EXPECT_TRUE(b->blk.rec[0].start + b->blk.rec[0].ticks >=
		    b->blk.rec[1].start + b->blk.rec[1].ticks);
	CHECK("nested regions: depths, open flags, inner within outer");
}

static void test_merge(struct nsl_skb_block *b)
{
	u64 first;

	block_reset(b);
	nsl_start_block(b, NSL_R_TCP, NSL_NOW);
	first = b->blk.rec[0].start;
	nsl_stop_block(b, NSL_R_TCP, nsl_now());
	nsl_start_block(b, NSL_R_TCP, NSL_NOW);
	nsl_stop_block(b, NSL_R_TCP, nsl_now());
	EXPECT_EQ(b->blk.nrec, 1);
	EXPECT_EQ(b->blk.rec[0].nmerged, 2);
	EXPECT_TRUE(b->blk.rec[0].flags & NSL_RF_MERGED);
	EXPECT_EQ(b->blk.rec[0].start, first);
	EXPECT_EQ(b->nopen, 0);
	/* A sealed block (a new phase) starts a new record instead. */
	nsl_seal(b);
	nsl_start_block(b, NSL_R_TCP, NSL_NOW);
	nsl_stop_block(b, NSL_R_TCP, nsl_now());
	EXPECT_EQ(b->blk.nrec, 2);
	CHECK("back-to-back intervals merge, the first START kept; sealed: new record");
}

static void test_stacked(struct nsl_skb_block *b)
{
	block_reset(b);
	nsl_start_block(b, NSL_R_LINK, NSL_NOW);	/* vlan */
	nsl_start_block(b, NSL_R_LINK, NSL_NOW);	/* its lower device */
	EXPECT_EQ(b->blk.nrec, 2);
	nsl_stop_block(b, NSL_R_LINK, nsl_now());
	EXPECT_TRUE(b->blk.rec[0].flags & NSL_RF_OPEN);
	EXPECT_TRUE(!(b->blk.rec[1].flags & NSL_RF_OPEN));
	/* The inner record closed, the outer is the region's latest. */
	EXPECT_EQ(b->open.last[NSL_R_LINK], 1);
	EXPECT_EQ(b->open.more[NSL_R_LINK], 0);
	nsl_stop_block(b, NSL_R_LINK, nsl_now());
	EXPECT_TRUE(!(b->blk.rec[0].flags & NSL_RF_OPEN));
	EXPECT_EQ(b->nopen, 0);
	CHECK("a region inside itself (stacked devices): STOP closes the latest, then the outer");
}

static void test_reset(struct nsl_skb_block *b)
{
	block_reset(b);
	nsl_start_block(b, NSL_R_WRITE, NSL_NOW);
	nsl_start_block(b, NSL_R_TCP, NSL_NOW);
	nsl_start_block(b, NSL_R_LINK, NSL_NOW);
	/* A retransmission's fork forgets the records (send.c). */
	records_reset(b);
	nsl_start_block(b, NSL_R_WRITE, NSL_NOW);
	EXPECT_TRUE(!nsl_stop_block(b, NSL_R_LINK, nsl_now()));
	EXPECT_TRUE(!nsl_stop_block(b, NSL_R_TCP, nsl_now()));
	EXPECT_EQ(b->blk.nrec, 1);
	EXPECT_TRUE(b->blk.rec[0].flags & NSL_RF_OPEN);
	EXPECT_EQ(b->nopen, 1);
	nsl_start_block(b, NSL_R_IP, NSL_NOW);		/* index 1, as TCP was */
	EXPECT_TRUE(!nsl_stop_block(b, NSL_R_TCP, nsl_now()));
	EXPECT_TRUE(b->blk.rec[1].flags & NSL_RF_OPEN);
	CHECK("records reset: no region is open, and a STOP of one closed before closes nothing");
}

static void test_trunc(struct nsl_skb_block *b)
{
	int i;

	block_reset(b);
	for (i = 0; i <= NET_SLICE_CONF; i++)
		nsl_start_block(b, i % 2 ? NSL_R_LINK : NSL_R_QDISC, NSL_NOW);
	EXPECT_EQ(b->blk.nrec, NET_SLICE_CONF);
	EXPECT_TRUE(b->blk.flags & NSL_BF_TRUNC);
	EXPECT_EQ(b->nopen, NET_SLICE_CONF);
	for (i = 0; i <= NET_SLICE_CONF; i++)
		nsl_stop_block(b, i % 2 ? NSL_R_LINK : NSL_R_QDISC, nsl_now());
	EXPECT_EQ(b->nopen, 0);
	printf("# NET_SLICE_CONF %d: the extension's block is %zu bytes\n",
	       NET_SLICE_CONF, (size_t)NSL_SKB_BLOCK_SIZE);
	CHECK("a full block: TRUNC, no record past NET_SLICE_CONF, every STOP safe");
}

static void test_tsc_order(struct nsl_skb_block *b)
{
	u64 before, after, stop;
	struct nsl_record *r;

	block_reset(b);
	before = nsl_now();
	nsl_start_block(b, NSL_R_IP, NSL_NOW);
	after = nsl_now();
	r = &b->blk.rec[0];
	EXPECT_TRUE(b->blk.tsc0 + r->start >= before);
	EXPECT_TRUE(b->blk.tsc0 + r->start <= after);
	stop = nsl_now();
	nsl_stop_block(b, NSL_R_IP, stop);
	EXPECT_EQ(b->blk.tsc0 + r->start + r->ticks, stop);
	/* An explicit time is taken as it is. */
	nsl_start_block(b, NSL_R_LINK, b->blk.tsc0 + 1000);
	EXPECT_EQ(b->blk.rec[1].start, 1000);
	CHECK("START's time is read inside the call, STOP's is the one given");
}

/* The record STOP closes, found the slow way: the latest open one. */
static struct nsl_record *search_open(struct nsl_skb_block *b, int region)
{
	int i;

	for (i = b->blk.nrec - 1; i >= 0; i--)
		if (b->blk.rec[i].region == region &&
		    (b->blk.rec[i].flags & NSL_RF_OPEN))
			return &b->blk.rec[i];
	return NULL;
}

/* Records open now of @region, counted the slow way. */
static unsigned int count_open(const struct nsl_skb_block *b, int region)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->blk.nrec; i++)
		n += b->blk.rec[i].region == region &&
		     (b->blk.rec[i].flags & NSL_RF_OPEN);
	return n;
}

/*
 * Whether @b's open[] and nopen say what its records say, and
 * merge_region names the last record's region unless sealed.
 */
static bool open_exact(struct nsl_skb_block *b)
{
	unsigned int all = 0;
	int region;

	if (b->merge_region != NSL_R_NONE &&
	    (!b->blk.nrec ||
	     b->merge_region != b->blk.rec[b->blk.nrec - 1].region))
		return false;

	for (region = 0; region < NSL_R_MAX; region++) {
		unsigned int n = count_open(b, region);

		if (nsl_open_record(b, region) != search_open(b, region) ||
		    b->open.more[region] != (n ? n - 1 : 0))
			return false;
		all += n;
	}
	return b->nopen == all;
}

/*
 * Random STARTs and STOPs of every region, with what block.c and send.c
 * do to a block between them (records reset by a fork, records dropped
 * or added closed and then recounted, the block copied whole): the
 * region's latest open record must always be the one a search finds,
 * with no search.
 */
static void test_random(struct nsl_skb_block *b, long steps)
{
	struct nsl_skb_block *copy = block_alloc();
	long i, inexact = 0, found = 0, stops = 0;
	unsigned int seed = 1;

	block_reset(b);
	for (i = 0; i < steps; i++) {
		int op = rand_r(&seed) % 16, region = 1 + rand_r(&seed) % (NSL_R_MAX - 1);

		if (op < 7) {
			nsl_start_block(b, region, NSL_NOW);
		} else if (op < 13) {
			found += nsl_open_record(b, region) != NULL;
			stops++;
			nsl_stop_block(b, region, nsl_now());
		} else if (op == 13) {
			if (rand_r(&seed) % 2) {
				records_reset(b);
			} else {
				b->blk.nrec = rand_r(&seed) % (b->blk.nrec + 1);
				nsl_recount_open(b);
				nsl_merge_last(b);
			}
		} else if (op == 14 && b->blk.nrec < NET_SLICE_CONF) {
			struct nsl_record *r = &b->blk.rec[b->blk.nrec++];

			memset(r, 0, sizeof(*r));
			r->region = region;
			r->nmerged = 1;
			nsl_merge_last(b);
		} else if (op == 15) {
			memcpy(copy, b, nsl_block_used(b));
			memcpy(b, copy, nsl_block_used(b));
		}
		if (b->blk.nrec == NET_SLICE_CONF && rand_r(&seed) % 4 == 0)
			block_reset(b);
		inexact += !open_exact(b);
	}
	free(copy);
	printf("# %ld STOPs, %ld of them closing a record; %ld steps left open[] or nopen inexact\n",
	       stops, found, inexact);
	EXPECT_EQ(inexact, 0);
	EXPECT_TRUE(found > 0);
	CHECK("random sequences: open[] names what a search finds, nopen counts them, merge_region the last record, after every step");
}

/*
 * open[] counts the records open inside their region's latest (more[]),
 * and a recount gives what the STARTs and STOPs kept.
 */
static void test_open_counts(struct nsl_skb_block *b)
{
	u8 last[NSL_R_MAX], more[NSL_R_MAX];

	block_reset(b);
	nsl_start_block(b, NSL_R_LINK, NSL_NOW);
	nsl_start_block(b, NSL_R_QDISC, NSL_NOW);
	nsl_start_block(b, NSL_R_LINK, NSL_NOW);
	EXPECT_EQ(b->open.last[NSL_R_LINK], 3);
	EXPECT_EQ(b->open.more[NSL_R_LINK], 1);
	EXPECT_EQ(b->open.last[NSL_R_QDISC], 2);
	EXPECT_EQ(b->open.more[NSL_R_QDISC], 0);
	EXPECT_TRUE(!nsl_open_record(b, NSL_R_NIC));
	memcpy(last, b->open.last, sizeof(last));
	memcpy(more, b->open.more, sizeof(more));
	nsl_recount_open(b);
	EXPECT_TRUE(!memcmp(last, b->open.last, sizeof(last)));
	EXPECT_TRUE(!memcmp(more, b->open.more, sizeof(more)));
	nsl_stop_block(b, NSL_R_LINK, nsl_now());
	EXPECT_TRUE(nsl_open_record(b, NSL_R_LINK) == &b->blk.rec[0]);
	EXPECT_EQ(b->open.more[NSL_R_LINK], 0);
	nsl_stop_block(b, NSL_R_LINK, nsl_now());
	EXPECT_TRUE(!nsl_open_record(b, NSL_R_LINK));
	/* Records dropped: a recount forgets the ones gone. */
	b->blk.nrec = 1;
	nsl_recount_open(b);
	EXPECT_TRUE(!nsl_open_record(b, NSL_R_QDISC));
	EXPECT_TRUE(open_exact(b));
	CHECK("open records: the latest and the others counted, kept as a recount finds them");
}

/* Whether @x's first @n records are @y's, but for counts they have none of. */
static bool same_records(const struct nsl_block *x, const struct nsl_block *y,
			 unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct nsl_record *a = &x->rec[i], *b = &y->rec[i];

		if (a->region != b->region || a->depth != b->depth ||
		    a->flags != b->flags || a->nmerged != b->nmerged ||
		    a->cpu != b->cpu || a->start != b->start ||
		    a->ticks != b->ticks)
			return false;
	}
	return true;
}

/*
 * A block's life as random steps, three ways: on a block that keeps
 * records (record.h's engine; a device and the send queue's gap as
 * block.c and send.c add them), written down as a log and replayed as a
 * reader does (include/netslice.h), and on a block that keeps a log, as
 * the kernel's blocks do, replayed at the end (nsl_records_now()) -- or
 * on the way, where the log fills or a step comes 2^32 ticks late.  All
 * three must end with the same records, devices' first records and
 * bookkeeping.
 */
/*
 * An skb whose extension holds a block, at an offset in 8-byte chunks
 * as skb_ext_add() places it: what the hooks look up.
 */
struct hook_skb {
	struct sk_buff skb;
	struct skb_ext *ext;
};

static struct nsl_skb_block *hook_skb_init(struct hook_skb *h)
{
	h->ext = calloc(1, 8 + NSL_SKB_BLOCK_SIZE);
	h->ext->offset[SKB_EXT_NETSLICE] = 1;
	h->skb.extensions = h->ext;
	h->skb.active_extensions = 1 << SKB_EXT_NETSLICE;
	return nsl_block_known(&h->skb);
}

/* Device @d joins @b, as nsl_join_dev() writes it (block.c). */
static void join_dev(struct nsl_skb_block *b, unsigned int d)
{
	b->blk.dev[d].first = b->nlog != NSL_NOLOG ? 0 : b->blk.nrec;
	b->blk.ndev = d + 1;
}

/*
 * A step other than START and STOP on a block that keeps a log, as the
 * kernel takes it: a seal, a split (a GSO segment past the first),
 * device @d's first record (nsl_add_dev()), the send queue's gap at @now
 * (send.c).
 */
static void log_other(struct nsl_skb_block *lb, unsigned int step,
		      unsigned int d, u64 now)
{
	if (step == NSL_LOG_SEAL) {
		nsl_seal(lb);
	} else if (step == NSL_LOG_SHARE) {
		nsl_share(lb);
	} else if (step == NSL_LOG_DEV) {
		join_dev(lb, d);
		nsl_dev_first(lb, d);
	} else if (!nsl_log_put_other(lb, NSL_LOG_GAP, NSL_R_SNDQ, now)) {
		nsl_records_now(lb);
		nsl_gap_record(&lb->blk, lb->nopen, NET_SLICE_CONF, shim_cpu,
			       now);
	}
}

/*
 * @from hands over to @to on a block that keeps a log, as the log's
 * rules say the hooks' NEXT takes it: one entry where neither region has
 * a case of its own, @from is open, the log takes @to's START (nstart has
 * room, which a block on records never has), @to is below
 * NSL_LOG_NEXT_MAX and the time fits an entry; else a STOP and a START.
 * Whether it took one entry.
 */
static bool log_next(struct nsl_skb_block *lb, int from, int to, u64 now)
{
	u64 t = now - lb->blk.tsc0;

	if (!nsl_region_own_case(from) && !nsl_region_own_case(to) &&
	    lb->open.last[from] && lb->nstart < NET_SLICE_CONF &&
	    to < NSL_LOG_NEXT_MAX && t < 1ULL << 32) {
		lb->nstart++;
		lb->open.last[from]--;
		lb->open.last[to]++;
		lb->nnext++;
		nsl_log_add(lb, (u32)t |
				(u64)nsl_log_high_arg(NSL_LOG_NEXT, from, to,
						       shim_cpu) << 32);
		return true;
	}
	nsl_stop_block(lb, from, now);
	nsl_start_block(lb, to, now);
	return false;
}

/*
 * Device @d joins @lb and a START of @region opens its first record, as
 * the log's rules say nsl_start_dev() takes it: one entry (DEV_START)
 * where the log takes the START and the time fits an entry, else the
 * device's first record said apart and then the START.
 */
static void log_dev_start(struct nsl_skb_block *lb, int region,
			  unsigned int d, u64 now)
{
	u64 t = now - lb->blk.tsc0;

	join_dev(lb, d);
	if (lb->nstart < NET_SLICE_CONF && t < 1ULL << 32) {
		lb->open.last[region]++;
		lb->nstart++;
		nsl_log_add(lb, (u32)t |
				(u64)nsl_log_high_arg(NSL_LOG_DEV_START, region,
						      d, shim_cpu) << 32);
		return;
	}
	nsl_dev_first(lb, d);
	nsl_start_block(lb, region, now);
}

/* Whether the kernel's blocks @x and @y keep the same records and state. */
static bool same_block(const struct nsl_skb_block *x,
		       const struct nsl_skb_block *y)
{
	return x->blk.nrec == y->blk.nrec && x->blk.flags == y->blk.flags &&
	       x->nopen == y->nopen && x->merge_region == y->merge_region &&
	       !memcmp(&x->open, &y->open, sizeof(x->open)) &&
	       x->blk.ndev == y->blk.ndev &&
	       !memcmp(x->blk.dev, y->blk.dev,
		       y->blk.ndev * sizeof(y->blk.dev[0])) &&
	       same_records(&x->blk, &y->blk, y->blk.nrec);
}

/* A block that keeps records (@b) and one that keeps a log (@lb), new. */
static void pair_reset(struct nsl_skb_block *b, struct nsl_skb_block *lb,
		       u64 now)
{
	memset(b, 0, NSL_SKB_BLOCK_SIZE);
	b->blk.tsc0 = now;
	records_reset(b);
	memset(lb, 0, NSL_SKB_BLOCK_SIZE);
	lb->blk.tsc0 = now;
	nsl_records_reset(lb);
}

/*
 * Random lives of a block, each lived four ways: on records (b), as a
 * log (lb), through the hooks' inline steps (hb: NET_SLICE_START, STOP
 * and NEXT, the time they read set by the test), and as the log the
 * reader replays.  All four must agree.
 */
static void test_log_replay(struct nsl_skb_block *b, long lives)
{
	struct nsl_skb_block *lb = block_alloc(), *hb;
	struct nsl_block *r = malloc(sizeof(*r));
	struct hook_skb h;
	long life, differ = 0, steps = 0, merged = 0, trunc = 0, gaps = 0;
	long replayed = 0, hooked = 0, nexts = 0, overfull = 0, shares = 0;
	long uncounted = 0, split = 0, devstarts = 0;
	u64 log[256];
	unsigned int seed = 7, k, n, i;

	hb = hook_skb_init(&h);
	for (life = 0; life < lives; life++) {
		struct nsl_log_state st = { .merge_region = NSL_R_NONE };
		unsigned int len = 1 + rand_r(&seed) % (3 * NET_SLICE_CONF + 10);
		u64 now = 1000 + rand_r(&seed) % 1000;
		bool same;

		pair_reset(b, lb, now);
		memcpy(hb, lb, NSL_SKB_BLOCK_SIZE);
		for (k = 0, n = 0; k < len; k++) {
			int op = rand_r(&seed) % 23;
			int region = 1 + rand_r(&seed) % (NSL_R_MAX - 1);
			int to = NSL_R_TCP + rand_r(&seed) % 3;
			unsigned int step, d, arg = 0;

			/* few regions, so that merges and stacks happen */
			if (rand_r(&seed) % 2)
				region = NSL_R_TCP + rand_r(&seed) % 3;
			shim_cpu = rand_r(&seed) % 8 ? shim_cpu : rand_r(&seed) % 3;
			now += 1 + rand_r(&seed) % 5000;
			/* now and then a step too late for an entry */
			if (rand_r(&seed) % 4000 == 0)
				now += 1ULL << 32;
			shim_tsc = now;
			if (op < 8) {
				step = NSL_LOG_START;
				nsl_start_at(b, region, now, 0);
				nsl_start_block(lb, region, now);
				NET_SLICE_START(region, &h.skb);
			} else if (op < 16) {
				step = NSL_LOG_STOP;
				nsl_stop_block(b, region, now);
				nsl_stop_block(lb, region, now);
				NET_SLICE_STOP(region, &h.skb);
			} else if (op < 17) {
				/*
				 * @region hands over to @to: one entry where
				 * the log takes both, and always in the
				 * reader's log, whose replay is the same
				 */
				step = NSL_LOG_NEXT;
				arg = to;
				nsl_stop_block(b, region, now);
				nsl_start_at(b, to, now, 0);
				if (log_next(lb, region, to, now))
					nexts++;
				else
					split++;
				NET_SLICE_NEXT(region, to, &h.skb);
			} else if (op < 18) {
				step = NSL_LOG_SEAL;
				nsl_seal(b);
				log_other(lb, step, 0, now);
				log_other(hb, step, 0, now);
			} else if (op < 19) {
				if (b->blk.ndev >= NSL_MAX_DEVS)
					continue;
				step = NSL_LOG_DEV;
				region = d = b->blk.ndev++;
				b->blk.dev[d].first = b->blk.nrec;
				log_other(lb, step, d, now);
				log_other(hb, step, d, now);
			} else if (op < 21) {
				step = NSL_LOG_GAP;
				gaps += b->blk.nrec;
				nsl_gap_record(&b->blk, b->nopen, NET_SLICE_CONF,
					       shim_cpu, now);
				gaps -= b->blk.nrec;
				log_other(lb, step, 0, now);
				log_other(hb, step, 0, now);
			} else if (op < 22) {
				step = NSL_LOG_SHARE;
				region = NSL_R_NONE;
				nsl_block_share(&b->blk);
				log_other(lb, step, 0, now);
				log_other(hb, step, 0, now);
				shares++;
			} else {
				/* a device and the START of its first record */
				if (b->blk.ndev >= NSL_MAX_DEVS)
					continue;
				step = NSL_LOG_DEV_START;
				arg = d = b->blk.ndev++;
				b->blk.dev[d].first = b->blk.nrec;
				nsl_start_at(b, region, now, 0);
				log_dev_start(lb, region, d, now);
				join_dev(hb, d);
				nsl_start_dev(hb, region, now, d);
				devstarts++;
			}
			/* a STOP ends a START: no log outgrows its room */
			overfull += lb->nlog != NSL_NOLOG &&
				    lb->nlog > NSL_LOG_ROOM;
			/* what a copy checks: the counts are the entries' */
			uncounted += lb->nlog != NSL_NOLOG &&
				     !nsl_log_counted(lb);
			/* the hooks' block keeps the same log or records */
			hooked += hb->nlog != NSL_NOLOG;
			if (hb->nlog != lb->nlog ||
			    memcmp(hb, lb, nsl_block_used(lb)))
				differ++;
			/* NEXT's region started, DEV_START's device, or 0 */
			log[n++] = (u32)(now - b->blk.tsc0) |
				   (u64)nsl_log_high_arg(step, region, arg,
							 shim_cpu) << 32;
			steps++;
		}
		/* the reader's replay, where no entry came too late */
		memset(r, 0, sizeof(*r));
		r->tsc0 = b->blk.tsc0;
		r->ndev = b->blk.ndev;
		if (nsl_log_replay(r, &st, log, n, NET_SLICE_CONF))
			differ++;
		if (now - b->blk.tsc0 < 1ULL << 32) {
			same = r->nrec == b->blk.nrec &&
			       r->flags == b->blk.flags &&
			       st.nopen == b->nopen &&
			       st.merge_region == b->merge_region &&
			       !memcmp(st.last, b->open.last, sizeof(st.last)) &&
			       !memcmp(st.more, b->open.more, sizeof(st.more)) &&
			       !memcmp(r->dev, b->blk.dev,
				       r->ndev * sizeof(r->dev[0]));
		} else {
			/* a late step's entry does not hold its time */
			same = true;
			r->nrec = 0;
		}
		same = same && same_records(r, &b->blk, r->nrec);
		/* the kernel's log, replayed at the end if not on the way */
		replayed += lb->nlog == NSL_NOLOG;
		nsl_records_now(lb);
		nsl_records_now(hb);
		same = same && same_block(lb, b) && same_block(hb, b);
		for (i = 0; i < b->blk.nrec; i++)
			merged += b->blk.rec[i].nmerged > 1;
		trunc += !!(b->blk.flags & NSL_BF_TRUNC);
		differ += !same;
	}
	shim_tsc = 0;
	free(h.ext);
	free(r);
	free(lb);
	printf("# %ld lives, %ld steps (%ld NEXTs in one entry, %ld in two, %ld devices with a START, %ld SHAREs, %ld in a log through the hooks): %ld merged records, %ld gaps, %ld truncated, %ld logs replayed on the way; %ld differ\n",
	       lives, steps, nexts, split, devstarts, shares, hooked, merged,
	       -gaps, trunc, replayed, differ);
	EXPECT_EQ(differ, 0);
	EXPECT_EQ(overfull, 0);
	EXPECT_EQ(uncounted, 0);
	EXPECT_TRUE(merged > 0 && gaps < 0 && trunc > 0 && replayed > 0);
	EXPECT_TRUE(nexts > 0 && split > 0 && devstarts > 0 && shares > 0 &&
		    hooked > 0 && hooked < steps);
	CHECK("a log, replayed by the reader or by the kernel, and the hooks' inline steps give the records, devices and bookkeeping the records' engine keeps; a log's counts are its entries'");
}

/*
 * Past the NET_SLICE_CONF STARTs a log counts, the STARTs its replay
 * still fits in the records.  A TSO skb's life: IP and TCP in turn, a
 * record each, then TCP again and again (the copies into it, its reads
 * in parts), merging.  And one whose first STARTs merged: TCP again and
 * again, then a record for each new region while the records have room.
 * Either way the log keeps NSL_LOG_RESUMES STARTs past its count, and
 * then takes records.  A START that makes a record past the room goes to
 * records, which drop it (TRUNC), at once or after the resumes -- or,
 * where the kernel's records have the reader's room (NSL_REPLAY_DROPS), to
 * the log, whose replay drops it the same way.  The reader replays a log
 * with room for NSL_MAX_RECORDS, whatever the kernel's NET_SLICE_CONF:
 * below that, only the log's bound keeps it to the records the kernel
 * would keep.
 */
static int resume_merging(int i)
{
	if (i < NET_SLICE_CONF)
		return i % 2 ? NSL_R_TCP : NSL_R_IP;
	return i < NET_SLICE_CONF + NSL_LOG_RESUMES + 1 ? NSL_R_TCP :
							  NSL_R_LINK;
}

/* IP and TCP in turn, the records full, then a region of its own */
static int resume_past(int i)
{
	return i < NET_SLICE_CONF ? resume_merging(i) : NSL_R_LINK;
}

static int resume_new(int i)
{
	if (i < NET_SLICE_CONF)
		return NSL_R_TCP;
	return i % 2 ? NSL_R_IP : NSL_R_LINK;
}

static const struct resume_case {
	const char *name;
	int (*region)(int i);
	int steps;		/* STARTs, each STOPped after */
	int logged;		/* steps after which the block kept a log */
	int nrec;		/* the records kept */
	bool trunc;		/* and whether one was dropped */
} resume_cases[] = {
	{ "TCP resumed", resume_merging, NET_SLICE_CONF + NSL_LOG_RESUMES + 2,
	  NET_SLICE_CONF + NSL_LOG_RESUMES, NET_SLICE_CONF, true },
	{ "new regions", resume_new, NET_SLICE_CONF + NSL_LOG_RESUMES + 1,
	  NET_SLICE_CONF + NSL_LOG_RESUMES, NSL_LOG_RESUMES + 2, false },
	{ "a region past the room", resume_past, NET_SLICE_CONF + 1,
	  NET_SLICE_CONF + NSL_REPLAY_DROPS, NET_SLICE_CONF, true },
};

/* @cb: a copy of @lb, its log (if it kept one) replayed by the kernel. */
static void kernel_replay(struct nsl_skb_block *cb,
			  const struct nsl_skb_block *lb)
{
	memcpy(cb, lb, NSL_SKB_BLOCK_SIZE);
	nsl_records_now(cb);
}

static void test_log_resume(struct nsl_skb_block *b)
{
	struct nsl_skb_block *lb = block_alloc(), *cb = block_alloc();
	struct nsl_block *r = malloc(sizeof(*r));
	unsigned int c;

	for (c = 0; c < sizeof(resume_cases) / sizeof(resume_cases[0]); c++) {
		const struct resume_case *rc = &resume_cases[c];
		int i, region, differ = 0, logged = 0;
		u64 now = 1000;

		printf("# %s\n", rc->name);
		pair_reset(b, lb, now);
		for (i = 0; i < rc->steps; i++) {
			region = rc->region(i);
			now += 10;
			nsl_start_at(b, region, now, 0);
			nsl_start_block(lb, region, now);
			now += 10;
			nsl_stop_block(b, region, now);
			nsl_stop_block(lb, region, now);
			if (i == NET_SLICE_CONF + NSL_LOG_RESUMES - 1) {
				EXPECT_EQ(lb->nstart, NET_SLICE_CONF);
				EXPECT_EQ(lb->nresume, NSL_LOG_RESUMES);
				EXPECT_EQ(lb->nlog,
					  NSL_LOG_ROOM - NSL_LOG_OTHERS);
			}
			if (lb->nlog != NSL_NOLOG) {
				/* as the reader replays it, room for the most */
				struct nsl_log_state st = {
					.merge_region = NSL_R_NONE
				};

				logged++;
				memset(r, 0, sizeof(*r));
				r->tsc0 = lb->blk.tsc0;
				nsl_log_replay(r, &st, lb->blk.rec, lb->nlog,
					       NSL_MAX_RECORDS);
				differ += r->nrec != b->blk.nrec ||
					  r->flags != b->blk.flags;
			}
			kernel_replay(cb, lb);
			differ += !same_block(cb, b);
		}
		EXPECT_EQ(logged, rc->logged);
		EXPECT_EQ(differ, 0);
		EXPECT_EQ(b->blk.nrec, rc->nrec);
		EXPECT_EQ(!!(b->blk.flags & NSL_BF_TRUNC), rc->trunc);
		EXPECT_TRUE(same_block(cb, b));
		EXPECT_EQ(lb->nlog == NSL_NOLOG, rc->logged < rc->steps);
	}
	/*
	 * The room full, and the log ending with a STOP of a region open
	 * around the last record: its START again makes a record, which
	 * the records have no room for, so the block takes records (or,
	 * NSL_REPLAY_DROPS, keeps it in the log, whose replay drops it).
	 */
	{
		static const int tail[][2] = {
			{ NSL_LOG_START, NSL_R_LINK }, { NSL_LOG_START, NSL_R_NIC },
			{ NSL_LOG_STOP, NSL_R_LINK }, { NSL_LOG_START, NSL_R_LINK },
		};
		u64 now = 1000;
		int i;

		pair_reset(b, lb, now);
		for (i = 0; i < NET_SLICE_CONF - 2; i++) {
			int region = i % 2 ? NSL_R_TCP : NSL_R_IP;

			nsl_start_at(b, region, ++now, 0);
			nsl_start_block(lb, region, now);
			nsl_stop_block(b, region, ++now);
			nsl_stop_block(lb, region, now);
		}
		for (i = 0; i < 4; i++) {
			now++;
			if (tail[i][0] == NSL_LOG_START) {
				nsl_start_at(b, tail[i][1], now, 0);
				nsl_start_block(lb, tail[i][1], now);
			} else {
				nsl_stop_block(b, tail[i][1], now);
				nsl_stop_block(lb, tail[i][1], now);
			}
		}
		printf("# a region stopped around the last record\n");
		EXPECT_EQ(lb->nlog == NSL_NOLOG, !NSL_REPLAY_DROPS);
		EXPECT_TRUE(b->blk.flags & NSL_BF_TRUNC);
		kernel_replay(cb, lb);
		EXPECT_TRUE(same_block(cb, b));
	}
	free(r);
	free(cb);
	free(lb);
	CHECK("past NET_SLICE_CONF STARTs, the log keeps NSL_LOG_RESUMES that the records still hold, then takes records, as the records' engine does");
}

/*
 * TCP's eat (tcp_grow_skb()): the eaten template's closed record goes
 * on in the eater's log where the replay then gives what the records'
 * fold gives (nsl_log_eat()), else both take records (nsl_fold_closed()).
 * Each case writes the two logs step by step, eats them both ways, and
 * compares the records, and which way the eat went.
 */
struct eat_step {
	u8 step;		/* NSL_LOG_*; 0 ends the list */
	u8 region;
	u8 cpu;
	u32 t;			/* after the block's tsc0 */
};

#define ES(s, r, c, t)	{ NSL_LOG_##s, NSL_R_##r, c, t }
#define EAT_COPY(t, c)	ES(START, TCP, c, t), ES(STOP, TCP, c, (t) + 5)

static const struct eat_case {
	const char *name;
	struct eat_step d[8], s[8];
	s64 shift;		/* the eaten's tsc0 less the eater's */
	bool logged;		/* the log took it */
} eat_cases[] = {
	{ "a copy into the next skb",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) }, 100, true },
	{ "copies merged in the eaten",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0), EAT_COPY(20, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0), EAT_COPY(20, 0),
	    EAT_COPY(30, 0) }, 100, true },
	{ "nothing closed in the eaten",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { ES(START, WRITE, 0, 0) }, 100, true },
	{ "the eaten copied into on another CPU",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 1) }, 100, false },
	{ "the eater sealed",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0), ES(SEAL, NONE, 0, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) }, 100, false },
	{ "the eater split",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0), ES(SHARE, NONE, 0, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) }, 100, false },
	{ "the eater's copy still open",
	  { ES(START, WRITE, 0, 0), ES(START, TCP, 0, 10) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) }, 100, false },
	{ "the eaten's copy at another depth",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { EAT_COPY(10, 0) }, 100, false },
	{ "the eaten's record of another region",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { ES(START, WRITE, 0, 0), ES(START, IP, 0, 10),
	    ES(STOP, IP, 0, 15) }, 100, false },
	{ "the eaten's copy before the eater's tsc0",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) }, -12, false },
	{ "the eaten's copy past what an entry holds",
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) },
	  { ES(START, WRITE, 0, 0), EAT_COPY(10, 0) }, 0xfffffff8LL, false },
};

static void eat_steps(struct nsl_skb_block *b, const struct eat_step *st,
		      u64 tsc0)
{
	memset(b, 0, NSL_SKB_BLOCK_SIZE);
	b->blk.tsc0 = tsc0;
	nsl_records_reset(b);
	for (; st->step; st++) {
		shim_cpu = st->cpu;
		if (st->step == NSL_LOG_START)
			nsl_start_block(b, st->region, tsc0 + st->t);
		else if (st->step == NSL_LOG_STOP)
			nsl_stop_block(b, st->region, tsc0 + st->t);
		else
			log_other(b, st->step, 0, tsc0 + st->t);
	}
	shim_cpu = 0;
}

static void test_log_eat(void)
{
	struct nsl_skb_block *d = block_alloc(), *s = block_alloc();
	struct nsl_skb_block *fd = block_alloc(), *fs = block_alloc();
	unsigned int c;

	for (c = 0; c < sizeof(eat_cases) / sizeof(eat_cases[0]); c++) {
		const struct eat_case *ec = &eat_cases[c];
		bool logged;

		printf("# %s\n", ec->name);
		eat_steps(d, ec->d, 1000);
		eat_steps(s, ec->s, 1000 + ec->shift);
		memcpy(fd, d, NSL_SKB_BLOCK_SIZE);
		memcpy(fs, s, NSL_SKB_BLOCK_SIZE);
		nsl_fold_closed(fd, fs);
		logged = nsl_log_eat(d, s);
		EXPECT_EQ(logged, ec->logged);
		if (logged) {
			EXPECT_TRUE(d->nlog != NSL_NOLOG && nsl_log_counted(d));
			nsl_records_now(d);
		} else {
			nsl_fold_closed(d, s);
		}
		EXPECT_TRUE(same_block(d, fd));
	}
	free(fs);
	free(fd);
	free(s);
	free(d);
	CHECK("an eaten template's closed record goes on in the eater's log where its replay gives the records' fold, else both fold on records");
}

/*
 * A copy made while another CPU was halfway through a step of the same
 * log (nsl_ext_copy()): its counts and its entries disagree, and
 * nsl_log_counted() says so, whichever half the copy holds.
 */
/*
 * What a NEXT of TCP into IP (nsl_log_next()) has moved before its entry's
 * count: the counts of its first pair, in either order, then those of its
 * second, in either order.
 */
#define NX_START	0x1	/* nstart */
#define NX_FROM		0x2	/* open.last[TCP] down */
#define NX_TO		0x4	/* open.last[IP] up */
#define NX_NEXT		0x8	/* nnext */

/* A log of a START of WRITE and one of TCP, whose counts agree. */
static void counted_block(struct nsl_skb_block *b)
{
	memset(b, 0, NSL_SKB_BLOCK_SIZE);
	b->blk.tsc0 = 1000;
	nsl_records_reset(b);
	nsl_start_block(b, NSL_R_WRITE, 1001);
	nsl_start_block(b, NSL_R_TCP, 1002);
	EXPECT_TRUE(nsl_log_counted(b));
}

static void test_log_counted(struct nsl_skb_block *b)
{
	static const struct {
		const char *name;
		unsigned int next;	/* NX_*: a NEXT's counts so far */
	} halves[] = {
		{ "a START's counts without its entry", 0 },
		{ "a STOP's entry without its count", 0 },
		{ "a seal's entry without its count", 0 },
		{ "a NEXT's nstart alone", NX_START },
		{ "a NEXT's STOP count alone", NX_FROM },
		{ "a NEXT's first pair of counts", NX_START | NX_FROM },
		{ "a NEXT's counts but nnext", NX_START | NX_FROM | NX_TO },
		{ "a NEXT's counts but its START's",
		  NX_START | NX_FROM | NX_NEXT },
		{ "a NEXT's counts without its entry",
		  NX_START | NX_FROM | NX_TO | NX_NEXT },
	};
	unsigned int h, x;

	for (h = 0; h < sizeof(halves) / sizeof(halves[0]); h++) {
		counted_block(b);
		printf("# %s\n", halves[h].name);
		x = halves[h].next;
		if (h == 0) {
			b->open.last[NSL_R_IP]++;
			b->nstart++;
		} else if (h == 1) {
			nsl_log_store(b, NSL_LOG_STOP, NSL_R_TCP, 3);
		} else if (h == 2) {
			nsl_log_add(b, nsl_log_entry(NSL_LOG_SEAL, 0, 0, 0));
		} else {
			b->nstart += !!(x & NX_START);
			b->open.last[NSL_R_TCP] -= !!(x & NX_FROM);
			b->open.last[NSL_R_IP] += !!(x & NX_TO);
			b->nnext += !!(x & NX_NEXT);
		}
		EXPECT_TRUE(!nsl_log_counted(b));
	}
	printf("# a whole NEXT, as the hooks make it\n");
	counted_block(b);
	shim_tsc = 1003;
	EXPECT_TRUE(nsl_log_next(b, NSL_R_TCP, NSL_R_IP));
	shim_tsc = 0;
	EXPECT_TRUE(b->nnext == 1 && nsl_log_counted(b));
	CHECK("a log copied halfway through a step, a NEXT's counts in its order among them: its counts and entries disagree");
}

/*
 * A step's time (nsl_log_since()): the ticks since NSI, and whether an
 * entry holds them -- not 2^32 or more later, nor before (a TSC behind
 * the one NSI read).  Against the TSC itself, so that the --tsc run
 * checks the kernel's x86 instructions, and the others the C.
 */
static void test_log_since(struct nsl_skb_block *b)
{
	static const struct {
		s64 ago;	/* tsc0 this long before the first read */
		bool late;
	} cases[] = {
		{ 1000, false },
		{ 0xfffff000LL, false },
		{ (1LL << 32) + 1000, true },
		{ (5LL << 32) + 3, true },
		{ -(1LL << 40), true },
	};
	unsigned int i;
	u32 t, late;
	u64 t0, t1, when;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		block_reset(b);
		t0 = rdtsc();
		b->blk.tsc0 = t0 - cases[i].ago;
		t = nsl_log_since(b, &late);
		t1 = rdtsc();
		when = nsl_log_when(b, t, late);
		EXPECT_EQ(late != 0, cases[i].late);
		EXPECT_TRUE(when >= t0 && when <= t1);
		if (!cases[i].late)
			EXPECT_EQ(t, when - b->blk.tsc0);
	}
#ifdef CONFIG_X86_TSC
	CHECK("a step's time: the ticks since NSI and whether they are late, in the kernel's x86 instructions");
#else
	CHECK("a step's time: the ticks since NSI and whether they are late, in C");
#endif
}

static int run_tests(void)
{
	struct nsl_skb_block *b = block_alloc();

	printf("TAP version 13\n");
	test_nesting(b);
	test_merge(b);
	test_stacked(b);
	test_reset(b);
	test_trunc(b);
	test_tsc_order(b);
	test_open_counts(b);
	test_random(b, 200000);
	test_log_replay(b, 20000);
	test_log_resume(b);
	test_log_eat();
	test_log_counted(b);
	test_log_since(b);
	free(b);
	return tap_finish();
}

/* The x86 step time alone: the timing build's, which the others lack. */
static int run_tsc(void)
{
	struct nsl_skb_block *b = block_alloc();

	printf("TAP version 13\n");
	test_log_since(b);
	free(b);
	return tap_finish();
}

/* ---- native timing ---- */

/* What skb_ext_find() does: a bit test and an offset in 8-byte chunks. */
struct fake_ext {
	u8 offset[8];
	u8 active;
	char data[] __attribute__((aligned(8)));
};

static inline struct nsl_skb_block *fake_find(struct fake_ext *ext, int id)
{
	if (!(ext->active & (1 << id)))
		return NULL;
	return (void *)((char *)ext + (ext->offset[id] << 3));
}

#define EXT_ID 5

/* NSS and NST as core.c has them: lookup, then the record, TSC last. */
static inline void nss(struct fake_ext *ext, int region)
{
	struct nsl_skb_block *b = fake_find(ext, EXT_ID);

	if (b)
		nsl_start_block(b, region, NSL_NOW);
}

static inline void nst(struct fake_ext *ext, int region)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = fake_find(ext, EXT_ID);

	if (b)
		nsl_stop_block(b, region, now);
}

/* NSS as it was before: the TSC read first, the lookup in the region. */
static inline void nss_tsc_first(struct fake_ext *ext, int region)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = fake_find(ext, EXT_ID);

	if (b)
		nsl_start_block(b, region, now);
}

static void flush(const void *p, size_t len)
{
	const char *c = p;
	size_t i;

	for (i = 0; i < len; i += 64)
		_mm_clflush(c + i);
	_mm_mfence();
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

struct stat {
	u64 med, p10, p90;
	double mean;	/* of the samples up to p99: sub-tick where the TSC is coarse */
};

static struct stat summarise(u64 *v, long n)
{
	struct stat s;
	double sum = 0;
	long i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n * 99 / 100; i++)
		sum += v[i];
	s.mean = sum / (n * 99 / 100);
	s.med = v[n / 2];
	s.p10 = v[n / 10];
	s.p90 = v[n * 9 / 10];
	return s;
}

enum what {
	BARE,		/* two bare rdtsc */
	PAIR,		/* rdtsc, NSS, NST, rdtsc: what the pair costs */
	TAU_O,		/* what an empty NSS..NST records (TSC last) */
	TAU_O_FIRST,	/* the same with the TSC read first, as before */
	STOP_OUTER,	/* rdtsc, NST of a block's first region, rdtsc */
	STOP_NESTED,	/* the same, the region open inside itself (a search) */
	NWHAT
};

static const char *const what_name[NWHAT] = {
	[BARE] = "two bare rdtsc",
	[PAIR] = "NSS + NST (the pair, from outside)",
	[TAU_O] = "empty NSS..NST records (tau_o), TSC last",
	[TAU_O_FIRST] = "empty NSS..NST records, TSC first (before)",
	[STOP_OUTER] = "NST of the 1st of 7 records",
	[STOP_NESTED] = "NST of a region inside itself (search)",
};

/* The block a sample starts from: write open, tcp nested in it. */
static void sample_setup(struct nsl_skb_block *b, enum what w)
{
	static const u8 seven[] = { NSL_R_TCP, NSL_R_IP, NSL_R_QDISC,
				    NSL_R_LINK, NSL_R_NIC, NSL_R_SNDQ };
	unsigned int i;

	nsl_records_reset(b);
	nsl_start_block(b, NSL_R_WRITE, b->blk.tsc0);
	if (w != STOP_OUTER && w != STOP_NESTED)
		return;
	for (i = 0; i < sizeof(seven); i++) {
		nsl_start_block(b, seven[i], b->blk.tsc0);
		nsl_stop_block(b, seven[i], b->blk.tsc0 + 1);
	}
	if (w == STOP_NESTED)
		nsl_start_block(b, NSL_R_WRITE, b->blk.tsc0 + 2);
}

static u64 sample(struct fake_ext *ext, struct nsl_skb_block *b, enum what w,
		  bool cold)
{
	u64 t0, t1;

	sample_setup(b, w);
	if (cold)
		flush(ext, sizeof(*ext) + sizeof(*b));
	switch (w) {
	case BARE:
		t0 = nsl_now();
		t1 = nsl_now();
		return t1 - t0;
	case PAIR:
		t0 = nsl_now();
		nss(ext, NSL_R_TCP);
		nst(ext, NSL_R_TCP);
		t1 = nsl_now();
		return t1 - t0;
	case TAU_O:
		nss(ext, NSL_R_TCP);
		nst(ext, NSL_R_TCP);
		return b->blk.rec[1].ticks;
	case TAU_O_FIRST:
		nss_tsc_first(ext, NSL_R_TCP);
		nst(ext, NSL_R_TCP);
		return b->blk.rec[1].ticks;
	case STOP_OUTER:
	case STOP_NESTED:
		t0 = nsl_now();
		nst(ext, NSL_R_WRITE);
		t1 = nsl_now();
		return t1 - t0;
	default:
		abort();
	}
}

static void cpu_name(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown CPU");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(buf, len, "%s", c + 2);
			buf[strcspn(buf, "\n")] = 0;
			break;
		}
	}
	fclose(f);
}

/* One CPU for the whole run: one TSC, one cache, as START and STOP see. */
static void pin(void)
{
	cpu_set_t set;

	shim_cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(shim_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "hotpath: not pinned to CPU %d: %s\n", shim_cpu,
			strerror(errno));
}

static int run_bench(long n)
{
	struct fake_ext *ext;
	struct nsl_skb_block *b;
	struct stat s[2][NWHAT];
	char cpu[128];
	u64 *v;
	int cold, w;
	long i;

	ext = aligned_alloc(64, sizeof(*ext) + sizeof(*b) + 64);
	v = malloc(n * sizeof(*v));
	if (!ext || !v) {
		fprintf(stderr, "hotpath: out of memory\n");
		return 1;
	}
	memset(ext, 0, sizeof(*ext));
	ext->active = 1 << EXT_ID;
	ext->offset[EXT_ID] = sizeof(*ext) / 8;
	b = fake_find(ext, EXT_ID);
	block_reset(b);
	for (cold = 0; cold < 2; cold++) {
		for (w = 0; w < NWHAT; w++) {
			for (i = 0; i < n / 10; i++)	/* warm up */
				sample(ext, b, w, cold);
			for (i = 0; i < n; i++)
				v[i] = sample(ext, b, w, cold);
			s[cold][w] = summarise(v, n);
		}
	}
	cpu_name(cpu, sizeof(cpu));
	printf("NetSlice hot path, natively on CPU %d: %s\n", shim_cpu, cpu);
	printf("source: kernel/ns_core/net/netslice/record.h, gcc -O2; %ld samples each; TSC ticks\n", n);
	printf("%-44s %8s %8s %8s %8s %8s %8s %8s\n", "", "warm p50", "p10",
	       "p90", "mean", "cold p50", "mean", "x bare");
	for (w = 0; w < NWHAT; w++)
		printf("%-44s %8llu %8llu %8llu %8.1f %8llu %8.1f %8.2f\n",
		       what_name[w],
		       (unsigned long long)s[0][w].med,
		       (unsigned long long)s[0][w].p10,
		       (unsigned long long)s[0][w].p90, s[0][w].mean,
		       (unsigned long long)s[1][w].med, s[1][w].mean,
		       s[0][w].mean / (s[0][BARE].mean ? s[0][BARE].mean : 1));
	printf("NSS+NST beyond two bare rdtsc (means): %.1f ticks warm, %.1f cold\n",
	       s[0][PAIR].mean - s[0][BARE].mean,
	       s[1][PAIR].mean - s[1][BARE].mean);
	printf("an empty region records, beyond two bare rdtsc: %.1f warm, %.1f cold"
	       " (TSC read first, as before: %.1f warm, %.1f cold)\n",
	       s[0][TAU_O].mean - s[0][BARE].mean,
	       s[1][TAU_O].mean - s[1][BARE].mean,
	       s[0][TAU_O_FIRST].mean - s[0][BARE].mean,
	       s[1][TAU_O_FIRST].mean - s[1][BARE].mean);
	free(v);
	free(ext);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 200000;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atol(argv[++i]);
		else if (strcmp(argv[i], "--bench") && strcmp(argv[i], "--tsc"))
			break;
	}
	if (i < argc || n < 10) {
		fprintf(stderr, "usage: hotpath [--tsc | --bench [-n SAMPLES>=10]]\n");
		return 2;
	}
	pin();
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bench"))
			return run_bench(n);
		if (!strcmp(argv[i], "--tsc"))
			return run_tsc();
	}
	return run_tests();
}
