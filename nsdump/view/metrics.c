// SPDX-License-Identifier: GPL-2.0
/*
 * The exposition is written here rather than by a client library: the
 * Prometheus client for C (prometheus-client-c) is not packaged in
 * Debian, and what nsdump exposes, a snapshot taken whole, is a few
 * printf()s of two text formats.  They are followed as specified: the
 * Prometheus text format 0.0.4 and OpenMetrics 1.0 (TYPE, UNIT and HELP
 * in that order, counters' families named without "_total", info,
 * canonical "le" values, exemplars, "# EOF"); tests/host checks the text
 * with promtool and a real Prometheus.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include "lib/devname.h"
#include "view/metrics.h"
#include "view/utf8.h"

#define NAME_LATENCY	"netslice_region_latency_seconds"
#define LABELS_MAX	512	/* one series' labels, escaped */

/* ---- negotiation ---- */

/* One media range of an Accept header: "type/sub;q=0.5;version=1.0.0". */
static void media_range(const char *r, size_t len, double *om, double *text)
{
	const char *semi = memchr(r, ';', len), *p;
	size_t tlen = semi ? (size_t)(semi - r) : len;
	double q = 1;
	bool v1 = true;

	while (tlen && r[tlen - 1] == ' ')
		tlen--;
	for (p = semi; p && p < r + len; p = memchr(p + 1, ';', r + len - p - 1)) {
		while (*++p == ' ')
			;
		if (!strncasecmp(p, "q=", 2))
			q = strtod(p + 2, NULL);
		else if (!strncasecmp(p, "version=", 8))
			v1 = !strncmp(p + 8, "1.", 2) || !strncmp(p + 8, "0.0.1", 5);
	}
#define IS(t)	(tlen == strlen(t) && !strncasecmp(r, t, tlen))
	if (IS("application/openmetrics-text") && v1 && q > *om)
		*om = q;
	else if ((IS("text/plain") || IS("text/*") || IS("*/*")) && q > *text)
		*text = q;
#undef IS
}

enum ns_metrics_format ns_metrics_negotiate(const char *accept)
{
	double om = 0, text = 0;
	const char *p = accept, *comma;

	while (p && *p) {
		while (*p == ' ')
			p++;
		comma = strchr(p, ',');
		media_range(p, comma ? (size_t)(comma - p) : strlen(p), &om,
			    &text);
		p = comma ? comma + 1 : NULL;
	}
	return om > 0 && om >= text ? NS_METRICS_OPENMETRICS : NS_METRICS_PROM;
}

const char *ns_metrics_content_type(enum ns_metrics_format f)
{
	return f == NS_METRICS_OPENMETRICS ?
	       "application/openmetrics-text; version=1.0.0; charset=utf-8" :
	       "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- numbers and strings ---- */

void ns_metrics_number(double v, char *buf, size_t len)
{
	int p, x;

	if (isnan(v) || isinf(v) || v == 0) {
		snprintf(buf, len, "%s", isnan(v) ? "NaN" : v == 0 ? "0.0" :
			 v > 0 ? "+Inf" : "-Inf");
		return;
	}
	/* the fewest significant digits that read back as @v */
	for (p = 1; p < 17; p++) {
		snprintf(buf, len, "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	snprintf(buf, len, "%.*e", p - 1, v);
	x = atoi(strchr(buf, 'e') + 1);
	if (x < -4 || x >= 6)
		return;		/* as Go's %g: 1e-05, 1.5e+06 */
	snprintf(buf, len, "%.*f", p - 1 - x > 0 ? p - 1 - x : 0, v);
	if (!strchr(buf, '.'))
		snprintf(buf + strlen(buf), len - strlen(buf), ".0");
}

void ns_metrics_escape(FILE *f, const char *s, bool help,
		       enum ns_metrics_format fmt)
{
	char *ok = malloc(NS_UTF8_REPAIRED(strlen(s)));

	if (!ok)
		return;
	ns_utf8_repair(s, ok);
	for (const char *c = ok; *c; c++) {
		if (*c == '\\')
			fputs("\\\\", f);
		else if (*c == '\n')
			fputs("\\n", f);
		else if (*c == '"' && !(help && fmt == NS_METRICS_PROM))
			fputs("\\\"", f);
		else
			fputc(*c, f);
	}
	free(ok);
}

/* ---- families ---- */

struct out {
	FILE *f;
	enum ns_metrics_format fmt;
	const struct ns_metrics_in *in;
	double hz;		/* TSC ticks per second */
	/* The buckets every series shows, and their le: bucket_range(). */
	unsigned int first, last;
	char le[NSL_AGG_BUCKETS][32];
};

enum kind { GAUGE, COUNTER, INFO, HISTOGRAM };

static const char *const kind_name[] = {
	[GAUGE] = "gauge", [COUNTER] = "counter", [INFO] = "info",
	[HISTOGRAM] = "histogram",
};

/*
 * A family's metadata.  OpenMetrics names a counter's family without
 * "_total" and an info's without "_info"; 0.0.4 names them as their
 * samples, and has no info type (a gauge of 1) and no UNIT.
 */
static void family(struct out *o, const char *base, enum kind k,
		   const char *unit, const char *help)
{
	bool om = o->fmt == NS_METRICS_OPENMETRICS;
	const char *suffix = om ? "" : k == COUNTER ? "_total" :
			     k == INFO ? "_info" : "";

	if (om) {
		fprintf(o->f, "# TYPE %s %s\n", base, kind_name[k]);
		if (unit)
			fprintf(o->f, "# UNIT %s %s\n", base, unit);
	}
	fprintf(o->f, "# HELP %s%s ", base, suffix);
	ns_metrics_escape(o->f, help, true, o->fmt);
	fputc('\n', o->f);
	if (!om)
		fprintf(o->f, "# TYPE %s%s %s\n", base, suffix,
			k == INFO ? "gauge" : kind_name[k]);
}

static void counter(struct out *o, const char *base, const char *help,
		    uint64_t v)
{
	family(o, base, COUNTER, NULL, help);
	fprintf(o->f, "%s_total %llu\n", base, (unsigned long long)v);
}

static void build_info(struct out *o)
{
	family(o, "netslice_build", INFO, NULL,
	       "nsdump's version and the NetSlice ABI it speaks");
	fputs("netslice_build_info{version=\"", o->f);
	ns_metrics_escape(o->f, o->in->version, false, o->fmt);
	fprintf(o->f, "\",abi=\"%u\"} 1\n", o->in->abi);
}

static void counters(struct out *o, const struct nsl_agg_head *h)
{
	counter(o, "netslice_blocks", "Blocks the kernel folded into the histograms",
		h->blocks);
	counter(o, "netslice_truncated_blocks",
		"Blocks folded that were truncated (NSL_BF_TRUNC)", h->trunc);
	counter(o, "netslice_open_blocks",
		"Blocks folded with a region left open (that region not counted)",
		h->open);
	counter(o, "netslice_exemplars",
		"Blocks the kernel delivered whole as exemplars", h->exemplars);
	counter(o, "netslice_other_blocks",
		"Blocks folded into group 0 (other) for want of a group slot",
		h->other);
	counter(o, "netslice_emitted_blocks",
		"Blocks the module emitted since it was loaded", h->emitted);
}

static void gauges(struct out *o, const struct nsl_agg_head *h)
{
	char num[32];

	family(o, "netslice_start_time_seconds", GAUGE, "seconds",
	       "When the histograms began, Unix time");
	fprintf(o->f, "netslice_start_time_seconds %.3f\n",
		h->since_realtime_ns / 1e9);
	family(o, "netslice_correction_seconds", GAUGE, "seconds",
	       "The macros' own cost taken off each value: tau_o per interval, tau_b per pair nested inside");
	ns_metrics_number(h->tau_o / o->hz, num, sizeof(num));
	fprintf(o->f, "netslice_correction_seconds{tau=\"tau_o\"} %s\n", num);
	ns_metrics_number(h->tau_b / o->hz, num, sizeof(num));
	fprintf(o->f, "netslice_correction_seconds{tau=\"tau_b\"} %s\n", num);
	family(o, "netslice_exemplar_threshold_seconds", GAUGE, "seconds",
	       "The value above which a block is an exemplar now (0: none asked for)");
	ns_metrics_number(h->threshold_ticks / o->hz, num, sizeof(num));
	fprintf(o->f, "netslice_exemplar_threshold_seconds{region=\"%s\"} %s\n",
		ns_agg_region_name(h->conf.region) ?: "unknown", num);
}

/* ---- the histograms ---- */

/* One histogram of the snapshot, with its labels as written. */
struct series {
	const struct nsl_agg_hist *h;
	const struct ns_exemplar *ex;	/* by bucket; NULL: none */
	char labels[LABELS_MAX];
};

static const char *family_name(uint16_t family)
{
	return family == AF_INET ? "ipv4" : family == AF_INET6 ? "ipv6" :
	       "other";
}

static const char *proto_name(uint16_t proto)
{
	return proto == 6 ? "tcp" : proto == 17 ? "udp" : "other";
}

static void label(FILE *f, const char *name, const char *value,
		  enum ns_metrics_format fmt)
{
	fprintf(f, ",%s=\"", name);
	ns_metrics_escape(f, value, false, fmt);
	fputc('"', f);
}

/* region="tcp",dir="tx",dev="eth0",family="ipv4",proto="tcp" */
static void series_labels(const struct out *o, struct series *s)
{
	const struct nsl_agg_hist *h = s->h;
	bool other = !h->group;
	char dev[NS_DEV_TEXT] = "none";
	FILE *f = fmemopen(s->labels, sizeof(s->labels), "w");

	if (!f) {
		s->labels[0] = 0;
		return;
	}
	if (h->ifindex)
		ns_dev_text(h->ifindex, h->netns, o->in->live, dev, sizeof(dev));
	fprintf(f, "region=\"%s\"", ns_agg_region_name(h->region));
	label(f, "dir", ns_dev_dir_name(h->dir), o->fmt);
	label(f, "dev", other ? "other" : dev, o->fmt);
	label(f, "family", other ? "other" : family_name(h->family), o->fmt);
	label(f, "proto", other ? "other" : proto_name(h->proto), o->fmt);
	fclose(f);
}

/* By region, then labels: histograms with the same labels side by side. */
static int series_order(const void *a, const void *b)
{
	const struct series *x = a, *y = b;

	if (x->h->region != y->h->region)
		return x->h->region < y->h->region ? -1 : 1;
	return strcmp(x->labels, y->labels);
}

/* The latest exemplar of bucket @i among the @n histograms of @s. */
static const struct ns_exemplar *latest(const struct series *s,
					unsigned int n, unsigned int i)
{
	const struct ns_exemplar *best = NULL, *e;

	for (unsigned int k = 0; k < n; k++) {
		e = s[k].ex ? &s[k].ex[i] : NULL;
		if (e && e->time && (!best || e->time > best->time))
			best = e;
	}
	return best;
}

/*
 * ` # {trace_id="cpu0:seq123",block="7"} 1.2e-05 1700000000.123`: its
 * labels at most 70 characters of the 128 OpenMetrics allows.
 */
static void exemplar(const struct out *o, const struct series *s,
		     unsigned int n, unsigned int i)
{
	const struct ns_exemplar *e;
	char num[32];

	if (o->fmt != NS_METRICS_OPENMETRICS || !(e = latest(s, n, i)))
		return;
	ns_metrics_number(e->ticks / o->hz, num, sizeof(num));
	fprintf(o->f, " # {trace_id=\"cpu%u:seq%llu\"", e->cpu,
		(unsigned long long)e->seq);
	if (e->block)
		fprintf(o->f, ",block=\"%llu\"", (unsigned long long)e->block);
	fprintf(o->f, "} %s %.3f", num, e->time);
}

static void bucket_line(const struct out *o, const struct series *s,
			const char *le, uint64_t n)
{
	fprintf(o->f, NAME_LATENCY "_bucket{%s,le=\"%s\"} %llu", s->labels, le,
		(unsigned long long)n);
}

/*
 * The @n histograms of @s (the same labels: merged) as one: each bucket
 * of the range all series show, "le" its bound (bucket i holds
 * [low(i), low(i + 1)) ticks), the last bucket's only under +Inf.
 */
static void histogram(const struct out *o, const struct series *s,
		      unsigned int n)
{
	uint64_t b[NSL_AGG_BUCKETS] = { 0 }, sum = 0, count = 0, cum = 0;
	unsigned int i;
	char num[32];

	for (unsigned int k = 0; k < n; k++) {
		sum += s[k].h->sum_ticks;
		for (i = 0; i < NSL_AGG_BUCKETS; i++)
			b[i] += s[k].h->bucket[i];
	}
	for (i = 0; i < NSL_AGG_BUCKETS; i++)
		count += b[i];
	for (i = 0; i < o->first; i++)
		cum += b[i];
	for (i = o->first; i <= o->last && i < NSL_AGG_BUCKETS - 1; i++) {
		cum += b[i];
		bucket_line(o, s, o->le[i], cum);
		exemplar(o, s, n, i);
		fputc('\n', o->f);
	}
	bucket_line(o, s, "+Inf", count);
	exemplar(o, s, n, NSL_AGG_BUCKETS - 1);
	ns_metrics_number(sum / o->hz, num, sizeof(num));
	fprintf(o->f, "\n" NAME_LATENCY "_sum{%s} %s\n", s->labels, num);
	fprintf(o->f, NAME_LATENCY "_count{%s} %llu\n", s->labels,
		(unsigned long long)count);
}

/*
 * The buckets from the first any histogram holds a value in to the last:
 * one set of "le" for every series, so that a sum by (le) across series
 * adds like with like (a series that stopped short would drop out of
 * the larger bounds' sums).  Counts only grow within a load, so the set
 * only grows too.
 */
static void bucket_range(struct out *o, const struct ns_agg_snap *snap)
{
	o->first = NSL_AGG_BUCKETS;
	o->last = 0;
	for (unsigned int k = 0; k < snap->head.nhist; k++)
		for (unsigned int i = 0; i < NSL_AGG_BUCKETS; i++) {
			if (!snap->hist[k].bucket[i])
				continue;
			o->first = i < o->first ? i : o->first;
			o->last = i > o->last ? i : o->last;
		}
	/* Each bound written once, not once a series: the shortest form
	 * that reads back exactly takes up to 17 tries. */
	for (unsigned int i = o->first; i <= o->last && i < NSL_AGG_BUCKETS - 1; i++)
		ns_metrics_number(nsl_agg_bucket_low(i + 1) / o->hz, o->le[i],
				  sizeof(o->le[i]));
}

static void histograms(struct out *o, const struct ns_agg_snap *snap)
{
	unsigned int n = snap->head.nhist, i, j;
	struct series *s = calloc(n ? n : 1, sizeof(*s));

	bucket_range(o, snap);
	family(o, NAME_LATENCY, HISTOGRAM, "seconds",
	       "Time a packet spent in a region of the stack (span: the whole block), as the kernel folded it");
	if (!s)
		return;
	for (i = 0; i < n; i++) {
		s[i].h = &snap->hist[i];
		s[i].ex = o->in->ex ? ns_exemplars_of(o->in->ex, s[i].h) : NULL;
		series_labels(o, &s[i]);
	}
	qsort(s, n, sizeof(*s), series_order);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && !series_order(&s[i], &s[j]); j++)
			;
		histogram(o, &s[i], j - i);
	}
	free(s);
}

char *ns_metrics_text(const struct ns_metrics_in *in,
		      enum ns_metrics_format f, size_t *len)
{
	struct out o = { .fmt = f, .in = in };
	char *text = NULL;

	o.f = open_memstream(&text, len);
	if (!o.f)
		return NULL;
	build_info(&o);
	family(&o, "netslice_up", GAUGE, NULL,
	       "1 if the module's histograms could be read");
	fprintf(o.f, "netslice_up %d\n", in->snap ? 1 : 0);
	if (in->snap) {
		o.hz = in->snap->head.tsc_khz * 1000.0;
		gauges(&o, &in->snap->head);
		counters(&o, &in->snap->head);
		histograms(&o, in->snap);
	}
	if (f == NS_METRICS_OPENMETRICS)
		fputs("# EOF\n", o.f);
	if (fclose(o.f) || !text) {
		free(text);
		return NULL;
	}
	return text;
}
