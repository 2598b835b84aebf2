/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A log-linear histogram of u64 values, HdrHistogram's bucketing (Gil
 * Tene's scheme, written here for nsdump's u64 ticks): values below 2^k
 * (k = NS_HIST_BITS) each have a counter of their own; above, the range
 * [2^(k-1+b), 2^(k+b)) of bucket b is cut into 2^(k-1) counters of width
 * 2^b.  So a value v is kept as the lowest value of its counter, v' with
 *
 *     v - 2^-(k-1) v  <  v'  <=  v       (relative error below 2^-(k-1))
 *
 * and a percentile read from the histogram is within that bound of the
 * true one.  k = 11: exact below 2048 ticks, within 0.098 % above.
 * Memory is bounded: at most 64 - k + 1 buckets of 2^(k-1) counters,
 * each allocated when a value first falls in it (8 KiB), whatever the
 * number of values.
 */
#ifndef _NS_HIST_H
#define _NS_HIST_H

#include <stdbool.h>
#include <stdint.h>

#define NS_HIST_BITS		11
#define NS_HIST_SUB		(1u << NS_HIST_BITS)		/* bucket 0 */
#define NS_HIST_HALF		(NS_HIST_SUB / 2)		/* the others */
#define NS_HIST_BUCKETS		(64 - NS_HIST_BITS + 1)
/* The bound above, as a fraction of the value. */
#define NS_HIST_REL_ERROR	(1.0 / NS_HIST_HALF)

struct ns_hist {
	uint64_t *bucket[NS_HIST_BUCKETS];	/* NULL until a value falls in */
	uint64_t n;
	uint64_t min, max;	/* exact */
	bool oom;		/* a value could not be counted */
};

void ns_hist_init(struct ns_hist *h);
void ns_hist_free(struct ns_hist *h);
/* -1 if memory ran out (the value is then in n, min, max only). */
int ns_hist_add(struct ns_hist *h, uint64_t v);
/*
 * Nearest rank, as ns_stats_percentile(): the value of rank
 * ceil(@ppm * n / 10^6) (at least 1), as the lowest value of its
 * counter, within [min, max]; 0 if empty.  @ppm: per million (990000 is
 * p99, 999000 p99.9).
 */
uint64_t ns_hist_percentile(const struct ns_hist *h, uint32_t ppm);
/*
 * Values counted at or below @v, each value as the lowest value of its
 * counter (so within NS_HIST_REL_ERROR of the truth, as the percentiles):
 * the cumulative distribution a chart draws.  n when @v >= max.
 */
uint64_t ns_hist_count_le(const struct ns_hist *h, uint64_t v);
/* Counters allocated (memory: that many buckets of NS_HIST_HALF u64). */
unsigned int ns_hist_buckets_used(const struct ns_hist *h);

#endif /* _NS_HIST_H */
