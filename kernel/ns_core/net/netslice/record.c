// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: what record.h's fast path falls back on, out of line and
 * once in the kernel (as static functions in the header, every file that
 * included it had its own copy: six of the log's replay alone).  The
 * core's host self-test builds this file with record.h.
 */

#include "record.h"

/*
 * The block keeps records from here on: its log replayed into the
 * records, devices' first records and bookkeeping the steps would have
 * made had the block kept records all along.
 */
void nsl_records_now(struct nsl_skb_block *b)
{
	struct nsl_log_state st = { .merge_region = NSL_R_NONE };
	u64 log[NSL_LOG_ROOM];
	unsigned int n = b->nlog, i;

	if (n == NSL_NOLOG)
		return;
	n = min_t(unsigned int, n, NSL_LOG_ROOM);
	memcpy(log, b->blk.rec, n * sizeof(log[0]));
	b->blk.nrec = 0;
	for (i = 0; i < b->blk.ndev && i < NSL_MAX_DEVS; i++)
		b->blk.dev[i].first = 0;
	/* Only a torn copy (nsl_ext_copy()) has a step no writer makes. */
	nsl_log_replay(&b->blk, &st, log, n, NET_SLICE_CONF);
	b->nopen = st.nopen;
	b->merge_region = st.merge_region;
	memcpy(b->open.last, st.last, sizeof(b->open.last));
	memcpy(b->open.more, st.more, sizeof(b->open.more));
	nsl_keep_records(b);
}

/*
 * The latest open record of @region besides the one just closed, which
 * was its latest: the rare case of a region open inside itself.
 */
void nsl_reopen_last(struct nsl_skb_block *b, int region)
{
	int i;

	b->open.more[region]--;
	b->open.last[region] = 0;
	for (i = b->blk.nrec - 1; i >= 0; i--) {
		if (b->blk.rec[i].region == region &&
		    (b->blk.rec[i].flags & NSL_RF_OPEN)) {
			b->open.last[region] = i + 1;
			return;
		}
	}
}

/*
 * Whether the replay of @b's log keeps a START of @region made now
 * within the records' room: the START merges into the last record (that
 * record is @region's and closed, and made since the last seal), or the
 * records made so far leave room for one more.  The walk keeps what the
 * replay's merge reads: the region of the last START (which made the
 * last record or resumed it), whether that record is open, and the
 * records made, counted from above: after a GAP, which may or may not
 * make a record, the last record is unknown until the next START.  A
 * log holds no SHARED record (nsl_mark_shared() works on records).
 */
static bool nsl_log_fits(const struct nsl_skb_block *b, int region)
{
	const u64 *log = (const u64 *)b->blk.rec;
	unsigned int i, made = 0, last = NSL_R_NONE;
	bool open = false;

	for (i = 0; i < b->nlog; i++) {
		unsigned int r = NSL_LOG_REGION(log[i]);

		switch (NSL_LOG_STEP(log[i])) {
		case NSL_LOG_START:
			made += r != last || open;
			last = r;
			open = true;
			break;
		case NSL_LOG_STOP:
			if (r == last)
				open = false;
			break;
		case NSL_LOG_GAP:
			made++;
			last = NSL_R_NONE;
			break;
		case NSL_LOG_SEAL:
			last = NSL_R_NONE;
			break;
		}
	}
	/* Exact while no START was dropped: at most NET_SLICE_CONF made. */
	if (last == (unsigned int)region && !open)
		return made <= NET_SLICE_CONF;
	return made < NET_SLICE_CONF;
}

/*
 * A START past the NET_SLICE_CONF STARTs the log counts, which the
 * replay still fits in the records (nsl_log_fits()): the count includes
 * STARTs that merged, and those cost the records no room.  It goes to
 * the log, counted in nresume, while the log has room for it and its
 * STOP.  Else false, having changed nothing.  Without it, a TSO skb
 * copied into in many parts, or read in many, left its log for records
 * halfway to the reader.
 */
static bool nsl_log_resume(struct nsl_skb_block *b, int region, u64 now)
{
	u32 t, late;

	if (b->nlog == NSL_NOLOG || b->nresume >= NSL_LOG_RESUMES ||
	    !nsl_log_fits(b, region))
		return false;
	t = nsl_log_start_time(b, now, &late);
	if (unlikely(late))
		return false;
	b->open.last[region]++;
	b->nresume++;
	nsl_log_store(b, NSL_LOG_START, region, t);
	return true;
}

/*
 * START on the block's records, the log replayed first if there was one
 * (unless the log can keep it, nsl_log_resume()): out of line, as count
 * mode's calls and a log's replay are.
 */
void nsl_start_records(struct nsl_skb_block *b, int region, u64 now)
{
	if (nsl_log_resume(b, region, now))
		return;
	nsl_records_now(b);
	nsl_start_at(b, region, now, b->blk.nevents);
}

/* STOP on the block's records, as nsl_start_records(). */
bool nsl_stop_records(struct nsl_skb_block *b, int region, u64 now)
{
	nsl_records_now(b);
	return nsl_stop_at(b, region, now, b->blk.nevents);
}
