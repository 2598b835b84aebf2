// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "lib/devname.h"
#include "stage/accum.h"

void ns_acc_init(struct ns_acc *a, uint32_t tsc_khz)
{
	memset(a, 0, sizeof(*a));
	a->tsc_khz = tsc_khz;
	a->ev_cycles = a->ev_instr = -1;
	for (int i = 0; i < NS_R_MAX; i++) {
		ns_stats_init(&a->region[i].ticks, 0);
		for (int e = 0; e < NSL_MAX_EVENTS; e++)
			ns_stats_init(&a->region[i].ev[e], NS_EV_STATS_LIMIT);
	}
}

void ns_acc_free(struct ns_acc *a)
{
	for (int i = 0; i < NS_R_MAX; i++) {
		ns_stats_free(&a->region[i].ticks);
		for (int e = 0; e < NSL_MAX_EVENTS; e++)
			ns_stats_free(&a->region[i].ev[e]);
	}
}

void ns_acc_set_counters(struct ns_acc *a, const struct ns_counters *sel)
{
	a->ev_cycles = a->ev_instr = -1;
	for (unsigned int e = 0; e < NSL_MAX_EVENTS; e++) {
		a->event_name[e][0] = 0;
		if (e >= sel->n)
			continue;
		snprintf(a->event_name[e], sizeof(a->event_name[e]), "%s",
			 sel->name[e]);
		switch (ns_counter_kind(&sel->ev.ev[e], sel->canon[e])) {
		case NS_COUNTER_CYCLES:
			if (a->ev_cycles < 0)
				a->ev_cycles = e;
			break;
		case NS_COUNTER_INSTRUCTIONS:
			if (a->ev_instr < 0)
				a->ev_instr = e;
			break;
		case NS_COUNTER_OTHER:
			break;
		}
	}
}

/*
 * A record's own time: its (corrected) duration less that of the records
 * directly inside it (one level deeper, ns_rec_inside() whole), so that
 * the wait in sndq is not write's and the qdisc's is not link's.
 */
static uint64_t self_ticks(const struct nsl_block *b,
			   const struct ns_rec_corr *corr, unsigned int i)
{
	const struct nsl_record *p = &b->rec[i];
	uint64_t in = 0;

	for (unsigned int j = i + 1; j < b->nrec; j++) {
		const struct nsl_record *c = &b->rec[j];

		if (c->depth == p->depth + 1 && !(c->flags & NSL_RF_OPEN) &&
		    ns_rec_inside(b, i, j, true))
			in += corr[j].ticks;
	}
	return in < corr[i].ticks ? corr[i].ticks - in : 0;
}

/* One block's sums per region, before they go into the statistics. */
struct block_sums {
	uint64_t sum[NS_R_MAX], raw[NS_R_MAX], self[NS_R_MAX];
	uint64_t ev[NS_R_MAX][NSL_MAX_EVENTS];
	bool seen[NS_R_MAX], open[NS_R_MAX], ev_bad[NS_R_MAX];
};

/* What a record gave its region's sums. */
enum rec_share {
	REC_SHARED,	/* nothing: a copy, measured in another block */
	REC_OPEN,	/* its region has no value in this block */
	REC_INVALID,	/* its duration, no counter values */
	REC_WHOLE,	/* its duration and counter values */
};

/* Adds record @i of @b to @s (zeroed by the caller before the first). */
static enum rec_share add_record(const struct nsl_block *b,
				 const struct ns_rec_corr *corr,
				 unsigned int i, struct block_sums *s)
{
	const struct nsl_record *rec = &b->rec[i];
	unsigned int id = rec->region;

	if (rec->flags & NSL_RF_SHARED)
		return REC_SHARED;
	s->seen[id] = true;
	if (rec->flags & NSL_RF_OPEN) {
		s->open[id] = true;
		return REC_OPEN;
	}
	s->sum[id] += corr[i].ticks;
	s->raw[id] += rec->ticks;
	s->self[id] += self_ticks(b, corr, i);
	if (rec->flags & NSL_RF_INVALID) {
		s->ev_bad[id] = true;
		return REC_INVALID;
	}
	for (unsigned int e = 0; e < b->nevents; e++)
		s->ev[id][e] += corr[i].count[e];
	return REC_WHOLE;
}

/* The block's sums, and the table's notes counted record by record. */
static void sum_records(struct ns_acc *a, const struct nsl_block *b,
			const struct ns_rec_corr *corr, struct block_sums *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned int i = 0; i < b->nrec; i++) {
		unsigned int id = b->rec[i].region;
		enum rec_share share = add_record(b, corr, i, s);

		a->region[id].records++;
		switch (share) {
		case REC_SHARED:
			/* One measurement: counted where it is not a copy. */
			a->region[id].shared++;
			a->shared++;
			break;
		case REC_OPEN:
			a->region[id].open++;
			break;
		case REC_INVALID:
			a->clamped_ticks += corr[i].ticks_clamped;
			if (b->nevents) {
				a->region[id].invalid++;
				a->invalid++;
			}
			break;
		case REC_WHOLE:
			a->clamped_ticks += corr[i].ticks_clamped;
			for (unsigned int e = 0; e < b->nevents; e++)
				a->clamped_counts +=
					!!(corr[i].count_clamped & (1u << e));
			break;
		}
	}
}

/*
 * Whether @s has a value for region @id: a record not a copy, none open,
 * and not the rx-link a GRO merge cut short (ABSORBED, counted apart).
 */
static bool region_valued(const struct block_sums *s, unsigned int id,
			  bool absorbed)
{
	return s->seen[id] && !s->open[id] &&
	       !(absorbed && id == NSL_R_RX_LINK);
}

static void by_add_sums(struct ns_acc *a, uint64_t key,
			const struct nsl_block *b, const struct block_sums *s)
{
	for (unsigned int id = 0; id < NS_R_MAX; id++)
		if (region_valued(s, id, b->flags & NSL_BF_ABSORBED))
			ns_by_add(a->by, key, id, s->sum[id]);
}

/* The --by dev key of the device record @i belongs to. */
static uint64_t record_dev_key(const struct nsl_block *b, unsigned int i)
{
	const struct nsl_dev *d = &b->dev[ns_dev_of_record(b, i)];

	return ns_dev_key(d->ifindex, d->netns);
}

/*
 * --by: the block's value per region under its key.  Under --by dev a
 * block that names devices goes under each device it crossed with that
 * device's own records only (devname.h's rule, and only the regions of a
 * device: link, qdisc, nic, rx-nic, rx-link, backlog -- a send's write
 * or a receive's copy is no device's time), so that a device's link and
 * qdisc are its own; a device crossed twice (lo, out and back in) is
 * one key, its records summed as a block's are.
 */
static void by_block(struct ns_acc *a, const struct nsl_block *b,
		     const struct ns_rec_corr *corr,
		     const struct block_sums *whole)
{
	struct block_sums s;

	if (a->by->what != NS_BY_DEV || !b->ndev) {
		by_add_sums(a, ns_by_key_of(a->by, b), b, whole);
		return;
	}
	for (unsigned int d = 0; d < b->ndev; d++) {
		uint64_t key = ns_dev_key(b->dev[d].ifindex, b->dev[d].netns);
		bool again = false;

		for (unsigned int e = 0; e < d; e++)
			again |= ns_dev_key(b->dev[e].ifindex,
					    b->dev[e].netns) == key;
		if (again)
			continue;
		memset(&s, 0, sizeof(s));
		for (unsigned int i = 0; i < b->nrec; i++)
			if (ns_region_of_device(b->rec[i].region) &&
			    record_dev_key(b, i) == key)
				add_record(b, corr, i, &s);
		by_add_sums(a, key, b, &s);
	}
}

/*
 * A packet's value for a region is the sum of that region's records in
 * its block (tcp: copy in sendmsg + header build in xmit), each corrected
 * on its own.  A region with an OPEN record gives no value for that
 * block: its sum would be short; one with an INVALID record gives its
 * duration but no counter values.  The rx-link of a frame GRO merged
 * into another skb (ABSORBED) ends at the merge, not where IP takes the
 * packet: another interval, counted apart (merged), not a short rx-link.
 */
static void accumulate(struct ns_acc *a, const struct nsl_block *b,
		       const struct ns_rec_corr *corr)
{
	bool absorbed = b->flags & NSL_BF_ABSORBED;
	struct block_sums s;

	sum_records(a, b, corr, &s);
	for (unsigned int id = 0; id < NS_R_MAX; id++) {
		struct ns_region_acc *acc = &a->region[id];

		if (!region_valued(&s, id, absorbed)) {
			/* of those, only a merged rx-link was measured whole */
			acc->merged += s.seen[id] && !s.open[id];
			continue;
		}
		ns_stats_add(&acc->ticks, s.sum[id]);
		acc->raw_sum += (double)s.raw[id];
		acc->self_sum += (double)s.self[id];
		if (s.ev_bad[id])
			continue;
		for (unsigned int e = 0; e < b->nevents; e++) {
			ns_stats_add(&acc->ev[e], s.ev[id][e]);
			acc->ev_sum[e] += (double)s.ev[id][e];
			acc->ev_n[e]++;
		}
	}
	if (a->by)
		by_block(a, b, corr, &s);
}

static void block(struct ns_acc *a, const struct ns_citem *ci)
{
	const struct nsl_block *b = &ci->it->block;

	if (!a->have_t0) {
		a->t0 = b->tsc0;
		a->have_t0 = true;
	}
	if (b->nevents > a->nevents)
		a->nevents = b->nevents;
	a->blocks++;
	a->absorbed += !!(b->flags & NSL_BF_ABSORBED);
	a->coalesced += !!(b->flags & NSL_BF_COALESCED);
	if (a->counts_only)
		return;
	accumulate(a, b, ci->corr);
	if (a->rtt)
		ns_rtt_block(a->rtt, b, ci->overhead);
}

void ns_acc_item(struct ns_acc *a, const struct ns_citem *ci)
{
	const struct ns_item *it = ci->it;

	switch (it->type) {
	case NS_ITEM_BLOCK:
		block(a, ci);
		break;
	case NS_ITEM_LOSS:
		a->lost += it->loss.lost;
		a->loss_items++;
		if (a->rtt)
			ns_rtt_loss(a->rtt, &it->loss);
		break;
	case NS_ITEM_EVENT:
		a->event_recs++;
		if (a->mag)
			ns_magnet_account(a->mag, &it->event);
		break;
	case NS_ITEM_SYSINFO:
		a->sysinfos++;
		ns_clock_from_sysinfo(&a->clock, &it->sysinfo);
		break;
	case NS_ITEM_SKIPPED:
		break;
	}
}

void ns_acc_run(struct ns_acc *a, const struct ns_run *r)
{
	if (r->blocks && !a->have_t0) {
		a->t0 = r->tsc0;
		a->have_t0 = true;
	}
	if (r->nevents > a->nevents)
		a->nevents = r->nevents;
	a->blocks += r->blocks;
	a->absorbed += r->absorbed;
	a->coalesced += r->coalesced;
	a->lost += r->lost;
	a->loss_items += r->loss_items;
}

void ns_acc_finish(struct ns_acc *a)
{
	if (a->rtt)
		ns_rtt_finish(a->rtt);
}

bool ns_acc_corrected(const struct ns_acc *a)
{
	return ns_calib_get(a->calib, 0) != NULL;
}

bool ns_acc_has_ipc(const struct ns_acc *a)
{
	return a->ev_cycles >= 0 && a->ev_instr >= 0 &&
	       (unsigned int)a->ev_cycles < a->nevents &&
	       (unsigned int)a->ev_instr < a->nevents;
}

double ns_acc_ipc(const struct ns_acc *a, unsigned int region)
{
	const struct ns_region_acc *acc = &a->region[region];

	if (!ns_acc_has_ipc(a) ||
	    !acc->ev_n[a->ev_cycles] || acc->ev_sum[a->ev_cycles] <= 0)
		return -1;
	return acc->ev_sum[a->ev_instr] / acc->ev_sum[a->ev_cycles];
}

void ns_acc_correction(const struct ns_acc *a, char *buf, size_t len)
{
	char taus[128];

	if (!ns_acc_corrected(a)) {
		snprintf(buf, len, "RAW values, not corrected for macro overhead");
		return;
	}
	ns_calib_summary(a->calib, taus, sizeof(taus));
	snprintf(buf, len, "corrected for macro overhead (%s)", taus);
}

double ns_acc_us(const struct ns_acc *a, uint64_t ticks)
{
	return (double)ticks * 1000.0 / a->tsc_khz;
}

double ns_acc_time_us(const struct ns_acc *a, const struct nsl_block *b)
{
	/* blocks leave per-CPU rings out of order: times may be negative */
	return (double)(int64_t)(b->tsc0 - a->t0) * 1000.0 / a->tsc_khz;
}

bool ns_acc_summary(struct ns_acc *a, unsigned int region,
		    struct ns_summary *s)
{
	return ns_stats_summary(&a->region[region].ticks,
				1000.0 / a->tsc_khz, s);
}

const char *ns_acc_event_label(const struct ns_acc *a, unsigned int e,
			       char *buf, size_t len)
{
	if (a->event_name[e][0])
		return a->event_name[e];
	snprintf(buf, len, "ev%u", e);
	return buf;
}
