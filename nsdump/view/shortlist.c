// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "view/shortlist.h"

int ns_shortlist_init(struct ns_shortlist *p, unsigned int first,
		      unsigned int slowest)
{
	memset(p, 0, sizeof(*p));
	p->first_max = first;
	p->slow_max = slowest;
	p->first = calloc(first ? first : 1, sizeof(*p->first));
	p->slow = calloc(slowest ? slowest : 1, sizeof(*p->slow));
	if (p->first && p->slow)
		return 0;
	ns_shortlist_free(p);
	return -1;
}

void ns_shortlist_free(struct ns_shortlist *p)
{
	free(p->first);
	free(p->slow);
	p->first = p->slow = NULL;
	p->nfirst = p->nslow = 0;
}

/* Is @a the faster of the two (the one to let go first)? */
static bool faster(const struct ns_listed *a, const struct ns_listed *b)
{
	if (a->span != b->span)
		return a->span < b->span;
	return a->ordinal > b->ordinal;	/* on a tie the earlier stays */
}

static void swap(struct ns_listed *a, struct ns_listed *b)
{
	struct ns_listed t = *a;

	*a = *b;
	*b = t;
}

static void sift_up(struct ns_listed *h, unsigned int i)
{
	while (i && faster(&h[i], &h[(i - 1) / 2])) {
		swap(&h[i], &h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct ns_listed *h, unsigned int n, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && faster(&h[l], &h[m]))
			m = l;
		if (r < n && faster(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		swap(&h[i], &h[m]);
		i = m;
	}
}

static void fill(struct ns_listed *to, uint64_t ordinal,
		 const struct nsl_block *b, const struct ns_rec_corr *corr,
		 uint64_t span)
{
	to->ordinal = ordinal;
	to->span = span;
	to->b = *b;
	memcpy(to->corr, corr, sizeof(to->corr));
}

void ns_shortlist_offer(struct ns_shortlist *p, const struct nsl_block *b,
			const struct ns_rec_corr *corr, uint64_t span)
{
	uint64_t ordinal = p->offered++;
	struct ns_listed cand;

	if (p->nfirst < p->first_max) {
		fill(&p->first[p->nfirst++], ordinal, b, corr, span);
		return;
	}
	if (!p->slow_max)
		return;
	fill(&cand, ordinal, b, corr, span);
	if (p->nslow < p->slow_max) {
		p->slow[p->nslow] = cand;
		sift_up(p->slow, p->nslow++);
	} else if (faster(&p->slow[0], &cand)) {
		p->slow[0] = cand;
		sift_down(p->slow, p->nslow, 0);
	}
}

static int slowest_first(const void *x, const void *y)
{
	const struct ns_listed *a = x, *b = y;

	return faster(a, b) ? 1 : faster(b, a) ? -1 : 0;
}

void ns_shortlist_finish(struct ns_shortlist *p)
{
	qsort(p->slow, p->nslow, sizeof(*p->slow), slowest_first);
}
