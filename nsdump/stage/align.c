// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>
#include "stage/align.h"

/* A sample's d less the drift, as host 0's time would have it. */
static double dedrift(const struct ns_align_sample *s, double slope,
		      double t_mid)
{
	double adj = slope * (s->t - t_mid);

	return s->dir ? s->d + adj : s->d - adj;
}

/*
 * The minimum of each direction over samples with t in [lo, hi), less
 * the drift: 0 if either direction has none there.
 */
static int minima(const struct ns_align_sample *s, size_t n, double lo,
		  double hi, double slope, double t_mid, double m[2])
{
	bool have[2] = { false, false };

	for (size_t i = 0; i < n; i++) {
		double d;

		if (s[i].t < lo || s[i].t >= hi)
			continue;
		d = dedrift(&s[i], slope, t_mid);
		if (!have[s[i].dir] || d < m[s[i].dir])
			m[s[i].dir] = d;
		have[s[i].dir] = true;
	}
	return have[0] && have[1];
}

/* Weighted least squares of the windows' offsets: the slope, or 0. */
static void fit_drift(const struct ns_align_sample *s, size_t n,
		      double t0, double t1, struct ns_jclock *c)
{
	double sw = 0, st = 0, so = 0, stt = 0, sto = 0, width, m[2];
	double first_u = 0, last_u = 0, first_t = 0, last_t = 0;
	int used = 0;

	width = (t1 - t0) / NS_JOIN_WINDOWS;
	for (int k = 0; k < NS_JOIN_WINDOWS; k++) {
		double lo = t0 + k * width, hi = k == NS_JOIN_WINDOWS - 1 ?
			    t1 + 1 : lo + width, tk = lo + width / 2, u, o, w;

		if (!minima(s, n, lo, hi, 0, 0, m))
			continue;
		o = (m[0] - m[1]) / 2;
		u = (m[0] + m[1]) / 2;
		w = 1 / (u > 1 ? u * u : 1);
		sw += w, st += w * tk, so += w * o;
		stt += w * tk * tk, sto += w * tk * o;
		if (!used++)
			first_u = u, first_t = tk;
		last_u = u, last_t = tk;
	}
	if (used < 2 || sw * stt - st * st <= 0)
		return;
	c->drift = true;
	c->drift_ppm = (sw * sto - st * so) / (sw * stt - st * st) * 1e6;
	c->drift_uncert_ppm = (fabs(first_u) + fabs(last_u)) /
			      (last_t - first_t) * 1e6;
}

void ns_align(const struct ns_align_sample *s, size_t n, struct ns_jclock *c)
{
	double t0 = 0, t1 = 0, m[2];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < n; i++) {
		if (!i || s[i].t < t0)
			t0 = s[i].t;
		if (!i || s[i].t > t1)
			t1 = s[i].t;
		c->pairs[s[i].dir]++;
	}
	if (!c->pairs[0] || !c->pairs[1])
		return;
	c->span_ns = (uint64_t)(t1 - t0);
	c->t_mid = (t0 + t1) / 2;
	if (t1 - t0 >= NS_JOIN_DRIFT_SPAN_NS)
		fit_drift(s, n, t0, t1, c);
	minima(s, n, t0, t1 + 1, c->drift_ppm * 1e-6, c->t_mid, m);
	c->known = true;
	c->offset_ns = (m[0] - m[1]) / 2;
	c->uncert_ns = (m[0] + m[1]) / 2;
}
