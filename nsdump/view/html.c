// SPDX-License-Identifier: GPL-2.0
/*
 * The page is written at the finish, in one pass, from numbers the
 * accumulator holds: nothing in it is computed twice.  Every string that
 * came from the trace or the command line goes through ns_ml_text().
 */
#include <stdlib.h>
#include <string.h>
#include "source/version.h"
#include "view/chart.h"
#include "view/html.h"
#include "view/markup.h"
#include "view/nest.h"
#include "view/shortlist.h"
#include "view/waterfall.h"

struct html {
	struct ns_sink sink;
	struct ns_pipeline *p;
	FILE *out;
	char *path, *source;
	bool live;		/* from /dev/ns: devices named (devname.h) */
	uint32_t ncpus;		/* the INFO's */
	struct ns_shortlist shortlist;
	uint64_t tx, rx, both_ways;	/* blocks by dir; with both sides */
	uint64_t first_tsc, last_tsc;	/* the blocks' tsc0 */
	uint64_t cpu_mask[4];	/* rings seen, CPUs 0..255 */
	bool more_cpus;		/* and some above */
};

static const struct ns_sink_ops html_ops;

/* The regions in path order (nest.h), @id each in turn. */
#define for_each_region(id)						\
	for (unsigned int i_ = 0, id;					\
	     i_ < sizeof(ns_region_path_order) &&			\
	     ((id = ns_region_path_order[i_]), 1); i_++)

static void count_block(struct html *h, const struct ns_citem *ci)
{
	const struct nsl_block *b = &ci->it->block;
	struct ns_nest n;

	if (!h->tx && !h->rx)
		h->first_tsc = h->last_tsc = b->tsc0;
	if (b->tsc0 < h->first_tsc)
		h->first_tsc = b->tsc0;
	if (b->tsc0 > h->last_tsc)
		h->last_tsc = b->tsc0;
	h->tx += b->dir != NSL_DIR_RX;
	h->rx += b->dir == NSL_DIR_RX;
	if (b->hdr.cpu < 256)
		h->cpu_mask[b->hdr.cpu / 64] |= 1ull << (b->hdr.cpu % 64);
	else
		h->more_cpus = true;
	ns_nest_block(b, &n);
	h->both_ways += n.nparts > 1;
	ns_shortlist_offer(&h->shortlist, b, ci->corr, n.end);
}

static enum ns_flow html_item(struct ns_sink *s, const struct ns_citem *ci)
{
	if (ci->it->type == NS_ITEM_BLOCK)
		count_block((struct html *)s, ci);
	return NS_FLOW_MORE;
}

/* ---- the page ---- */

static const char css[] =
	"body{font:14px/1.4 'DejaVu Sans',sans-serif;color:#222;margin:0 24px 40px;max-width:1500px}"
	"h1{font-size:22px;margin:18px 0 8px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc}"
	"table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:middle}"
	"th{font-weight:600;background:#f2f2f2}.num{text-align:right;font-variant-numeric:tabular-nums}"
	"table.stats td,table.stats th,table.conn td,table.conn th{border-bottom:1px solid #e4e4e4}"
	"table.facts th{background:none;padding-left:0}"
	".sw{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:-1px;border:1px solid #0003}"
	".note{color:#555;font-size:13px;max-width:1100px}"
	".dists{display:flex;flex-wrap:wrap;gap:8px 18px}"
	"figure{margin:0}figcaption{font-size:13px;color:#333;max-width:520px}"
	"svg text{font:11px 'DejaVu Sans',sans-serif;fill:#333}svg .label{font-size:12px}"
	".axis line{stroke:#666;stroke-width:1}"
	".cdf{fill:none;stroke:#111;stroke-width:1.5}"
	".pct line{stroke:#b00;stroke-dasharray:4 3}.pct text{fill:#b00}"
	"table.waterfall{font-size:12px}table.waterfall td{padding:0 6px;white-space:nowrap}"
	"table.waterfall tbody tr:nth-child(even){background:#f7f7f7}"
	"td.wf-bars,th.wf-axis{padding:0;background:none}td.wf-bars svg,th.wf-axis svg{display:block}"
	"rect.bar{stroke:#0005;stroke-width:.5}rect.bar.merged{stroke:#000;stroke-dasharray:2 1}"
	"rect.bar.shared{opacity:.4}rect.bar.hl{stroke:#000;stroke-width:1.5}"
	".open-mark{fill:#000}"
	"#wf-info{position:sticky;top:0;background:#fffbe6;border:1px solid #e6d98c;padding:3px 8px;font-size:12px;min-height:1.4em}"
	".legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;margin:6px 0}"
	".legend span.item{cursor:default}"
	".cbar{display:inline-block;height:9px;background:#7aa6d6;margin-right:6px;vertical-align:0}";

/*
 * Hovering a bar (or a legend entry) outlines that region in every row
 * and shows the bar's title in the line above the table; nothing else
 * depends on it.  data-ready says the script ran to its end.
 */
static const char script[] =
	"(function(){"
	"var info=document.getElementById('wf-info');"
	"function mark(region,on){"
	"document.querySelectorAll('rect.bar[data-region=\"'+region+'\"]').forEach(function(r){"
	"r.classList.toggle('hl',on);});}"
	"document.querySelectorAll('rect.bar').forEach(function(r){"
	"r.addEventListener('mouseenter',function(){"
	"mark(r.getAttribute('data-region'),true);"
	"if(info)info.textContent=r.querySelector('title').textContent;});"
	"r.addEventListener('mouseleave',function(){mark(r.getAttribute('data-region'),false);});});"
	"document.querySelectorAll('.legend [data-region]').forEach(function(e){"
	"e.addEventListener('mouseenter',function(){mark(e.getAttribute('data-region'),true);});"
	"e.addEventListener('mouseleave',function(){mark(e.getAttribute('data-region'),false);});});"
	"document.body.setAttribute('data-ready','1');"
	"})();";

static void swatch(FILE *f, unsigned int region)
{
	fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>",
		ns_region_colour(region));
}

static void fact(FILE *f, const char *name, const char *value)
{
	fprintf(f, "<tr><th>%s</th><td>", name);
	ns_ml_text(f, value);
	fputs("</td></tr>\n", f);
}

static void fact_cpus(FILE *f, const struct html *h)
{
	char buf[512];
	size_t used = 0;

	buf[0] = 0;
	for (unsigned int c = 0; c < 256 && used < sizeof(buf); c++)
		if (h->cpu_mask[c / 64] & (1ull << (c % 64)))
			used += snprintf(buf + used, sizeof(buf) - used, "%s%u",
					 used ? ", " : "", c);
	if (used < sizeof(buf))
		snprintf(buf + used, sizeof(buf) - used, "%s (of %u CPUs)",
			 h->more_cpus ? " and CPUs above 255" : "", h->ncpus);
	fact(f, "rings (CPUs) with blocks", used ? buf : "none");
}

static void fact_time(FILE *f, const struct html *h)
{
	const struct ns_acc *a = &h->p->acc;
	char from[64], to[64], buf[192];

	if (!a->blocks) {
		fact(f, "time", "no blocks");
		return;
	}
	ns_clock_format(&a->clock, h->first_tsc, from, sizeof(from));
	ns_clock_format(&a->clock, h->last_tsc, to, sizeof(to));
	snprintf(buf, sizeof(buf), "%s to %s (%.3f ms, NSI of the first and the last block)",
		 from, to, ns_acc_us(a, h->last_tsc - h->first_tsc) / 1000);
	fact(f, "time", buf);
}

static void fact_calibration(FILE *f, const struct html *h)
{
	const struct ns_acc *a = &h->p->acc;
	char how[192], buf[384];

	ns_acc_correction(a, how, sizeof(how));
	if (ns_acc_corrected(a))
		snprintf(buf, sizeof(buf), "%s; %u CPUs measured%s%s", how,
			 ns_calib_count(a->calib), a->calib->model[0] ? ", " : "",
			 a->calib->model);
	else
		snprintf(buf, sizeof(buf), "%s", how);
	fact(f, "values", buf);
}

static void fact_counters(FILE *f, const struct html *h)
{
	const struct ns_acc *a = &h->p->acc;
	char buf[512], lbl[16];
	size_t used = 0;

	if (!a->nevents) {
		fact(f, "counters", "none (duration mode: the TSC only)");
		return;
	}
	buf[0] = 0;
	for (unsigned int e = 0; e < a->nevents && used < sizeof(buf); e++)
		used += snprintf(buf + used, sizeof(buf) - used, "%s%s",
				 e ? ", " : "", ns_acc_event_label(a, e, lbl, sizeof(lbl)));
	fact(f, "counters", buf);
}

static void facts(FILE *f, const struct html *h)
{
	const struct ns_pipeline *p = h->p;
	const struct ns_acc *a = &p->acc;
	char buf[512];

	fputs("<table class=\"facts\">\n", f);
	fact(f, "source", h->source);
	snprintf(buf, sizeof(buf), "%llu blocks (%llu send, %llu receive; %llu carry both paths: loopback, veth), %llu MAGNeT event records",
		 (unsigned long long)a->blocks, (unsigned long long)h->tx,
		 (unsigned long long)h->rx, (unsigned long long)h->both_ways,
		 (unsigned long long)a->event_recs);
	fact(f, "shown", buf);
	snprintf(buf, sizeof(buf), "%llu blocks and %llu event records read; the filter passed the ones shown",
		 (unsigned long long)p->captured, (unsigned long long)p->event_recs);
	fact(f, "captured", buf);
	snprintf(buf, sizeof(buf), "%llu items (blocks or event records) in %llu loss records",
		 (unsigned long long)a->lost, (unsigned long long)a->loss_items);
	fact(f, "lost", buf);
	fact_time(f, h);
	fact_cpus(f, h);
	snprintf(buf, sizeof(buf), "%u kHz (%.3f GHz), read with rdtsc (not serialising)",
		 a->tsc_khz, a->tsc_khz / 1e6);
	fact(f, "TSC", buf);
	fact_calibration(f, h);
	fact_counters(f, h);
	fputs("</table>\n", f);
}

static void legend(FILE *f, const struct ns_acc *a)
{
	fputs("<div class=\"legend\">", f);
	for_each_region(id) {
		if (!a->region[id].records)
			continue;
		fprintf(f, "<span class=\"item\" data-region=\"%s\">", ns_region_name(id));
		swatch(f, id);
		fprintf(f, "%s <small>(%s, %s)</small></span>", ns_region_name(id),
			ns_region_layer(id),
			ns_region_is_receive(id) ? "receive" : "send");
	}
	fputs("</div>\n", f);
}

static void summary_row(FILE *f, struct ns_acc *a, unsigned int id)
{
	struct ns_region_acc *acc = &a->region[id];
	struct ns_summary s;

	fprintf(f, "<tr><td>");
	swatch(f, id);
	fprintf(f, "<a href=\"#dist-%s\">%s</a></td>", ns_region_name(id),
		ns_region_name(id));
	if (!ns_acc_summary(a, id, &s)) {
		fprintf(f, "<td class=\"num\">0</td><td colspan=\"8\">no value: every record OPEN</td><td class=\"num\">%llu</td></tr>\n",
			(unsigned long long)acc->open);
		return;
	}
	fprintf(f, "<td class=\"num\">%llu</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%llu</td></tr>\n",
		(unsigned long long)s.n, s.mean, s.min, s.p50, s.p90, s.p99,
		s.p999, s.max, ns_acc_us(a, 1) * acc->self_sum / s.n,
		(unsigned long long)acc->open);
}

static void summary(FILE *f, struct ns_acc *a)
{
	fputs("<h2 id=\"layers\">Per-layer latency</h2>\n", f);
	fputs("<p class=\"note\">Per packet: a region's records in a block summed (tcp: the copy in sendmsg and the header build), in µs. Records never stopped (OPEN) give no value and are counted on their own; self is the mean less the regions nested inside.</p>\n", f);
	fputs("<table class=\"stats\"><thead><tr><th>region</th><th class=\"num\">n</th><th class=\"num\">mean, µs</th><th class=\"num\">min</th><th class=\"num\">p50</th><th class=\"num\">p90</th><th class=\"num\">p99</th><th class=\"num\">p99.9</th><th class=\"num\">max</th><th class=\"num\">self mean</th><th class=\"num\">OPEN</th></tr></thead><tbody>\n", f);
	for_each_region(id)
		if (a->region[id].records)
			summary_row(f, a, id);
	fputs("</tbody></table>\n", f);
}

static void dist_figure(FILE *f, struct ns_acc *a, unsigned int id)
{
	struct ns_summary s;
	struct ns_dist_chart c = {
		.region = ns_region_name(id), .colour = ns_region_colour(id),
		.ticks = &a->region[id].ticks, .us_per_tick = ns_acc_us(a, 1),
		.sum = &s, .what = ns_acc_corrected(a) ? "corrected" : "raw",
	};

	if (!ns_acc_summary(a, id, &s))
		return;
	fprintf(f, "<figure class=\"dist\" id=\"dist-%s\" data-region=\"%s\" data-n=\"%llu\">",
		c.region, c.region, (unsigned long long)s.n);
	ns_chart_dist(f, &c);
	fprintf(f, "<figcaption>");
	swatch(f, id);
	fprintf(f, "<b>%s</b> (%s, %s): n %llu, mean %.3f, p50 %.3f, p90 %.3f, p99 %.3f, p99.9 %.3f, max %.3f µs%s</figcaption></figure>\n",
		c.region, ns_region_layer(id),
		ns_region_is_receive(id) ? "receive" : "send",
		(unsigned long long)s.n, s.mean, s.p50, s.p90, s.p99, s.p999,
		s.max, s.sampled ? "; percentiles and bins from the log-linear histogram, within 0.1 %" : "");
}

static void dists(FILE *f, struct ns_acc *a)
{
	fputs("<h2 id=\"dists\">Distributions</h2>\n", f);
	fputs("<p class=\"note\">Each region's value per packet, corrected where the table's are: how many packets fell in each bin, the share of packets at or below each value, and the nearest-rank percentiles. Axes in µs, logarithmic where the values span a factor of 20 or more.</p>\n", f);
	fputs("<div class=\"legend\"><span><svg width=\"14\" height=\"12\"><rect width=\"14\" height=\"12\" fill=\"#888\"/></svg> packets per bin (left axis, the region's colour)</span>"
	      "<span><svg width=\"24\" height=\"12\"><line class=\"cdf\" x1=\"0\" y1=\"6\" x2=\"24\" y2=\"6\"/></svg> cumulative % of packets (right axis)</span>"
	      "<span class=\"pct\"><svg width=\"10\" height=\"12\"><line x1=\"5\" y1=\"0\" x2=\"5\" y2=\"12\"/></svg> p50, p90, p99, p99.9</span></div>\n<div class=\"dists\">\n", f);
	for_each_region(id)
		dist_figure(f, a, id);
	fputs("</div>\n", f);
}

static void waterfalls(FILE *f, struct html *h)
{
	const struct ns_acc *a = &h->p->acc;
	const struct ns_shortlist *k = &h->shortlist;
	uint64_t others = k->offered - k->nfirst;

	fputs("<h2 id=\"packets\">Packets</h2>\n", f);
	fprintf(f, "<p class=\"note\">One row per block (a packet), its regions as bars from NSI at the TSC's raw readings, nested regions drawn inside the one around them; colour by layer, lighter on the receive path; a black tick marks a region never stopped (OPEN), a faded bar one measured before a split (SHARED), a dashed outline intervals summed (MERGED). Hover a bar for its values. %u of %llu blocks drawn: ",
		k->nfirst + k->nslow, (unsigned long long)k->offered);
	if (!others)
		fputs("all of them.</p>\n", f);
	else
		fprintf(f, "the first %u as they came, then the %u slowest of the other %llu by span (NSI to the last STOP), slowest first.</p>\n",
			k->nfirst, k->nslow, (unsigned long long)others);
	legend(f, a);
	fputs("<div id=\"wf-info\">hover a bar</div>\n", f);
	fprintf(f, "<h3>The first %u blocks</h3>\n", k->nfirst);
	ns_waterfall(f, a, k->first, k->nfirst, "wf-first", h->live);
	if (!k->nslow)
		return;
	fprintf(f, "<h3>The %u slowest of the other %llu blocks</h3>\n", k->nslow,
		(unsigned long long)others);
	ns_waterfall(f, a, k->slow, k->nslow, "wf-slowest", h->live);
}

static double largest_mean(struct ns_acc *a, unsigned int e)
{
	double most = 0;

	for_each_region(id) {
		struct ns_summary c;

		if (ns_stats_summary(&a->region[id].ev[e], 1, &c) && c.mean > most)
			most = c.mean;
	}
	return most;
}

static void counter_cells(FILE *f, struct ns_acc *a, unsigned int id,
			  const double *most)
{
	for (unsigned int e = 0; e < a->nevents; e++) {
		struct ns_summary c;

		if (!ns_stats_summary(&a->region[id].ev[e], 1, &c)) {
			fputs("<td class=\"num\">-</td><td class=\"num\">-</td><td class=\"num\">-</td>", f);
			continue;
		}
		fprintf(f, "<td class=\"num\"><span class=\"cbar\" style=\"width:%.0fpx\"></span>%.1f</td><td class=\"num\">%.0f</td><td class=\"num\">%.0f</td>",
			most[e] > 0 ? 80 * c.mean / most[e] : 0, c.mean, c.p50, c.p99);
	}
}

static void counters(FILE *f, struct ns_acc *a)
{
	double most[NSL_MAX_EVENTS];
	bool ipc = ns_acc_has_ipc(a);
	char lbl[16];

	fputs("<h2 id=\"counters\">Counters per layer</h2>\n<p class=\"note\">Counter deltas per packet (a region's records in a block summed), corrected for the macros' own counts where the values are; records with an untrusted reading (INVALID) left out. The bar is the mean, against the largest mean of that counter.</p>\n", f);
	fputs("<table class=\"stats\"><thead><tr><th>region</th>", f);
	for (unsigned int e = 0; e < a->nevents; e++) {
		fputs("<th class=\"num\">", f);
		ns_ml_text(f, ns_acc_event_label(a, e, lbl, sizeof(lbl)));
		fputs(" mean</th><th class=\"num\">p50</th><th class=\"num\">p99</th>", f);
		most[e] = largest_mean(a, e);
	}
	fputs(ipc ? "<th class=\"num\">IPC</th></tr></thead><tbody>\n" : "</tr></thead><tbody>\n", f);
	for_each_region(id) {
		if (!a->region[id].records)
			continue;
		fputs("<tr><td>", f);
		swatch(f, id);
		fprintf(f, "%s</td>", ns_region_name(id));
		counter_cells(f, a, id, most);
		if (ipc && ns_acc_ipc(a, id) >= 0)
			fprintf(f, "<td class=\"num\">%.2f</td>", ns_acc_ipc(a, id));
		else if (ipc)
			fputs("<td class=\"num\">-</td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
}

static void conn_table(FILE *f, struct ns_conn *c, uint32_t tsc_khz)
{
	fprintf(f, "<h3>conn 0x%llx", (unsigned long long)c->conn);
	if (c->have_ports) {
		char l[32], r[32];

		ns_conn_endpoint(c, true, l, sizeof(l));
		ns_conn_endpoint(c, false, r, sizeof(r));
		ns_ml_printf(f, ": local %s, remote %s", l, r);
	}
	fputs("</h3>\n<table class=\"conn\"><thead><tr><th>event</th><th class=\"num\">n</th><th class=\"num\">mean size, bytes</th><th class=\"num\">min</th><th class=\"num\">max</th><th class=\"num\">mean spacing, µs</th><th class=\"num\">spacing CV</th><th class=\"num\">TSO</th></tr></thead><tbody>\n", f);
	for (unsigned int k = 0; k < NSL_EV_MAX - 1; k++) {
		unsigned int type = ns_magnet_order[k];
		struct ns_layer_summary s;

		if (!ns_magnet_layer(&c->layer[type], tsc_khz, &s))
			continue;
		fprintf(f, "<tr><td>%s</td><td class=\"num\">%llu</td><td class=\"num\">%.1f</td><td class=\"num\">%u</td><td class=\"num\">%u</td>",
			ns_event_type_name(type), (unsigned long long)s.n,
			s.bytes_mean, s.bytes_min, s.bytes_max);
		if (s.gaps)
			fprintf(f, "<td class=\"num\">%.3f</td><td class=\"num\">%.3f</td>",
				s.gap_mean_us, s.gap_cv);
		else
			fputs("<td class=\"num\">-</td><td class=\"num\">-</td>", f);
		fprintf(f, "<td class=\"num\">%llu</td></tr>\n", (unsigned long long)s.tso);
	}
	fputs("</tbody></table>\n", f);
}

static void table3(FILE *f, struct ns_pipeline *p)
{
	struct ns_magnet *m = &p->conns;

	fprintf(f, "<h2 id=\"magnet\">Application vs wire (MAGNeT Table III)</h2>\n<p class=\"note\">Per connection, from %llu event records: how many events at each layer, of what size, how far apart (consecutive events of the connection and type, by TSC). What the application wrote (SOCK_SEND) against what the stack made of it.</p>\n",
		(unsigned long long)m->events);
	for (size_t i = 0; i < m->n; i++)
		if (m->conn[i].accounted)
			conn_table(f, &m->conn[i], p->acc.clock.tsc_khz);
}

static void nav(FILE *f, const struct ns_acc *a, bool magnet)
{
	fputs("<p class=\"note\"><a href=\"#layers\">per-layer latency</a> · <a href=\"#dists\">distributions</a> · <a href=\"#packets\">packets</a>", f);
	if (a->nevents)
		fputs(" · <a href=\"#counters\">counters</a>", f);
	if (magnet)
		fputs(" · <a href=\"#magnet\">MAGNeT Table III</a>", f);
	fputs("</p>\n", f);
}

static void page(FILE *f, struct html *h)
{
	struct ns_acc *a = &h->p->acc;
	bool magnet = h->p->conns.events > 0;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>NetSlice: ", f);
	ns_ml_text(f, h->source);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", css);
	fputs("<h1>NetSlice per-packet, per-layer latency: ", f);
	ns_ml_text(f, h->source);
	fputs("</h1>\n", f);
	facts(f, h);
	nav(f, a, magnet);
	summary(f, a);
	dists(f, a);
	waterfalls(f, h);
	if (a->nevents)
		counters(f, a);
	if (magnet)
		table3(f, h->p);
	fprintf(f, "<p class=\"note\">Written by nsdump %s.</p>\n<script>%s</script>\n</body>\n</html>\n",
		NSDUMP_VERSION, script);
}

static int html_finish(struct ns_sink *s, char *why, size_t len)
{
	struct html *h = (struct html *)s;
	int ret;

	if (!h->out)
		return 0;
	ns_shortlist_finish(&h->shortlist);
	page(h->out, h);
	ret = ns_view_close(h->out, h->path, why, len);
	h->out = NULL;
	return ret;
}

static void html_free(struct ns_sink *s)
{
	struct html *h = (struct html *)s;

	if (h->out && h->out != stdout)
		fclose(h->out);
	ns_shortlist_free(&h->shortlist);
	free(h->path);
	free(h->source);
	free(h);
}

static const struct ns_sink_ops html_ops = {
	.item	= html_item,
	.finish	= html_finish,
	.free	= html_free,
};

struct ns_sink *ns_html_open(const char *path, struct ns_pipeline *p,
			     const char *source, const struct nsl_info *info,
			     bool live, char *why, size_t len)
{
	struct html *h = calloc(1, sizeof(*h));

	if (!h ||
	    ns_shortlist_init(&h->shortlist, NS_HTML_FIRST, NS_HTML_SLOWEST) ||
	    !(h->path = strdup(path)) || !(h->source = strdup(source))) {
		snprintf(why, len, "--html: out of memory");
		if (h)
			html_free(&h->sink);
		return NULL;
	}
	h->sink.ops = &html_ops;
	h->p = p;
	h->live = live;
	h->ncpus = info->ncpus;
	h->out = ns_view_open(path, why, len);
	if (!h->out) {
		html_free(&h->sink);
		return NULL;
	}
	/* Table III whenever the capture has event records, -M or not */
	ns_pipeline_magnet(p);
	return &h->sink;
}
