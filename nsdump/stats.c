// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stats.h"

void ns_stats_init(struct ns_stats *s, size_t limit)
{
	memset(s, 0, sizeof(*s));
	s->limit = limit ? limit : NS_STATS_LIMIT;
	s->rng = 0x9E3779B97F4A7C15ull;
}

void ns_stats_free(struct ns_stats *s)
{
	free(s->v);
	ns_stats_init(s, s->limit);
}

static uint64_t next_random(struct ns_stats *s)
{
	/* xorshift64: deterministic, good enough to pick reservoir slots */
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return s->rng;
}

static int store(struct ns_stats *s, uint64_t value)
{
	if (s->stored == s->limit) {
		uint64_t slot = next_random(s) % s->n;	/* n already counts it */

		if (slot < s->limit)
			s->v[slot] = value;
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
	return store(s, value);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

uint64_t ns_stats_percentile(struct ns_stats *s, unsigned int pct)
{
	size_t rank;

	if (!s->stored)
		return 0;
	if (!s->sorted) {
		qsort(s->v, s->stored, sizeof(*s->v), cmp_u64);
		s->sorted = true;
	}
	if (pct > 100)
		pct = 100;
	/* ceil(pct * n / 100) in integers */
	rank = ((uint64_t)pct * s->stored + 99) / 100;
	if (rank < 1)
		rank = 1;
	return s->v[rank - 1];
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
	sum->p50 = (double)ns_stats_percentile(s, 50) * scale;
	sum->p99 = (double)ns_stats_percentile(s, 99) * scale;
	sum->cv = s->mean > 0 ? sqrt(s->m2 / (double)s->n) / s->mean : 0;
	sum->sampled = s->n > s->stored;
	return true;
}
