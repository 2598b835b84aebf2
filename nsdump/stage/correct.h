/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The correct stage of nsdump's pipeline (stage/pipeline.h): measured
 * values less the profiler's own cost (source/calib.h), NetSlice
 * section 3:
 *
 *   a leaf region          T = T' - tau_o            N_e = N'_e - n(o,e)
 *   a region enclosing K   T = T' - tau_o - K tau_b  N_e = N'_e - n(o,e)
 *   START/STOP pairs                                        - K n(b,e)
 *
 * tau_o is the empty START..STOP as recorded (cost[NSL_C_NSO]), tau_b what
 * a START/STOP pair adds to a region around it (cost[NSL_C_NSA]).  K comes
 * from the block itself: the records that started while the record was
 * open, at a greater depth (ns_rec_inside()), each counted nmerged times.
 * A record of nmerged intervals carries nmerged tau_o.  The calibration
 * used is that of the CPU the record started on.  A value the correction
 * would take below zero is clamped to 0 and counted.
 */
#ifndef _NS_CORRECT_H
#define _NS_CORRECT_H

#include <stdbool.h>
#include <stdint.h>
#include "netslice.h"
#include "source/calib.h"
#include "source/decode.h"

struct ns_rec_corr {
	uint64_t ticks;			/* corrected (raw if no calibration) */
	uint64_t count[NSL_MAX_EVENTS];
	uint32_t k;			/* START/STOP pairs nested inside */
	bool ticks_clamped;
	uint8_t count_clamped;		/* bit e: count[e] clamped */
};

/*
 * Did record @j of @b start while record @i was open, at a greater depth
 * (and, @whole, end inside it too, where that can be told)?  A MERGED
 * record's intervals are not contiguous: not start + ticks but the
 * records' order says what ran inside it.
 */
bool ns_rec_inside(const struct nsl_block *b, unsigned int i, unsigned int j,
		   bool whole);
/* Pairs nested inside record @i of @b (K of the formulas). */
uint32_t ns_nested_pairs(const struct nsl_block *b, unsigned int i);

/*
 * Correct every record of @b (OPEN ones are left as they are) into @out;
 * @cs NULL or empty: raw values, K still computed.
 */
void ns_correct_block(const struct ns_calib_set *cs, const struct nsl_block *b,
		      struct ns_rec_corr out[NSL_MAX_RECORDS]);

/* Overhead in ticks the macros of @b add to a round trip around it. */
uint64_t ns_block_overhead(const struct ns_calib_set *cs,
			   const struct nsl_block *b);

/*
 * An item on its way, with what the calibration says of it, worked out
 * once here so that no later stage goes back to the calibration.
 */
struct ns_joined;

struct ns_citem {
	const struct ns_item *it;
	/* a block of two hosts' (stage/join.h), corrected already; or NULL */
	const struct ns_joined *join;
	struct ns_rec_corr corr[NSL_MAX_RECORDS];	/* blocks: per record */
	uint64_t overhead;	/* blocks: ns_block_overhead(), for --rtt */
};

/* @cs NULL or empty: raw values (K still computed), overhead 0. */
void ns_correct_item(const struct ns_calib_set *cs, const struct ns_item *it,
		     struct ns_citem *ci);

#endif /* _NS_CORRECT_H */
