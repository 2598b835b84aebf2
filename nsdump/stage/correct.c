// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "stage/correct.h"

/*
 * The kernel appends a record at its first START, with the number of
 * records then open as its depth.  A later interval merges into the last
 * record; when TCP folds one skb's measurements into another (__nsl_eat,
 * before transmission, inside the still open write) into the record of
 * the same region and depth, or appended.  Either way a merge stays
 * within the run of its enclosing record, so the records started while
 * record @i was open are the run after it of greater depth, whichever of
 * its intervals they fall in; for a record of one interval (or a GAP,
 * whose waits nothing can start in) the time window bounds them too.
 */
bool ns_rec_inside(const struct nsl_block *b, unsigned int i, unsigned int j,
		   bool whole)
{
	const struct nsl_record *outer, *in;
	bool one_interval;

	if (j <= i || j >= b->nrec || j >= NSL_MAX_RECORDS)
		return false;
	outer = &b->rec[i];
	in = &b->rec[j];
	one_interval = outer->nmerged <= 1 || (outer->flags & NSL_RF_GAP);
	for (unsigned int k = i + 1; k <= j; k++)
		if (b->rec[k].depth <= outer->depth)
			return false;
	if (in->start < outer->start)
		return false;
	if (!one_interval)
		return true;
	if (in->start - outer->start >= outer->ticks)
		return false;
	return !whole || in->ticks <= outer->ticks - (in->start - outer->start);
}

uint32_t ns_nested_pairs(const struct nsl_block *b, unsigned int i)
{
	uint32_t k = 0;

	/*
	 * A nested record that never stopped ran its START but not
	 * necessarily its STOP inside: it is not counted, so the correction
	 * never takes away more than certainly ran.
	 */
	for (unsigned int j = i + 1; j < b->nrec && j < NSL_MAX_RECORDS; j++) {
		const struct nsl_record *in = &b->rec[j];

		/* A GAP record ran no macros: it costs nothing. */
		if ((in->flags & (NSL_RF_OPEN | NSL_RF_GAP)) ||
		    !ns_rec_inside(b, i, j, false))
			continue;
		k += in->nmerged ? in->nmerged : 1;
	}
	return k;
}

/* @raw - @cost, clamped at 0; *clamped says whether it was. */
static uint64_t subtract(uint64_t raw, uint64_t cost, bool *clamped)
{
	*clamped = cost > raw;
	return *clamped ? 0 : raw - cost;
}

void ns_correct_block(const struct ns_calib_set *cs, const struct nsl_block *b,
		      struct ns_rec_corr out[NSL_MAX_RECORDS])
{
	for (unsigned int i = 0; i < b->nrec && i < NSL_MAX_RECORDS; i++) {
		const struct nsl_record *rec = &b->rec[i];
		const struct nsl_calib *c = ns_calib_get(cs, rec->cpu);
		struct ns_rec_corr *o = &out[i];
		uint64_t intervals = rec->nmerged ? rec->nmerged : 1;
		bool clamped;

		memset(o, 0, sizeof(*o));
		o->k = ns_nested_pairs(b, i);
		o->ticks = rec->ticks;
		memcpy(o->count, rec->count, sizeof(o->count));
		if (!c || (rec->flags & (NSL_RF_OPEN | NSL_RF_GAP)))
			continue;
		o->ticks = subtract(rec->ticks,
				    intervals * c->cost[NSL_C_NSO].ticks +
				    o->k * c->cost[NSL_C_NSA].ticks,
				    &o->ticks_clamped);
		for (unsigned int e = 0; e < b->nevents && e < c->nevents; e++) {
			o->count[e] = subtract(rec->count[e],
					       intervals * c->cost[NSL_C_NSO].count[e] +
					       o->k * c->cost[NSL_C_NSA].count[e],
					       &clamped);
			if (clamped)
				o->count_clamped |= 1u << e;
		}
	}
}

uint64_t ns_block_overhead(const struct ns_calib_set *cs,
			   const struct nsl_block *b)
{
	const struct nsl_calib *init, *exit_c;
	uint64_t sum;

	init = ns_calib_get(cs, b->nrec ? b->rec[0].cpu : b->hdr.cpu);
	exit_c = ns_calib_get(cs, b->hdr.cpu);
	if (!init || !exit_c)
		return 0;
	sum = init->cost[NSL_C_NSI].ticks + exit_c->cost[NSL_C_NSE].ticks;
	for (unsigned int i = 0; i < b->nrec; i++) {
		const struct nsl_calib *c = ns_calib_get(cs, b->rec[i].cpu);

		if (b->rec[i].flags & NSL_RF_OPEN)
			continue;
		sum += (uint64_t)(b->rec[i].nmerged ? b->rec[i].nmerged : 1) *
		       c->cost[NSL_C_NSA].ticks;
	}
	return sum;
}

/* The correct stage of the pipeline: once per item. */
void ns_correct_item(const struct ns_calib_set *cs, const struct ns_item *it,
		     struct ns_citem *ci)
{
	ci->it = it;
	ci->join = NULL;
	ci->overhead = 0;
	if (it->type != NS_ITEM_BLOCK)
		return;
	ns_correct_block(cs, &it->block, ci->corr);
	ci->overhead = ns_block_overhead(cs, &it->block);
}
