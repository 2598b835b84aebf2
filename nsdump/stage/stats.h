/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One accumulator per series of values (TSC ticks of one region, one per
 * packet): n, mean, min, max, coefficient of variation, and percentiles.
 *
 * Percentiles are exact while every value is stored (up to @limit,
 * NS_STATS_LIMIT by default: 512 KiB per series), then read from a
 * log-linear histogram (hist.h) that every value also goes into: within
 * NS_HIST_REL_ERROR (0.098 %) of the true percentile, in bounded memory.
 * n, mean, min, max and CV stay exact.  ns_summary.sampled says which.
 */
#ifndef _NS_STATS_H
#define _NS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stage/hist.h"

#define NS_STATS_LIMIT	(1u << 16)

struct ns_stats {
	uint64_t *v;		/* every value while n <= limit; then NULL */
	size_t stored, cap, limit;
	struct ns_hist hist;	/* every value */
	uint64_t n;		/* values added */
	uint64_t min, max;
	double mean, m2;	/* Welford: running mean, sum of squares */
	bool sorted;
};

struct ns_summary {
	uint64_t n;
	double mean, p50, p90, p99, p999, min, max;
	double cv;		/* population stddev / mean; 0 if mean is 0 */
	bool sampled;		/* percentiles from the histogram, not exact */
};

void ns_stats_init(struct ns_stats *s, size_t limit);
void ns_stats_free(struct ns_stats *s);
/* Returns -1 if memory ran out (the value is still counted in n/mean). */
int ns_stats_add(struct ns_stats *s, uint64_t value);

/*
 * Nearest-rank percentile: the smallest value such that at least @ppm
 * per million of the values are <= it, i.e. sorted[ceil(ppm * n / 10^6)
 * - 1] (rank at least 1); from the histogram past the limit.  Sorts on
 * first use; 0 if empty.
 */
uint64_t ns_stats_ppm(struct ns_stats *s, uint32_t ppm);
/* The same in percent: 50, 99. */
uint64_t ns_stats_percentile(struct ns_stats *s, unsigned int pct);

/*
 * Values <= @value: exact while every value is stored (sorts on first
 * use), else from the histogram (ns_hist_count_le()).
 */
uint64_t ns_stats_count_le(struct ns_stats *s, uint64_t value);

/* Fill @sum (values scaled by @scale, CV unscaled); false if empty. */
bool ns_stats_summary(struct ns_stats *s, double scale, struct ns_summary *sum);

#endif /* _NS_STATS_H */
