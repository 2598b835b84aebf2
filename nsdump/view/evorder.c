// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "view/evorder.h"

void ns_evorder_init(struct ns_evorder *q, uint64_t horizon_ticks)
{
	memset(q, 0, sizeof(*q));
	q->horizon = horizon_ticks;
}

void ns_evorder_free(struct ns_evorder *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->heap[i].text);
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

static bool before(const struct ns_evorder_ent *a,
		   const struct ns_evorder_ent *b)
{
	return a->tsc < b->tsc || (a->tsc == b->tsc && a->seq < b->seq);
}

static void swap(struct ns_evorder_ent *a, struct ns_evorder_ent *b)
{
	struct ns_evorder_ent t = *a;

	*a = *b;
	*b = t;
}

bool ns_evorder_push(struct ns_evorder *q, const struct ns_evorder_ent *line)
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
	q->heap[i] = *line;
	q->heap[i].seq = q->seq++;
	q->bytes += line->len;
	while (i && before(&q->heap[i], &q->heap[(i - 1) / 2])) {
		swap(&q->heap[i], &q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	if (line->tsc > q->newest)
		q->newest = line->tsc;
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
		    struct ns_evorder_ent *line)
{
	size_t i = 0;

	if (!q->n)
		return false;
	/* Due: a newer line came a horizon later, or the queue is full. */
	if (!flush && q->n < NS_EVORDER_MAX && q->bytes <= NS_EVORDER_BYTES &&
	    q->newest - q->heap[0].tsc < q->horizon)
		return false;
	*line = q->heap[0];
	q->bytes -= line->len;
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
	ns_evorder_out(q, line->tsc);
	return true;
}
