/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event records in time order across CPUs (nsdump -M).  Each CPU's ring
 * delivers its records in order, but a read() takes the rings one after
 * the other, so the merged stream is ordered per CPU only.  The queue
 * holds each record until one at least `horizon` ticks newer has arrived
 * (or the queue is full, or the caller flushes: at idle, at the end),
 * then hands them out oldest first.  A record that arrives later than
 * that, older than one already handed out, is handed out at once and
 * counted as late: never dropped, never silently out of order.
 */
#ifndef _NS_EVORDER_H
#define _NS_EVORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

#define NS_EVORDER_MAX	(1u << 18)	/* records held at most */

struct ns_evorder_ent {
	struct nsl_event_rec ev;
	uint64_t seq;		/* arrival: equal tsc keep arrival order */
};

struct ns_evorder {
	struct ns_evorder_ent *heap;	/* min-heap on (tsc, seq) */
	size_t n, cap;
	uint64_t horizon;	/* ticks */
	uint64_t newest;	/* largest tsc that arrived */
	uint64_t out_tsc;	/* tsc of the last record handed out */
	bool out_any;
	uint64_t seq;
	uint64_t late;		/* handed out older than out_tsc */
};

void ns_evorder_init(struct ns_evorder *q, uint64_t horizon_ticks);
void ns_evorder_free(struct ns_evorder *q);
/* Queue a copy of @ev; false without memory (hand it out directly). */
bool ns_evorder_push(struct ns_evorder *q, const struct nsl_event_rec *ev);
/*
 * The oldest record into @ev if it is due (@flush: whatever is held);
 * false when none is.
 */
bool ns_evorder_pop(struct ns_evorder *q, bool flush,
		    struct nsl_event_rec *ev);
/* Account a record handed out without the queue. */
void ns_evorder_out(struct ns_evorder *q, uint64_t tsc);

#endif /* _NS_EVORDER_H */
