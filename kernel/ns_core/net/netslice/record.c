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
 * What the replay of a log will make of it, read without replaying
 * (nsl_log_walk()).  The records made are counted from above: after a
 * GAP, which may or may not make a record, the last record is unknown
 * until the next START.  last is the last record's region, NSL_R_NONE
 * where no START may merge into it (sealed, SHARED, after a GAP), and
 * open its state.  With @depth, also its depth and first CPU, and the
 * STARTs not stopped (nopen: a writer logs a STOP only of a region
 * open).  bad: an entry no writer makes, where the walk stopped.
 */
struct nsl_log_walk {
	unsigned int made, last, last_depth;
	u16 last_cpu;
	bool open, bad;
	u8 nopen;
};

/* A STOP of region @r in a walk (nsl_log_walk()). */
static __always_inline void nsl_walk_stop(struct nsl_log_walk *w,
					  unsigned int r, bool depth)
{
	if (r == w->last)
		w->open = false;
	if (depth && w->nopen)
		w->nopen--;
}

/* Inline, so that a walk without @depth keeps none of it. */
static __always_inline void nsl_log_walk(const struct nsl_skb_block *b,
					 struct nsl_log_walk *w, bool depth)
{
	const u64 *log = (const u64 *)b->blk.rec;
	unsigned int i, n = min_t(unsigned int, b->nlog, NSL_LOG_ROOM);

	w->made = 0;
	w->last = NSL_R_NONE;
	w->open = false;
	w->bad = false;
	w->last_depth = 0;
	w->last_cpu = 0;
	w->nopen = 0;
	for (i = 0; i < n; i++) {
		unsigned int r = NSL_LOG_REGION(log[i]);
		unsigned int step = NSL_LOG_STEP(log[i]);

		if ((step == NSL_LOG_START || step == NSL_LOG_STOP ||
		     step == NSL_LOG_NEXT || step == NSL_LOG_DEV_START) &&
		    (r == NSL_R_NONE || r >= NSL_R_MAX))
			step = 0;
		switch (step) {
		case NSL_LOG_NEXT:
			/* The STOP of r, then the START of the region after. */
			nsl_walk_stop(w, r, depth);
			r = NSL_LOG_ARG(log[i]);
			if (r == NSL_R_NONE) {
				w->bad = true;
				return;
			}
			fallthrough;
		case NSL_LOG_DEV_START:
		case NSL_LOG_START:
			if (r != w->last || w->open) {
				w->made++;
				w->last = r;
				if (depth) {
					w->last_depth = w->nopen;
					w->last_cpu = NSL_LOG_CPU(log[i]);
				}
			}
			w->open = true;
			if (depth)
				w->nopen++;
			break;
		case NSL_LOG_STOP:
			nsl_walk_stop(w, r, depth);
			break;
		case NSL_LOG_GAP:
			w->made++;
			fallthrough;
		case NSL_LOG_SEAL:
			w->last = NSL_R_NONE;
			break;
		case NSL_LOG_SHARE:
			/* An open record is not SHARED: it merges once closed. */
			if (!w->open)
				w->last = NSL_R_NONE;
			break;
		case NSL_LOG_DEV:
			break;
		default:
			w->bad = true;
			return;
		}
	}
}

/*
 * Whether the replay of @b's log keeps a START of @region made now
 * within the records' room: the START merges into the last record (that
 * record is @region's and closed, and may be merged into), or the
 * records made so far leave room for one more.
 */
static bool nsl_log_fits(const struct nsl_skb_block *b, int region)
{
	const u64 *log = (const u64 *)b->blk.rec;
	unsigned int n = b->nlog;
	struct nsl_log_walk w;

	/*
	 * The log ends with a START and a STOP of @region (a TSO skb read
	 * in parts): the last record is @region's and closed, nothing came
	 * since that could keep a START from merging into it, and no START
	 * in a log made a record past the room.  No walk needed.
	 */
	if (n >= 2 && n <= NSL_LOG_ROOM &&
	    NSL_LOG_STEP(log[n - 1]) == NSL_LOG_STOP &&
	    NSL_LOG_REGION(log[n - 1]) == region &&
	    NSL_LOG_STEP(log[n - 2]) == NSL_LOG_START &&
	    NSL_LOG_REGION(log[n - 2]) == region)
		return true;
	nsl_log_walk(b, &w, false);
	if (w.bad)
		return false;
	/* Exact while no START was dropped: at most NET_SLICE_CONF made. */
	if (w.last == (unsigned int)region && !w.open)
		return w.made <= NET_SLICE_CONF;
	return w.made < NET_SLICE_CONF;
}

/*
 * Whether @b's counts (nstart, nresume, nother, nnext, open.last[])
 * agree with its count of entries: a copy made while another CPU added a
 * step (nsl_ext_copy()) may hold counts newer than the entries it
 * copied, or some newer than others.  Each whole step adds one entry and
 * moves the counts so that 2 * STARTs + others - STARTs not stopped -
 * NEXTs grows by one; a step half made (its counts first, its entry, or
 * its entry first) leaves them apart (nsl_log_next()).  The copy read
 * the count of entries first, and the entries before it are whole
 * (nsl_log_store()).  Arithmetic on the counts, not a walk of the
 * entries: a GSO segment copies a log of 40 steps.
 */
bool nsl_log_counted(const struct nsl_skb_block *b)
{
	unsigned int i, open = 0, starts = b->nstart + b->nresume;

	if (b->nlog > NSL_LOG_ROOM)
		return false;
	for (i = 0; i < NSL_R_MAX; i++)
		open += b->open.last[i];
	return open <= starts &&
	       b->nlog == 2 * starts + b->nother - open - b->nnext;
}

/*
 * Add @r, a closed record of another skb's template, to the record of the
 * same region and depth in @b: the data it measured now travels in @b's
 * skb, so its intervals are @b's too.  Without such a record, append it.
 */
static void nsl_fold_record(struct nsl_skb_block *b,
			    const struct nsl_skb_block *from,
			    const struct nsl_record *r)
{
	struct nsl_block *blk = &b->blk;
	bool same_set = blk->nevents == from->blk.nevents &&
			b->gen == from->gen;
	struct nsl_record *d;
	int i, e;

	for (i = blk->nrec - 1; i >= 0; i--) {
		d = &blk->rec[i];
		if (d->region != r->region || d->depth != r->depth ||
		    (d->flags & (NSL_RF_OPEN | NSL_RF_SHARED | NSL_RF_GAP)))
			continue;
		d->ticks += r->ticks;
		d->nmerged += r->nmerged;
		d->flags |= NSL_RF_MERGED |
			    (r->flags & (NSL_RF_INVALID | NSL_RF_MIGRATED));
		if (!same_set && blk->nevents)
			d->flags |= NSL_RF_INVALID;
		for (e = 0; same_set && e < blk->nevents; e++)
			d->count[e] += r->count[e];
		return;
	}
	if (unlikely(blk->nrec >= NET_SLICE_CONF)) {
		blk->flags |= NSL_BF_TRUNC;
		return;
	}
	d = &blk->rec[blk->nrec++];
	*d = *r;
	d->start = from->blk.tsc0 + r->start - blk->tsc0;
	if (!same_set && blk->nevents)
		d->flags |= NSL_RF_INVALID;
	nsl_merge_last(b);
}

/*
 * TCP moved all of @s's data into @d's skb and frees @s, a template
 * never emitted (__nsl_eat()): each closed record of @s that is not
 * SHARED is added to @d's (nsl_fold_record()), on records.
 */
void nsl_fold_closed(struct nsl_skb_block *d, struct nsl_skb_block *s)
{
	unsigned int i;

	nsl_records_now(s);
	nsl_records_now(d);
	for (i = 0; i < s->blk.nrec; i++) {
		const struct nsl_record *r = &s->blk.rec[i];

		/* A SHARED record is counted in another block already. */
		if (!(r->flags & (NSL_RF_OPEN | NSL_RF_SHARED)))
			nsl_fold_record(d, s, r);
	}
}

/*
 * The same in the logs, where the replay of @d's log then gives what
 * nsl_fold_closed() gives: @s's steps that made its one closed record go
 * on in @d's log, at their own times.  That is so when @s's log is
 * STARTs never stopped and then START/STOP pairs of one region, the
 * pairs on one CPU (the copies into @s: one record, nothing SHARED), and
 * @d's last record is of that region, depth and CPU, closed, and may be
 * merged into: the fold adds to it, and so does each START replayed.
 * Also when @s closed nothing: there is nothing to add.  The STARTs go
 * to nstart while it has room, then to nresume: they merge, and make no
 * record.  Else false, having changed nothing.
 */
bool nsl_log_eat(struct nsl_skb_block *d, const struct nsl_skb_block *s)
{
	const u64 *from = (const u64 *)s->blk.rec;
	unsigned int i, first, n = s->nlog, region, pairs;
	struct nsl_log_walk w;
	s64 shift;

	if (d->nlog == NSL_NOLOG || n == NSL_NOLOG || n > NSL_LOG_ROOM)
		return false;
	/* The STARTs never stopped: each of another region than the pairs'. */
	for (first = 0; first < n; first++) {
		region = NSL_LOG_REGION(from[first]);
		if (NSL_LOG_STEP(from[first]) != NSL_LOG_START ||
		    region >= NSL_R_MAX || !s->open.last[region])
			break;
	}
	if (first == n)
		return true;
	pairs = (n - first) / 2;
	region = NSL_LOG_REGION(from[first]);
	/* The replay of @s makes the pairs' record: it has room for it. */
	if ((n - first) % 2 || region == NSL_R_NONE ||
	    region >= NSL_R_MAX || s->open.last[region] ||
	    first >= NET_SLICE_CONF ||
	    (int)pairs > NET_SLICE_CONF - d->nstart +
			 NSL_LOG_RESUMES - d->nresume)
		return false;
	nsl_log_walk(d, &w, true);
	if (w.bad || w.made > NET_SLICE_CONF || w.last != region || w.open ||
	    w.last_depth != first)
		return false;
	/* Each step's time from @d's tsc0: within what an entry holds. */
	shift = s->blk.tsc0 - d->blk.tsc0;
	for (i = first; i < n; i++) {
		u64 e = from[i];
		s64 t = shift + NSL_LOG_T(e);

		if (NSL_LOG_STEP(e) != ((i - first) % 2 ? NSL_LOG_STOP :
							    NSL_LOG_START) ||
		    NSL_LOG_REGION(e) != region ||
		    NSL_LOG_CPU(e) != w.last_cpu || t < 0 || t > U32_MAX)
			return false;
	}
	for (i = first; i < n; i++) {
		u64 e = from[i];

		nsl_log_add(d, (e & ~(u64)U32_MAX) |
			       (u32)(shift + NSL_LOG_T(e)));
		if ((i - first) % 2)
			continue;
		if (d->nstart < NET_SLICE_CONF)
			d->nstart++;
		else
			d->nresume++;
	}
	return true;
}

/*
 * A START past the NET_SLICE_CONF STARTs the log counts, which the
 * replay still fits in the records (nsl_log_fits()): the count includes
 * STARTs that merged, and those cost the records no room.  It goes to
 * the log, counted in nresume, while the log has room for it and its
 * STOP.  Else false, having changed nothing.  Without it, a TSO skb
 * copied into in many parts, or read in many, left its log for records
 * halfway to the reader.
 *
 * Where the kernel's records have the room the reader replays with
 * (NSL_REPLAY_DROPS, at the default NET_SLICE_CONF), no walk is needed:
 * a START the records would drop, the replay drops too, flagging the
 * block TRUNC as the records would.  The walk read the whole log, 35
 * entries and about 700 instructions in a stream's TSO skb, at the
 * first START past the count that did not follow its own region's.
 */
static bool nsl_log_resume(struct nsl_skb_block *b, int region, u64 now)
{
	u32 t, late;

	if (b->nlog == NSL_NOLOG || b->nresume >= NSL_LOG_RESUMES ||
	    (!NSL_REPLAY_DROPS && !nsl_log_fits(b, region)))
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
