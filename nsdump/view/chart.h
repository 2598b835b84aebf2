/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SVG charts of the HTML report (html.h): axes with nice ticks, and a
 * region's latency distribution, a histogram of the values per packet
 * with the cumulative curve over it and p50, p90, p99 and p99.9 marked.
 * The counts come from the accumulator's own store of the values (exact
 * while it keeps them all, the log-linear histogram past that; stats.h).
 */
#ifndef _NS_CHART_H
#define _NS_CHART_H

#include <stdbool.h>
#include <stdio.h>
#include "stage/stats.h"

/* Values lo..hi drawn at pixels px0..px1, linearly or on log10. */
struct ns_scale {
	double lo, hi, px0, px1;
	bool log;
};

/* [0, a round number >= max], linear. */
void ns_scale_linear(struct ns_scale *s, double max, double px0, double px1);
/*
 * For values from @min to @max: log10 between powers of ten when they
 * span a factor of 20 or more (min > 0), else linear from 0.
 */
void ns_scale_fit(struct ns_scale *s, double min, double max, double px0,
		  double px1);
double ns_scale_px(const struct ns_scale *s, double v);
/* The value at fraction @t (0..1) of the way from lo to hi. */
double ns_scale_at(const struct ns_scale *s, double t);
/* Round values to label, lo..hi, at most @max: how many. */
unsigned int ns_scale_ticks(const struct ns_scale *s, double *tick,
			    unsigned int max);

#define NS_CHART_BINS	40

struct ns_dist_chart {
	const char *region, *colour;
	struct ns_stats *ticks;		/* one value per packet, TSC ticks */
	double us_per_tick;
	const struct ns_summary *sum;	/* the same values, in µs */
	const char *what;	/* "corrected" or "raw" */
};

/* One <svg> (inline, closed), bins with their counts as data-count. */
void ns_chart_dist(FILE *f, const struct ns_dist_chart *c);

/* An x axis along @y: line, ticks, labels, and @label under them. */
void ns_chart_x_axis(FILE *f, const struct ns_scale *s, double y,
		     const char *label);

#endif /* _NS_CHART_H */
