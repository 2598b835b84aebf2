/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice core: the records of one block, START and STOP's fast path.
 *
 * Kept apart from core.c, and inline, so that the same source is what the
 * kernel runs and what kernel/ns_core/selftest/host times natively on the
 * host CPU (a user-space build against a few shims).
 *
 * What a region's interval holds is up to these functions: START reads the
 * TSC last, after finding or making its record, and STOP reads it first,
 * before finding the record it closes, so neither lookup is inside the
 * region measured.  The record STOP closes is found through a per-region
 * hint (the record the region's last START opened) checked before use; a
 * stale hint falls back to the search.
 */
#ifndef _NSL_RECORD_H
#define _NSL_RECORD_H

#include <linux/netslice.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "core.h"

/* A START's time: the TSC read last, after the bookkeeping. */
#define NSL_NOW		0

/*
 * @region's record at index @n was opened: the block's count of open
 * records, the region's hint and count (nsl_open_record()).
 */
static __always_inline void nsl_note_open(struct nsl_skb_block *b, int region,
					  unsigned int n)
{
	b->nopen++;
	b->open_hint[region] = n + 1;
	/* Saturates: a count too high only costs a search. */
	if (b->open_cnt[region] != 0xff)
		b->open_cnt[region]++;
}

/*
 * A START's time: @now, or NSL_NOW for the TSC read now, or in count mode
 * (@nev, the block's nevents, not 0) the TSC read next to the counters.
 * @nev is passed, not read here, so that a caller that knows it is 0
 * inlines a path without the counters' call: a leaf, with no registers
 * to save.
 */
static __always_inline u64 nsl_start_time(struct nsl_skb_block *b,
					  struct nsl_record *r, u64 now, u8 nev)
{
	if (nev)
		return nsl_counters_start(r, nev, b->gen);
	return now == NSL_NOW ? nsl_now() : now;
}

/*
 * Closes @r, an open record of @region, at @now; in count mode (@nev not
 * 0) next to the counters.  The region's open count is not 0: it counts
 * @r.
 */
static __always_inline void nsl_rec_end(struct nsl_skb_block *b,
					struct nsl_record *r, int region,
					u64 now, u8 nev)
{
	if (nev)
		now = nsl_counters_stop(r, nev, b->gen);
	r->ticks += now;
	r->flags &= ~NSL_RF_OPEN;
	b->open_cnt[region]--;
	if (unlikely(r->cpu != raw_smp_processor_id())) {
		r->flags |= NSL_RF_MIGRATED;
		if (nev)
			r->flags |= NSL_RF_INVALID;
	}
	if (b->nopen)
		b->nopen--;
}

/*
 * START of @region at @now (NSL_NOW: the TSC read now, as NSS does), in
 * count mode with @nev counters.  The record it opens is the last one,
 * when that is the same region, closed, in this phase (back-to-back
 * intervals of a region are summed); else a new one, unless the block is
 * full.  Bookkeeping first: what follows the time read is inside the
 * interval.  A new record's counts are zeroed only in count mode: nothing
 * reads a count past the block's nevents.
 */
static __always_inline void nsl_start_at(struct nsl_skb_block *b, int region,
					 u64 now, u8 nev)
{
	struct nsl_block *blk = &b->blk;
	unsigned int n = blk->nrec;
	struct nsl_record *r;

	if (n && !b->sealed) {
		r = &blk->rec[n - 1];
		if (r->region == region &&
		    !(r->flags & (NSL_RF_OPEN | NSL_RF_SHARED))) {
			r->flags |= NSL_RF_MERGED | NSL_RF_OPEN;
			r->nmerged++;
			/* STOP compares with the first START's CPU only. */
			if (unlikely(r->cpu != raw_smp_processor_id()))
				r->flags |= NSL_RF_MIGRATED |
					(nev ? NSL_RF_INVALID : 0);
			nsl_note_open(b, region, n - 1);
			r->ticks -= nsl_start_time(b, r, now, nev);
			return;
		}
	}
	if (unlikely(n >= NET_SLICE_CONF)) {
		blk->flags |= NSL_BF_TRUNC;
		return;
	}
	r = &blk->rec[n];
	blk->nrec = n + 1;
	r->region = region;
	r->depth = b->nopen;
	r->flags = NSL_RF_OPEN;
	r->nmerged = 1;
	r->cpu = raw_smp_processor_id();
	if (nev)
		memset(r->count, 0, sizeof(r->count));
	b->sealed = false;
	nsl_note_open(b, region, n);
	now = nsl_start_time(b, r, now, nev);
	r->ticks = -now;
	r->start = now - blk->tsc0;
}

/* START in count mode, out of line: its calls stay off the common path. */
static noinline __maybe_unused void
nsl_start_count(struct nsl_skb_block *b, int region, u64 now)
{
	nsl_start_at(b, region, now, b->blk.nevents);
}

/*
 * START of @region at @now, or NSL_NOW as NSS does.  Duration mode
 * inline, a leaf: count mode's calls would make every START save and
 * restore registers.
 */
static __always_inline void nsl_start_block(struct nsl_skb_block *b,
					    int region, u64 now)
{
	if (likely(!b->blk.nevents))
		nsl_start_at(b, region, now, 0);
	else
		nsl_start_count(b, region, now);
}

/* The same for a block in duration mode (nevents 0): no call. */
static __always_inline void nsl_start_duration(struct nsl_skb_block *b,
					       int region)
{
	nsl_start_at(b, region, NSL_NOW, 0);
}

/*
 * The latest open record of @region, searched from the last record: where
 * the hint below does not name it.
 */
static inline struct nsl_record *nsl_search_open(struct nsl_skb_block *b,
						 int region)
{
	struct nsl_record *r;
	int i;

	for (i = b->blk.nrec - 1; i >= 0; i--) {
		r = &b->blk.rec[i];
		if (r->region == region && (r->flags & NSL_RF_OPEN))
			return r;
	}
	return NULL;
}

/*
 * Whether the record the region's last START opened is still an open
 * record of the region, in *@rp: then it is the latest.  Every open record
 * was opened by a START (records copied in are closed), and a later START
 * of the region would have moved the hint.  False if the hint is stale
 * (closed since, or the records were reset).  A bool, not the record or
 * NULL: a caller would test again for NULL an address that cannot be.
 */
static __always_inline bool nsl_hinted_open(struct nsl_skb_block *b,
					    int region, struct nsl_record **rp)
{
	unsigned int hint = b->open_hint[region];
	struct nsl_record *r;

	if (unlikely(!hint || hint > b->blk.nrec))
		return false;
	r = &b->blk.rec[hint - 1];
	if (unlikely(r->region != region || !(r->flags & NSL_RF_OPEN)))
		return false;
	*rp = r;
	return true;
}

/* The latest open record of @region, or NULL. */
static inline struct nsl_record *nsl_open_record(struct nsl_skb_block *b,
						 int region)
{
	struct nsl_record *r;

	/* Most lookups (NSE ends every region it might) find none open. */
	if (!b->open_cnt[region])
		return NULL;
	if (nsl_hinted_open(b, region, &r))
		return r;
	return nsl_search_open(b, region);
}

/*
 * open_cnt[] from the records themselves: where records are dropped or
 * copied in bulk.  A count may run high (a record closed by hand, a
 * saturated count) and only costs a search; it may never run low, for a
 * count of 0 says no record of its region is open.
 */
static inline void nsl_recount_open(struct nsl_skb_block *b)
{
	unsigned int i;

	memset(b->open_cnt, 0, sizeof(b->open_cnt));
	for (i = 0; i < b->blk.nrec && i < NET_SLICE_CONF; i++)
		if ((b->blk.rec[i].flags & NSL_RF_OPEN) &&
		    b->blk.rec[i].region < NSL_R_MAX)
			b->open_cnt[b->blk.rec[i].region]++;
}

/*
 * STOP of @region at @now, in count mode with @nev counters: closes the
 * region's latest open record, if any.
 */
static __always_inline bool nsl_stop_at(struct nsl_skb_block *b, int region,
					u64 now, u8 nev)
{
	struct nsl_record *r;

	if (!b->open_cnt[region])
		return false;
	if (unlikely(!nsl_hinted_open(b, region, &r))) {
		r = nsl_search_open(b, region);
		if (!r)
			return false;
	}
	nsl_rec_end(b, r, region, now, nev);
	return true;
}

static noinline __maybe_unused bool
nsl_stop_count(struct nsl_skb_block *b, int region, u64 now)
{
	return nsl_stop_at(b, region, now, b->blk.nevents);
}

/*
 * STOP of @region at @now, as START: most find no record of the region
 * open, and return inline.  Whether it closed one.
 */
static __always_inline bool nsl_stop_block(struct nsl_skb_block *b,
					   int region, u64 now)
{
	if (!b->open_cnt[region])
		return false;
	if (likely(!b->blk.nevents))
		return nsl_stop_at(b, region, now, 0);
	return nsl_stop_count(b, region, now);
}

/* The same for a block in duration mode (nevents 0): no call. */
static __always_inline void nsl_stop_duration(struct nsl_skb_block *b,
					      int region, u64 now)
{
	nsl_stop_at(b, region, now, 0);
}

#endif /* _NSL_RECORD_H */
