// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "evorder.h"

void ns_evorder_init(struct ns_evorder *q, uint64_t horizon_ticks)
{
	memset(q, 0, sizeof(*q));
	q->horizon = horizon_ticks;
}

void ns_evorder_free(struct ns_evorder *q)
{
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

static bool before(const struct ns_evorder_ent *a,
		   const struct ns_evorder_ent *b)
{
	return a->ev.tsc < b->ev.tsc ||
	       (a->ev.tsc == b->ev.tsc && a->seq < b->seq);
}

static void swap(struct ns_evorder_ent *a, struct ns_evorder_ent *b)
{
	struct ns_evorder_ent t = *a;

	*a = *b;
	*b = t;
}

bool ns_evorder_push(struct ns_evorder *q, const struct nsl_event_rec *ev)
{
	size_t i;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 256;
		struct ns_evorder_ent *p;

		if (cap > NS_EVORDER_MAX)
			cap = NS_EVORDER_MAX;
		if (cap <= q->n)
			return false;
		p = realloc(q->heap, cap * sizeof(*p));
		if (!p)
			return false;
		q->heap = p;
		q->cap = cap;
	}
	i = q->n++;
	q->heap[i].ev = *ev;
	q->heap[i].seq = q->seq++;
	while (i && before(&q->heap[i], &q->heap[(i - 1) / 2])) {
		swap(&q->heap[i], &q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	if (ev->tsc > q->newest)
		q->newest = ev->tsc;
	return true;
}

void ns_evorder_out(struct ns_evorder *q, uint64_t tsc)
{
	if (q->out_any && tsc < q->out_tsc)
		q->late++;
	else
		q->out_tsc = tsc;
	q->out_any = true;
}

bool ns_evorder_pop(struct ns_evorder *q, bool flush,
		    struct nsl_event_rec *ev)
{
	size_t i = 0;

	if (!q->n)
		return false;
	/* Due: a newer record came a horizon later, or the queue is full. */
	if (!flush && q->n < NS_EVORDER_MAX &&
	    q->newest - q->heap[0].ev.tsc < q->horizon)
		return false;
	*ev = q->heap[0].ev;
	q->heap[0] = q->heap[--q->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->n && before(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->n && before(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		swap(&q->heap[i], &q->heap[m]);
		i = m;
	}
	ns_evorder_out(q, ev->tsc);
	return true;
}
