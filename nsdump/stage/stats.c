// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stage/stats.h"

void ns_stats_init(struct ns_stats *s, size_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit ? limit : NS_STATS_LIMIT;
	ns_hist_init(&s->hist);
}

void ns_stats_free(struct ns_stats *s)
{
	if (!s->n)
		return;		/* nothing added: as ns_stats_init() left it */
	free(s->v);
	ns_hist_free(&s->hist);
	ns_stats_init(s, s->limit);
}

/* Every value while they fit; past the limit the histogram answers. */
static int store(struct ns_stats *s, uint64_t value)
{
	if (s->n > s->limit) {
		free(s->v);
		s->v = NULL;
		s->stored = s->cap = 0;
		return 0;
	}
	if (s->stored == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		uint64_t *v;

		if (cap > s->limit)
			cap = s->limit;
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->stored++] = value;
	return 0;
}

int ns_stats_add(struct ns_stats *s, uint64_t value)
{
	double delta;

	s->n++;
	if (s->n == 1 || value < s->min)
		s->min = value;
	if (s->n == 1 || value > s->max)
		s->max = value;
	delta = (double)value - s->mean;
	s->mean += delta / (double)s->n;
	s->m2 += delta * ((double)value - s->mean);
	s->sorted = false;
	return ns_hist_add(&s->hist, value) | store(s, value);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Are the percentiles exact: every value stored? */
static bool exact(const struct ns_stats *s)
{
	return s->stored == s->n;
}

static void sort_stored(struct ns_stats *s)
{
	if (s->sorted)
		return;
	qsort(s->v, s->stored, sizeof(*s->v), cmp_u64);
	s->sorted = true;
}

uint64_t ns_stats_ppm(struct ns_stats *s, uint32_t ppm)
{
	size_t rank;

	if (!exact(s))
		return ns_hist_percentile(&s->hist, ppm);
	if (!s->stored)
		return 0;
	sort_stored(s);
	if (ppm > 1000000)
		ppm = 1000000;
	/* ceil(ppm * n / 10^6) in integers */
	rank = ((uint64_t)ppm * s->stored + 999999) / 1000000;
	if (rank < 1)
		rank = 1;
	return s->v[rank - 1];
}

uint64_t ns_stats_count_le(struct ns_stats *s, uint64_t value)
{
	size_t lo = 0, hi = s->stored;

	if (!exact(s))
		return ns_hist_count_le(&s->hist, value);
	sort_stored(s);
	/* the first stored value above @value */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] <= value)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t ns_stats_percentile(struct ns_stats *s, unsigned int pct)
{
	return ns_stats_ppm(s, pct > 100 ? 1000000 : pct * 10000);
}

bool ns_stats_summary(struct ns_stats *s, double scale, struct ns_summary *sum)
{
	memset(sum, 0, sizeof(*sum));
	if (!s->n)
		return false;
	sum->n = s->n;
	sum->mean = s->mean * scale;
	sum->min = (double)s->min * scale;
	sum->max = (double)s->max * scale;
	sum->p50 = (double)ns_stats_ppm(s, 500000) * scale;
	sum->p90 = (double)ns_stats_ppm(s, 900000) * scale;
	sum->p99 = (double)ns_stats_ppm(s, 990000) * scale;
	sum->p999 = (double)ns_stats_ppm(s, 999000) * scale;
	sum->cv = s->mean > 0 ? sqrt(s->m2 / (double)s->n) / s->mean : 0;
	sum->sampled = !exact(s);
	return true;
}
