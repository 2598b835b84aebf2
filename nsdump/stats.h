/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One accumulator per series of values (TSC ticks of one region, one per
 * packet): n, mean, min, max, coefficient of variation, and exact
 * percentiles, which need every value: they are stored and sorted at the
 * end.
 *
 * Memory is bounded: past @limit values (NS_STATS_LIMIT by default, 8 MiB
 * per series) the stored set becomes a uniform reservoir sample (algorithm
 * R, fixed seed) and the percentiles are estimates; n, mean, min, max and
 * CV stay exact.  ns_summary.sampled says which.
 */
#ifndef _NS_STATS_H
#define _NS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_STATS_LIMIT	(1u << 20)

struct ns_stats {
	uint64_t *v;		/* stored values (all of them until limit) */
	size_t stored, cap, limit;
	uint64_t n;		/* values added */
	uint64_t min, max;
	double mean, m2;	/* Welford: running mean, sum of squares */
	uint64_t rng;		/* reservoir sampling state */
	bool sorted;
};

struct ns_summary {
	uint64_t n;
	double mean, p50, p99, min, max;
	double cv;		/* population stddev / mean; 0 if mean is 0 */
	bool sampled;		/* p50/p99 from a reservoir, not exact */
};

void ns_stats_init(struct ns_stats *s, size_t limit);
void ns_stats_free(struct ns_stats *s);
/* Returns -1 if memory ran out (the value is still counted in n/mean). */
int ns_stats_add(struct ns_stats *s, uint64_t value);

/*
 * Nearest-rank percentile: the smallest stored value such that at least
 * pct% of the values are <= it, i.e. sorted[ceil(pct * n / 100) - 1]
 * (rank at least 1).  Sorts on first use; 0 if empty.
 */
uint64_t ns_stats_percentile(struct ns_stats *s, unsigned int pct);

/* Fill @sum (values scaled by @scale, CV unscaled); false if empty. */
bool ns_stats_summary(struct ns_stats *s, double scale, struct ns_summary *sum);

#endif /* _NS_STATS_H */
