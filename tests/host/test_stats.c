// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include "stage/stats.h"
#include "tap.h"
#include "tests.h"

static void add_all(struct ns_stats *s, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ns_stats_add(s, v[i]);
}

/*
 * The histogram against the exact nearest rank, over values that span
 * 1 to 2^40: every percentile within NS_HIST_REL_ERROR below the true
 * one, never above; memory a bucket per power of two used.
 */
static void hist(void)
{
	enum { N = 200000 };
	static const uint32_t ppm[] = { 1, 500000, 900000, 990000, 999000, 1000000 };
	uint64_t *v = malloc(N * sizeof(*v)), x = 0x9E3779B97F4A7C15ull;
	struct ns_stats exact;
	struct ns_hist h;
	double worst = 0;
	bool below = true;

	ns_hist_init(&h);
	ns_stats_init(&exact, N);
	for (int i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* log-uniform: as many small values as large */
		v[i] = (x >> 24) >> (x % 40);
		ns_hist_add(&h, v[i]);
		ns_stats_add(&exact, v[i]);
	}
	for (size_t i = 0; i < sizeof(ppm) / sizeof(ppm[0]); i++) {
		uint64_t want = ns_stats_ppm(&exact, ppm[i]);
		uint64_t got = ns_hist_percentile(&h, ppm[i]);
		double err = want ? (double)(want - got) / want : 0;

		below &= got <= want;
		if (err > worst)
			worst = err;
	}
	printf("# histogram: worst relative error %.6f over p0..p100 of %d values, bound %.6f\n",
	       worst, N, NS_HIST_REL_ERROR);
	tap_ok(TAP_IS(below) && TAP_IS(worst < NS_HIST_REL_ERROR),
	       "hist: every percentile at most %.3f %% below the exact one, never above",
	       NS_HIST_REL_ERROR * 100);
	tap_ok(TAP_IS(ns_stats_ppm(&exact, 1000000) == ns_hist_percentile(&h, 1000000)) &&
	       TAP_IS(h.min == ns_stats_ppm(&exact, 0)),
	       "hist: max and min exact");
	TAP_EQ(ns_hist_buckets_used(&h), 40 - NS_HIST_BITS + 1,
	       "hist: memory: bucket 0 and one per power of two from 2^11 to 2^39");
	ns_hist_free(&h);
	ns_stats_free(&exact);

	/* exact below 2^11; a value just past it, kept at its counter's low end */
	ns_hist_init(&h);
	ns_hist_add(&h, 2047);
	ns_hist_add(&h, 4097);
	ns_hist_add(&h, 5000);
	TAP_EQ(ns_hist_percentile(&h, 1), 2047, "hist: 2047 exact");
	TAP_EQ(ns_hist_percentile(&h, 500000), 4096,
	       "hist: 4097 is its counter's 4096 (width 4 from 4096)");
	TAP_EQ(ns_hist_percentile(&h, 1000000), 5000, "hist: the max, exact");
	ns_hist_free(&h);
	free(v);
}

void test_stats(void)
{
	struct ns_stats s;
	struct ns_summary m;

	ns_stats_init(&s, 0);
	tap_ok(TAP_IS(!ns_stats_summary(&s, 1, &m)) && TAP_IS(m.n == 0) &&
	       TAP_IS(ns_stats_percentile(&s, 50) == 0),
	       "stats: empty has no summary");

	ns_stats_add(&s, 7);
	ns_stats_summary(&s, 1, &m);
	tap_ok(TAP_IS(m.n == 1) && TAP_IS(m.mean == 7) && TAP_IS(m.p50 == 7) &&
	       TAP_IS(m.p99 == 7) && TAP_IS(m.min == 7) && TAP_IS(m.max == 7) &&
	       TAP_IS(m.cv == 0) && TAP_IS(!m.sampled),
	       "stats: single value");
	ns_stats_free(&s);

	/* 1..10 shuffled: mean 5.5, population variance 8.25 */
	static const uint64_t ten[] = { 7, 3, 10, 1, 5, 9, 2, 8, 6, 4 };

	add_all(&s, ten, 10);
	ns_stats_summary(&s, 1, &m);
	TAP_NEAR(m.mean, 5.5, "stats: 1..10 mean 5.5");
	TAP_NEAR(m.p50, 5, "stats: 1..10 p50 = rank ceil(5) = 5");
	TAP_NEAR(m.p99, 10, "stats: 1..10 p99 = rank ceil(9.9) = 10");
	tap_ok(TAP_IS(m.min == 1) && TAP_IS(m.max == 10),
	       "stats: 1..10 min 1 max 10");
	TAP_NEAR(m.cv, sqrt(8.25) / 5.5, "stats: 1..10 CV sqrt(8.25)/5.5");
	ns_stats_summary(&s, 0.5, &m);
	tap_ok(TAP_IS(fabs(m.mean - 2.75) < 1e-12) && TAP_IS(m.p50 == 2.5) &&
	       TAP_IS(m.max == 5) &&
	       TAP_IS(fabs(m.cv - sqrt(8.25) / 5.5) < 1e-12),
	       "stats: scale applies to values, not to CV");
	ns_stats_free(&s);

	/* mean 5, population sd 2 */
	static const uint64_t eight[] = { 9, 4, 2, 5, 4, 7, 4, 5 };

	add_all(&s, eight, 8);
	ns_stats_summary(&s, 1, &m);
	tap_ok(TAP_IS(fabs(m.mean - 5) < 1e-12) &&
	       TAP_IS(fabs(m.cv - 0.4) < 1e-12) && TAP_IS(m.p50 == 4) &&
	       TAP_IS(m.p99 == 9),
	       "stats: {2,4,4,4,5,5,7,9} mean 5 CV 0.4 p50 4 p99 9");
	ns_stats_free(&s);

	for (uint64_t v = 100; v >= 1; v--)
		ns_stats_add(&s, v);
	TAP_EQ(ns_stats_percentile(&s, 50), 50, "stats: 1..100 p50 50");
	TAP_EQ(ns_stats_percentile(&s, 99), 99, "stats: 1..100 p99 99");
	TAP_EQ(ns_stats_percentile(&s, 100), 100, "stats: 1..100 p100 100");
	TAP_EQ(ns_stats_percentile(&s, 0), 1, "stats: p0 is the minimum");
	ns_stats_free(&s);

	static const uint64_t zeros[] = { 0, 0, 0 };

	add_all(&s, zeros, 3);
	ns_stats_summary(&s, 1, &m);
	tap_ok(TAP_IS(m.mean == 0) && TAP_IS(m.cv == 0) && TAP_IS(m.max == 0),
	       "stats: all zero, CV 0");
	ns_stats_free(&s);

	/* large ticks: no precision loss in min/max/percentiles */
	ns_stats_add(&s, UINT64_MAX);
	ns_stats_add(&s, UINT64_MAX - 1);
	tap_ok(TAP_IS(s.max == UINT64_MAX) && TAP_IS(s.min == UINT64_MAX - 1) &&
	       TAP_IS(ns_stats_percentile(&s, 50) == UINT64_MAX - 1),
	       "stats: 64-bit values kept exactly");
	ns_stats_free(&s);

	/* memory bound: past 100 values the store goes, the histogram answers */
	ns_stats_init(&s, 100);
	for (uint64_t v = 1; v <= 1000; v++)
		ns_stats_add(&s, v);
	ns_stats_summary(&s, 1, &m);
	tap_ok(TAP_IS(m.n == 1000) && TAP_IS(m.mean == 500.5) &&
	       TAP_IS(m.min == 1) && TAP_IS(m.max == 1000) &&
	       TAP_IS(m.sampled) && TAP_IS(!s.v) && TAP_IS(s.stored == 0),
	       "stats: past the limit no values stored, exact n/mean/min/max");
	tap_ok(TAP_IS(m.p50 == 500) && TAP_IS(m.p90 == 900) &&
	       TAP_IS(m.p99 == 990) && TAP_IS(m.p999 == 999),
	       "stats: below 2048 the histogram is exact: p50 500 p90 900 p99 990 p99.9 999");
	ns_stats_free(&s);
	hist();
}
