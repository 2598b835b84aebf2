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
 * START on the block's records, the log replayed first if there was one:
 * out of line, as count mode's calls and a log's replay are.
 */
void nsl_start_records(struct nsl_skb_block *b, int region, u64 now)
{
	nsl_records_now(b);
	nsl_start_at(b, region, now, b->blk.nevents);
}

/* STOP on the block's records, as nsl_start_records(). */
bool nsl_stop_records(struct nsl_skb_block *b, int region, u64 now)
{
	nsl_records_now(b);
	return nsl_stop_at(b, region, now, b->blk.nevents);
}
