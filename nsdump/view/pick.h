/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which blocks a drawing shows (the HTML waterfall): a capture may hold
 * millions and a page can draw a few hundred.  The first @first blocks in
 * the order they came, and the @slowest of all the others by span (NSI to
 * the last STOP), slowest first; a copy of each, with its corrections, in
 * memory fixed at the start.
 */
#ifndef _NS_PICK_H
#define _NS_PICK_H

#include <stdbool.h>
#include <stdint.h>
#include "netslice.h"
#include "stage/correct.h"

struct ns_picked {
	uint64_t ordinal;	/* among the blocks offered, from 0 */
	uint64_t span;		/* ticks, the slowest's key */
	struct nsl_block b;
	struct ns_rec_corr corr[NSL_MAX_RECORDS];
};

struct ns_pick {
	unsigned int first_max, slow_max;
	struct ns_picked *first;	/* in order */
	struct ns_picked *slow;		/* a min-heap by span until sorted */
	unsigned int nfirst, nslow;
	uint64_t offered;
};

/* 0, or -1 if memory ran out. */
int ns_pick_init(struct ns_pick *p, unsigned int first, unsigned int slowest);
void ns_pick_free(struct ns_pick *p);
void ns_pick_offer(struct ns_pick *p, const struct nsl_block *b,
		   const struct ns_rec_corr *corr, uint64_t span);
/* The slowest sorted: span descending, the earlier first on a tie. */
void ns_pick_finish(struct ns_pick *p);

#endif /* _NS_PICK_H */
