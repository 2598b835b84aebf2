/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice core: the records of one block, START and STOP's fast path.
 *
 * Kept apart from core.c, and inline, so that the same source is what the
 * kernel runs and what kernel/ns_core/selftest/host times natively on the
 * host CPU (a user-space build against a few shims).  The log's steps
 * themselves (nsl_log_start(), nsl_log_stop()) are in linux/netslice.h,
 * inline at the hook sites too; this file is what they fall back on.
 *
 * What a region's interval holds is up to these functions: START reads the
 * TSC last, after finding or making its record, and STOP reads it first,
 * before finding the record it closes, so neither lookup is inside the
 * region measured.  The record STOP closes is the one the block names as
 * the region's latest open record (nsl_skb_block.open): exact, so STOP
 * neither checks it nor searches, unless the region is open inside itself
 * (a stacked device's link), where closing the inner record searches for
 * the outer.  Whatever changes the records otherwise resets or recounts
 * it (nsl_records_reset(), nsl_recount_open()).
 *
 * Until something needs the records, a duration-mode block keeps none:
 * START and STOP append a step to its log (nsl_log_entry(), in
 * blk.rec[]'s room), which the reader replays into the records this file
 * would have kept (nsl_log_replay(), include/netslice.h), with none of
 * their bookkeeping on the packet's path.  What reads or moves records
 * in the kernel (a copy, a merge, calibration, MAGNeT) first replays the
 * log itself (nsl_records_now()), as does a step the log has no room or
 * no time field for; the block keeps records from then on.
 */
#ifndef _NSL_RECORD_H
#define _NSL_RECORD_H

#include <linux/netslice.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "core.h"

/*
 * The kernel's records have the room a reader replays a log with
 * (NSL_MAX_RECORDS): a START the records would drop, the replay drops
 * too, so a log needs no walk to keep one (nsl_log_resume()).  The log
 * then counts that START open until its STOP, and the hooks that ask
 * whether its region is open (a requeue at the driver, NOXMIT at NSE)
 * see the region the packet entered, where full records would not.
 */
#define NSL_REPLAY_DROPS	(NET_SLICE_CONF == NSL_MAX_RECORDS)

/*
 * Out of line, in record.c: the block keeps records from here on, its
 * log replayed (nsl_records_now()); a region open inside itself names
 * its outer record again (nsl_reopen_last()); START and STOP on the
 * records, the log replayed first (nsl_start_records(),
 * nsl_stop_records()).
 */
void nsl_records_now(struct nsl_skb_block *b);
void nsl_reopen_last(struct nsl_skb_block *b, int region);
void nsl_start_records(struct nsl_skb_block *b, int region, u64 now);
bool nsl_stop_records(struct nsl_skb_block *b, int region, u64 now);

/*
 * Also out of line, in record.c: whether a log's counts are its entries'
 * (nsl_log_counted(), for a copy), and an eaten template's closed
 * records added to the block that ate it, in the logs where they can be
 * (nsl_log_eat()), else on records (nsl_fold_closed()).
 */
bool nsl_log_counted(const struct nsl_skb_block *b);
bool nsl_log_eat(struct nsl_skb_block *d, const struct nsl_skb_block *s);
void nsl_fold_closed(struct nsl_skb_block *d, struct nsl_skb_block *s);

/*
 * @region's record at index @n was opened: the block's count of open
 * records, and @n the region's latest (nsl_open_record()).  At most
 * NET_SLICE_CONF records are open, so more[] cannot overflow.
 */
static __always_inline void nsl_note_open(struct nsl_skb_block *b, int region,
					  unsigned int n)
{
	b->nopen++;
	if (unlikely(b->open.last[region]))
		b->open.more[region]++;
	b->open.last[region] = n + 1;
}

/* The bytes of @b's nsl_block as written: its records, or its log. */
static inline u32 nsl_block_bytes(const struct nsl_skb_block *b)
{
	return b->nlog == NSL_NOLOG ? NSL_BLOCK_SIZE(b->blk.nrec) :
	       NSL_BLOCK_SIZE(0) + b->nlog * sizeof(u64);
}

/*
 * Whether @b keeps a log with room for a step other than START and
 * STOP (nsl_skb_block.nother), and appending @e, one.
 */
static __always_inline bool nsl_log_other_room(const struct nsl_skb_block *b)
{
	return b->nlog != NSL_NOLOG && b->nother < NSL_LOG_OTHERS;
}

static __always_inline void nsl_log_add_other(struct nsl_skb_block *b, u64 e)
{
	nsl_log_add(b, e);
	b->nother++;
}

/*
 * A step other than START and STOP at @now (nsl_log_put()), counted:
 * false, with nothing written, where the block must take records.
 */
static __always_inline bool nsl_log_put_other(struct nsl_skb_block *b,
					      unsigned int step, int region,
					      u64 now)
{
	if (!nsl_log_other_room(b) || !nsl_log_put(b, step, region, now))
		return false;
	b->nother++;
	return true;
}

/* The block keeps records, and no START or STOP goes to its log. */
static inline void nsl_keep_records(struct nsl_skb_block *b)
{
	b->nlog = NSL_NOLOG;
	b->nstart = NSL_NOLOG;
}

/*
 * Appends @e, a step other than START and STOP, where the block keeps a
 * log with room for it: true.  Else false, the block keeping records from
 * here on (a full log replayed into them), on which the caller does what
 * the step says.
 */
static inline bool nsl_log_other(struct nsl_skb_block *b, u64 e)
{
	if (likely(nsl_log_other_room(b))) {
		nsl_log_add_other(b, e);
		return true;
	}
	nsl_records_now(b);
	return false;
}

/*
 * The packet was split after the records closed so far, which another
 * part's block counts (nsl_block_share()): a GSO segment past the first,
 * a copy at a link.  A log says so in a step, which the replay takes.
 */
static inline void nsl_share(struct nsl_skb_block *b)
{
	if (!nsl_log_other(b, nsl_log_entry(NSL_LOG_SHARE, 0, 0, 0)))
		nsl_block_share(&b->blk);
}

/*
 * A new phase of the block (a fork, a calibration's sample): no START
 * merges into a record made before.  A log says so in a step, unless
 * it is empty: a replay begins sealed.
 */
static inline void nsl_seal(struct nsl_skb_block *b)
{
	if (b->nlog && nsl_log_other(b, nsl_log_entry(NSL_LOG_SEAL, 0, 0, 0)))
		return;
	b->merge_region = NSL_R_NONE;
}

/*
 * Records were appended or moved in bulk: a START may merge into the last
 * one, as into one it made itself, unless the block is sealed.
 */
static inline void nsl_merge_last(struct nsl_skb_block *b)
{
	unsigned int n = b->blk.nrec;

	if (b->merge_region != NSL_R_NONE)
		b->merge_region = n ? b->blk.rec[n - 1].region : NSL_R_NONE;
}

/*
 * No record at all: what a block is before its first START, a log in
 * duration mode (count mode reads counters beside each record).  Nor a
 * device, which names its first record: a retransmission's block adds
 * its devices again.
 */
static inline void nsl_records_reset(struct nsl_skb_block *b)
{
	b->blk.nrec = 0;
	b->blk.ndev = 0;
	b->nlog = 0;
	b->nstart = 0;
	b->nresume = 0;
	b->nother = 0;
	b->nnext = 0;
	if (b->blk.nevents)
		nsl_keep_records(b);
	b->nopen = 0;
	memset(&b->open, 0, sizeof(b->open));
	b->merge_region = NSL_R_NONE;
}

/*
 * Device @d's records begin with the next one opened (nsl_join_dev()): a
 * DEV step in a log, or its first record on records.
 */
static inline void nsl_dev_first(struct nsl_skb_block *b, unsigned int d)
{
	if (!nsl_log_other(b, nsl_log_entry(NSL_LOG_DEV, d, 0, 0)))
		b->blk.dev[d].first = b->blk.nrec;
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
 * Closes @r, the latest open record of @region, at @now; in count mode
 * (@nev not 0) next to the counters.
 */
static __always_inline void nsl_rec_end(struct nsl_skb_block *b,
					struct nsl_record *r, int region,
					u64 now, u8 nev)
{
	u16 flags;

	if (nev)
		now = nsl_counters_stop(r, nev, b->gen);
	r->ticks += now;
	/* One store of the flags, the rare case out of the way. */
	flags = r->flags & ~NSL_RF_OPEN;
	if (unlikely(r->cpu != raw_smp_processor_id()))
		flags |= NSL_RF_MIGRATED | (nev ? NSL_RF_INVALID : 0);
	r->flags = flags;
	b->nopen--;
	/* Last: the search, if any, is past @r's stores. */
	if (unlikely(b->open.more[region]))
		nsl_reopen_last(b, region);
	else
		b->open.last[region] = 0;
}

/*
 * START of @region at @now (NSL_NOW: the TSC read now, as NSS does), in
 * count mode with @nev counters.  The record it opens is the last one,
 * when that is the same region, closed, in this phase (back-to-back
 * intervals of a region are summed); else a new one, unless the block is
 * full.  merge_region names the last record's region in this phase, so
 * that most STARTs rule the merge out with one compare; the record is
 * looked at only when it names @region.  Bookkeeping first: what follows
 * the time read is inside the interval.  A new record's counts are zeroed
 * only in count mode: nothing reads a count past the block's nevents.
 */
static __always_inline void nsl_start_at(struct nsl_skb_block *b, int region,
					 u64 now, u8 nev)
{
	struct nsl_block *blk = &b->blk;
	unsigned int n = blk->nrec;
	struct nsl_record *r;

	if (b->merge_region == region && likely(n)) {
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
	b->merge_region = region;
	nsl_note_open(b, region, n);
	now = nsl_start_time(b, r, now, nev);
	r->ticks = -now;
	r->start = now - blk->tsc0;
}

/*
 * START of @region at @now, or NSL_NOW as NSS does: in the log, inline
 * and a leaf (nsl_log_start(), linux/netslice.h: the bookkeeping first,
 * the TSC last, and the entry).  A START past NET_SLICE_CONF in the log
 * would be one the records have no room for: the block takes records
 * first, and truncates as they do.
 */
static __always_inline void nsl_start_block(struct nsl_skb_block *b,
					    int region, u64 now)
{
	if (unlikely(!nsl_log_start(b, region, now)))
		nsl_start_records(b, region, now);
}

/*
 * START of @region at @now, device @d's records beginning with it (its
 * index from nsl_join_dev(); none if negative): one step in a log that
 * takes it (DEV_START), else the device's first record said as before
 * and then the START.
 */
static __always_inline void nsl_start_dev(struct nsl_skb_block *b,
					  int region, u64 now, int d)
{
	if (d >= 0) {
		if (likely(nsl_log_start_high(b, region, now,
					      nsl_log_high_arg(NSL_LOG_DEV_START,
							       region, d, 0))))
			return;
		nsl_dev_first(b, d);
	}
	nsl_start_block(b, region, now);
}

/* The latest open record of @region, or NULL. */
static inline struct nsl_record *nsl_open_record(struct nsl_skb_block *b,
						 int region)
{
	unsigned int last = b->open.last[region];

	return last ? &b->blk.rec[last - 1] : NULL;
}

/*
 * The open records, of each region and in all (nopen), from the records
 * themselves: where records are dropped, moved or copied in bulk.  A copy
 * made while another CPU opens a record may hold the record and not the
 * count, or the count and not the record; this makes them agree.
 */
static inline void nsl_recount_open(struct nsl_skb_block *b)
{
	unsigned int i, region;

	memset(&b->open, 0, sizeof(b->open));
	b->nopen = 0;
	for (i = 0; i < b->blk.nrec && i < NET_SLICE_CONF; i++) {
		if (!(b->blk.rec[i].flags & NSL_RF_OPEN))
			continue;
		region = b->blk.rec[i].region;
		if (region >= NSL_R_MAX)
			continue;
		b->nopen++;
		if (b->open.last[region])
			b->open.more[region]++;
		b->open.last[region] = i + 1;
	}
}

/*
 * STOP of @region at @now, in count mode with @nev counters: closes the
 * region's latest open record, if any.
 */
static __always_inline bool nsl_stop_at(struct nsl_skb_block *b, int region,
					u64 now, u8 nev)
{
	unsigned int last = b->open.last[region];

	if (!last)
		return false;
	nsl_rec_end(b, &b->blk.rec[last - 1], region, now, nev);
	return true;
}

/*
 * STOP of @region at @now, as START: most find no record of the region
 * open, and return inline; in the log, a STOP is an entry.  Whether it
 * closed one.
 */
static __always_inline bool nsl_stop_block(struct nsl_skb_block *b,
					   int region, u64 now)
{
	if (!b->open.last[region])
		return false;
	if (likely(nsl_log_stop(b, region, now)))
		return true;
	return nsl_stop_records(b, region, now);
}

/* Whether @region has a record open (in the log: a START not stopped). */
static __always_inline bool nsl_region_open(const struct nsl_skb_block *b,
					    int region)
{
	return b->open.last[region];
}

#endif /* _NSL_RECORD_H */
