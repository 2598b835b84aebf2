/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Report lines in time order across CPUs.  Each CPU's ring delivers its
 * items in order, but a read() takes the rings one after the other, and
 * a block reaches its ring when its skb is freed, long after the tsc0
 * it is stamped with: the merged stream is ordered per CPU at best.  The
 * queue holds each line (a block's, an event record's, a loss marker's)
 * until one at least `horizon` ticks newer has arrived (or the queue is
 * full, or the caller flushes: at idle, at the end), then hands them out
 * oldest first.  A line that arrives later than that, older than one
 * already handed out, is handed out at once and counted as late: never
 * dropped, never silently out of order.
 */
#ifndef _NS_EVORDER_H
#define _NS_EVORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_EVORDER_MAX		(1u << 18)	/* lines held at most */
#define NS_EVORDER_BYTES	(64u << 20)	/* text held at most */

struct ns_evorder_ent {
	uint64_t tsc;		/* the order */
	uint64_t seq;		/* arrival: equal tsc keep arrival order */
	int64_t wall_ns;	/* its time stamp, ns since the epoch */
	bool stamped;		/* a packet or event line: stamp it */
	char *text;		/* malloc'd; the queue's while queued */
	size_t len;
};

struct ns_evorder {
	struct ns_evorder_ent *heap;	/* min-heap on (tsc, seq) */
	size_t n, cap;
	size_t bytes;		/* text held */
	uint64_t horizon;	/* ticks */
	uint64_t newest;	/* largest tsc that arrived */
	uint64_t out_tsc;	/* tsc of the last line handed out */
	bool out_any;
	uint64_t seq;
	uint64_t late;		/* handed out older than out_tsc */
};

void ns_evorder_init(struct ns_evorder *q, uint64_t horizon_ticks);
/* Frees the lines still held. */
void ns_evorder_free(struct ns_evorder *q);
/*
 * Queue @line (its text becomes the queue's; seq is set here); false
 * without memory: the caller keeps the text and hands the line out.
 */
bool ns_evorder_push(struct ns_evorder *q, const struct ns_evorder_ent *line);
/*
 * The oldest line into @line if it is due (@flush: whatever is held);
 * false when none is.  Its text is the caller's to free.
 */
bool ns_evorder_pop(struct ns_evorder *q, bool flush,
		    struct ns_evorder_ent *line);
/* Account a line handed out without the queue. */
void ns_evorder_out(struct ns_evorder *q, uint64_t tsc);

#endif /* _NS_EVORDER_H */
