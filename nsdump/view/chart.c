// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include "view/chart.h"
#include "view/markup.h"

/* The distribution chart's size and margins, pixels. */
enum { W = 520, H = 250, ML = 62, MR = 58, MT = 34, MB = 46 };

/* The smallest of 1, 2, 2.5, 5 times a power of ten at or above @raw. */
static double nice_step(double raw)
{
	static const double mult[] = { 1, 2, 2.5, 5, 10 };
	double p = pow(10, floor(log10(raw)));

	for (unsigned int i = 0; i < sizeof(mult) / sizeof(mult[0]); i++)
		if (mult[i] * p >= raw * (1 - 1e-9))
			return mult[i] * p;
	return 10 * p;
}

void ns_scale_linear(struct ns_scale *s, double max, double px0, double px1)
{
	double step = max > 0 ? nice_step(max / 5) : 1;

	s->lo = 0;
	s->hi = max > 0 ? ceil(max / step - 1e-9) * step : 1;
	s->px0 = px0;
	s->px1 = px1;
	s->log = false;
}

void ns_scale_fit(struct ns_scale *s, double min, double max, double px0,
		  double px1)
{
	if (!(min > 0) || max / min < 20) {
		ns_scale_linear(s, max, px0, px1);
		return;
	}
	s->lo = pow(10, floor(log10(min)));
	s->hi = pow(10, ceil(log10(max)));
	s->px0 = px0;
	s->px1 = px1;
	s->log = true;
}

double ns_scale_px(const struct ns_scale *s, double v)
{
	double t;

	v = v < s->lo ? s->lo : v > s->hi ? s->hi : v;
	if (s->log)
		t = log10(v / s->lo) / log10(s->hi / s->lo);
	else
		t = (v - s->lo) / (s->hi - s->lo);
	return s->px0 + t * (s->px1 - s->px0);
}

double ns_scale_at(const struct ns_scale *s, double t)
{
	if (s->log)
		return s->lo * pow(s->hi / s->lo, t);
	return s->lo + t * (s->hi - s->lo);
}

static unsigned int log_ticks(const struct ns_scale *s, double *tick,
			      unsigned int max)
{
	static const double mult[] = { 1, 2, 5 };
	int d0 = (int)lround(log10(s->lo)), d1 = (int)lround(log10(s->hi));
	/* a decade or two: 1, 2, 5 in each; more: the powers of ten */
	unsigned int nm = d1 - d0 <= 2 ? 3 : 1, n = 0;

	for (int d = d0; d <= d1; d++)
		for (unsigned int m = 0; m < nm && n < max; m++) {
			double v = mult[m] * pow(10, d);

			if (v <= s->hi * (1 + 1e-9))
				tick[n++] = v;
		}
	return n;
}

unsigned int ns_scale_ticks(const struct ns_scale *s, double *tick,
			    unsigned int max)
{
	double step;
	unsigned int n = 0;

	if (s->log)
		return log_ticks(s, tick, max);
	step = nice_step((s->hi - s->lo) / 5);
	for (double v = s->lo; v <= s->hi * (1 + 1e-9) && n < max;
	     v = s->lo + n * step)
		tick[n++] = v;
	return n;
}

/*
 * An axis of @s at @at (the y of a horizontal one, the x of a vertical
 * one on the left): its line, and a tick and a number at each round value.
 */
static void axis(FILE *f, const struct ns_scale *s, double at, bool vertical)
{
	double tick[32];
	unsigned int n = ns_scale_ticks(s, tick, 32);

	if (vertical)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			at, s->px0, at, s->px1);
	else
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			s->px0, at, s->px1, at);
	for (unsigned int i = 0; i < n; i++) {
		double p = ns_scale_px(s, tick[i]);
		char num[32];

		ns_num_text(tick[i], num, sizeof(num));
		if (vertical)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
				at - 4, p, at, p, at - 6, p + 4, num);
		else
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
				"<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
				p, at, p, at + 4, p, at + 15, num);
	}
}

void ns_chart_x_axis(FILE *f, const struct ns_scale *s, double y,
		     const char *label)
{
	fputs("<g class=\"axis x\">", f);
	axis(f, s, y, false);
	fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
		(s->px0 + s->px1) / 2, y + 30);
	ns_ml_text(f, label);
	fputs("</text></g>", f);
}

/* The left axis (packets per bin) and the right one (cumulative %). */
static void y_axes(FILE *f, const struct ns_scale *y)
{
	fputs("<g class=\"axis y\">", f);
	axis(f, y, ML, true);
	fprintf(f, "<text class=\"label\" transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">packets per bin</text></g>",
		(MT + H - MB) / 2);
	fprintf(f, "<g class=\"axis y2\"><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>",
		W - MR, MT, W - MR, H - MB);
	for (int pct = 0; pct <= 100; pct += 25) {
		double py = H - MB - pct / 100.0 * (H - MB - MT);

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\">%d</text>",
			W - MR, py, W - MR + 4, py, W - MR + 6, py + 4, pct);
	}
	fprintf(f, "<text class=\"label\" transform=\"translate(%d %d) rotate(90)\" text-anchor=\"middle\">cumulative %%</text></g>",
		W - 12, (MT + H - MB) / 2);
}

/* Values <= @us, as the stored ticks count them. */
static uint64_t count_le_us(const struct ns_dist_chart *c, double us)
{
	/* an edge of 0.15 us is 450 ticks, not 449.99999 */
	double ticks = floor(us / c->us_per_tick + 1e-6);

	return ticks < 0 ? 0 : ns_stats_count_le(c->ticks, (uint64_t)ticks);
}

/*
 * cum[i]: values in bins 0 .. i-1.  Bin 0 holds all values up to its
 * upper edge and the last all values, so that the bins add up to n.
 */
static void bins(const struct ns_dist_chart *c, const struct ns_scale *x,
		 double *edge, uint64_t *cum)
{
	for (int i = 0; i <= NS_CHART_BINS; i++) {
		edge[i] = ns_scale_at(x, (double)i / NS_CHART_BINS);
		cum[i] = i == 0 ? 0 : i == NS_CHART_BINS ? c->sum->n :
			 count_le_us(c, edge[i]);
	}
}

static void bars(FILE *f, const struct ns_dist_chart *c,
		 const struct ns_scale *x, const struct ns_scale *y,
		 const double *edge, const uint64_t *cum)
{
	fputs("<g class=\"bins\">", f);
	for (int i = 0; i < NS_CHART_BINS; i++) {
		uint64_t count = cum[i + 1] - cum[i];
		double x0 = ns_scale_px(x, edge[i]), x1 = ns_scale_px(x, edge[i + 1]);
		double top = ns_scale_px(y, (double)count);

		if (!count)
			continue;
		fprintf(f, "<rect class=\"bin\" data-count=\"%llu\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>",
			(unsigned long long)count, x0, top, x1 - x0 > 1 ? x1 - x0 - 0.5 : x1 - x0,
			H - MB - top, c->colour);
		ns_ml_printf(f, "%llu packets from %.4g to %.4g µs",
			     (unsigned long long)count, edge[i], edge[i + 1]);
		fputs("</title></rect>", f);
	}
	fputs("</g>", f);
}

static void cdf(FILE *f, const struct ns_dist_chart *c,
		const struct ns_scale *x, const double *edge,
		const uint64_t *cum)
{
	fputs("<polyline class=\"cdf\" points=\"", f);
	for (int i = 0; i <= NS_CHART_BINS; i++)
		fprintf(f, "%s%.2f,%.2f", i ? " " : "", ns_scale_px(x, edge[i]),
			H - MB - (double)cum[i] / (double)c->sum->n * (H - MB - MT));
	fputs("\"/>", f);
}

/* One marker: its line, and the label of the markers that meet there. */
static void marker(FILE *f, const char *pct, double v, double px, int row,
		   const char *label)
{
	char num[32];

	ns_num_text(v, num, sizeof(num));
	fprintf(f, "<g class=\"pct\" data-pct=\"%s\" data-us=\"%.3f\"><title>p%s %s µs</title>"
		"<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/>",
		pct, v, pct, num, px, 15 + 11 * row, px, H - MB);
	if (label)
		fprintf(f, "<text x=\"%.2f\" y=\"%d\">%s</text>", px + 2,
			12 + 11 * row, label);
	fputs("</g>", f);
}

static void percentiles(FILE *f, const struct ns_dist_chart *c,
			const struct ns_scale *x)
{
	const struct { const char *pct; double v; } p[] = {
		{ "50", c->sum->p50 }, { "90", c->sum->p90 },
		{ "99", c->sum->p99 }, { "99.9", c->sum->p999 },
	};
	const unsigned int n = sizeof(p) / sizeof(p[0]);
	int row = 0;

	/* markers less than 2 px apart share one label; rows alternate */
	for (unsigned int i = 0, j; i < n; i = j, row ^= 1) {
		double px = ns_scale_px(x, p[i].v);
		char label[48] = "";
		size_t used = 0;

		for (j = i; j < n && ns_scale_px(x, p[j].v) - px < 2; j++)
			used += snprintf(label + used, sizeof(label) - used,
					 "%sp%s", j > i ? "," : "", p[j].pct);
		for (unsigned int k = i; k < j; k++)
			marker(f, p[k].pct, p[k].v, ns_scale_px(x, p[k].v), row,
			       k == i ? label : NULL);
	}
}

void ns_chart_dist(FILE *f, const struct ns_dist_chart *c)
{
	double edge[NS_CHART_BINS + 1];
	uint64_t cum[NS_CHART_BINS + 1], most = 0;
	struct ns_scale x, y;
	char label[96];

	ns_scale_fit(&x, c->sum->min, c->sum->max, ML, W - MR);
	bins(c, &x, edge, cum);
	for (int i = 0; i < NS_CHART_BINS; i++)
		if (cum[i + 1] - cum[i] > most)
			most = cum[i + 1] - cum[i];
	ns_scale_linear(&y, (double)most, H - MB, MT);
	fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">",
		W, H, W, H);
	bars(f, c, &x, &y, edge, cum);
	y_axes(f, &y);
	snprintf(label, sizeof(label), "%s µs per packet, %s%s", c->region,
		 c->what, x.log ? " (log scale)" : "");
	ns_chart_x_axis(f, &x, H - MB, label);
	cdf(f, c, &x, edge, cum);
	percentiles(f, c, &x);
	fputs("</svg>", f);
}
