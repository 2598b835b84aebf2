/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shortlist of blocks a drawing shows (the HTML waterfall): a
 * capture may hold millions and a page can draw a few hundred.  The
 * first @first blocks in the order they came, and the @slowest of all the
 * others by span (NSI to the last STOP), slowest first; a copy of each,
 * with its corrections, in memory fixed at the start.
 */
#ifndef _NS_SHORTLIST_H
#define _NS_SHORTLIST_H

#include <stdbool.h>
#include <stdint.h>
#include "netslice.h"
#include "stage/correct.h"

struct ns_listed {
	uint64_t ordinal;	/* among the blocks offered, from 0 */
	uint64_t span;		/* ticks, the slowest's key */
	struct nsl_block b;
	struct ns_rec_corr corr[NSL_MAX_RECORDS];
};

struct ns_shortlist {
	unsigned int first_max, slow_max;
	struct ns_listed *first;	/* in order */
	struct ns_listed *slow;	/* a min-heap by span until sorted */
	unsigned int nfirst, nslow;
	uint64_t offered;
};

/* 0, or -1 if memory ran out. */
int ns_shortlist_init(struct ns_shortlist *p, unsigned int first,
		      unsigned int slowest);
void ns_shortlist_free(struct ns_shortlist *p);
void ns_shortlist_offer(struct ns_shortlist *p, const struct nsl_block *b,
			const struct ns_rec_corr *corr, uint64_t span);
/* The slowest sorted: span descending, the earlier first on a tie. */
void ns_shortlist_finish(struct ns_shortlist *p);

#endif /* _NS_SHORTLIST_H */
