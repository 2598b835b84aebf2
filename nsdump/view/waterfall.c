// SPDX-License-Identifier: GPL-2.0
#include "lib/devname.h"
#include "source/decode.h"
#include "view/chart.h"
#include "view/flags.h"
#include "view/markup.h"
#include "view/nest.h"
#include "view/waterfall.h"

/* The bars' drawing: width, row height, inset per nesting level, pixels. */
enum { BAR_X0 = 8, BAR_W = 640, SVG_W = BAR_X0 + BAR_W + 24, ROW_H = 20,
       INSET = 3, MIN_H = 4, AXIS_H = 40 };

/* How a table is drawn, the same for every row of it. */
struct wf {
	const struct ns_acc *a;
	struct ns_scale x;
	bool live;	/* devices named as on this host (devname.h) */
	bool devices;	/* a row crossed devices: the table has their column */
};

static void record_title(FILE *f, const struct wf *w,
			 const struct ns_listed *row, unsigned int k)
{
	const struct ns_acc *a = w->a;
	const struct nsl_record *r = &row->b.rec[k];
	char fl[96], lbl[16], dev[NS_DEV_TEXT];

	ns_ml_printf(f, "%s: ", ns_region_name(r->region));
	if (r->flags & NSL_RF_OPEN)
		ns_ml_printf(f, "OPEN (never stopped) from +%.3f µs",
			     ns_acc_us(a, r->start));
	else
		ns_ml_printf(f, "%.3f µs %s, %.3f µs raw (%llu ticks) from +%.3f µs",
			     ns_acc_us(a, row->corr[k].ticks),
			     ns_acc_corrected(a) ? "corrected" : "(not corrected)",
			     ns_acc_us(a, r->ticks), (unsigned long long)r->ticks,
			     ns_acc_us(a, r->start));
	/* the region names a layer; on a VLAN or a veth, several devices have it */
	if (ns_dev_record_text(&row->b, k, w->live, dev, sizeof(dev)))
		ns_ml_printf(f, "; dev %s", dev);
	ns_ml_printf(f, "; depth %u, cpu %u", r->depth, r->cpu);
	if (r->nmerged > 1)
		ns_ml_printf(f, ", %u intervals summed", r->nmerged);
	ns_record_flags(r->flags, fl, sizeof(fl));
	if (fl[0])
		ns_ml_printf(f, ", flags %s", fl);
	for (unsigned int e = 0; e < row->b.nevents; e++) {
		ns_ml_printf(f, "; %s ", ns_acc_event_label(a, e, lbl, sizeof(lbl)));
		ns_ml_printf(f, "%llu", (unsigned long long)r->count[e]);
	}
}

static void bar(FILE *f, const struct wf *w, const struct ns_listed *row,
		const struct ns_nest *n, unsigned int k)
{
	const struct ns_acc *a = w->a;
	const struct ns_scale *x = &w->x;
	const struct nsl_record *r = &row->b.rec[k];
	const struct ns_span *s = &n->span[k];
	double x0 = ns_scale_px(x, ns_acc_us(a, s->start));
	double inset = INSET * s->level, h = ROW_H - 2 * inset;
	const char *cls = r->flags & NSL_RF_SHARED ? "bar shared" :
			  r->flags & NSL_RF_MERGED ? "bar merged" : "bar";

	if (s->open) {
		fprintf(f, "<rect class=\"open-mark\" data-rec=\"%u\" x=\"%.2f\" y=\"0\" width=\"2\" height=\"%d\"><title>",
			k, x0, ROW_H);
		record_title(f, w, row, k);
		fputs("</title></rect>", f);
		return;
	}
	if (h < MIN_H) {
		inset = (ROW_H - MIN_H) / 2.0;
		h = MIN_H;
	}
	fprintf(f, "<rect class=\"%s\" data-rec=\"%u\" data-region=\"%s\" data-level=\"%u\" x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%.1f\" fill=\"%s\"><title>",
		cls, k, ns_region_name(r->region), s->level, x0, inset,
		ns_scale_px(x, ns_acc_us(a, s->end)) - x0, h,
		ns_region_colour(r->region));
	record_title(f, w, row, k);
	if (s->cut)
		ns_ml_printf(f, " (drawn shorter to nest: its records overlap)");
	fputs("</title></rect>", f);
}

/*
 * The devices crossed, as the line view names them; a row without any
 * leaves its cell empty, and a table without any has no such column.
 */
static void devices_cell(FILE *f, const struct wf *w, const struct nsl_block *b)
{
	char path[NS_DEV_PATH];

	if (!w->devices)
		return;
	ns_dev_path(b, w->live, path, sizeof(path));
	fputs("<td class=\"wf-dev\">", f);
	ns_ml_text(f, path);
	fputs("</td>", f);
}

static void cells(FILE *f, const struct wf *w, const struct ns_listed *row,
		  const struct ns_nest *n)
{
	const struct ns_acc *a = w->a;
	const struct nsl_block *b = &row->b;
	char flow[128], fl[128];

	ns_block_flow_text(b, flow, sizeof(flow));
	ns_block_flags(b->flags, fl, sizeof(fl));
	fprintf(f, "<td class=\"num\">%llu</td><td class=\"num\">%.3f</td><td class=\"num\">%u</td><td>%s</td><td>",
		(unsigned long long)row->ordinal + 1, ns_acc_time_us(a, b),
		b->hdr.cpu, b->dir == NSL_DIR_RX ? "rx" : "tx");
	ns_ml_text(f, flow);
	if (b->proto == 6 && b->tcp_seq)
		fprintf(f, " seq %u", b->tcp_seq);
	fputs("</td>", f);
	devices_cell(f, w, b);
	fprintf(f, "<td class=\"num\">%u</td><td>", b->len);
	ns_ml_text(f, fl);
	fprintf(f, "</td><td class=\"num\">%.3f</td>", ns_acc_us(a, n->end));
}

static void row_html(FILE *f, const struct wf *w, const struct ns_listed *row)
{
	struct ns_nest n;

	ns_nest_block(&row->b, &n);
	fprintf(f, "<tr class=\"wf-row\" data-block=\"%llu\">",
		(unsigned long long)row->ordinal);
	cells(f, w, row, &n);
	fprintf(f, "<td class=\"wf-bars\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">",
		SVG_W, ROW_H);
	for (unsigned int k = 0; k < n.nrec; k++)
		bar(f, w, row, &n, k);
	fputs("</svg></td></tr>\n", f);
}

void ns_waterfall(FILE *f, const struct ns_acc *a, const struct ns_listed *rows,
		  unsigned int n, const char *id, bool live)
{
	struct wf w = { .a = a, .live = live };
	double most = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct ns_nest nest;

		ns_nest_block(&rows[i].b, &nest);
		if (ns_acc_us(a, nest.end) > most)
			most = ns_acc_us(a, nest.end);
		w.devices |= rows[i].b.ndev > 0;
	}
	ns_scale_linear(&w.x, most, BAR_X0, BAR_X0 + BAR_W);
	fprintf(f, "<table class=\"waterfall\" id=\"%s\" data-px0=\"%d\" data-px-per-us=\"%.6f\">\n",
		id, BAR_X0, BAR_W / (w.x.hi - w.x.lo));
	fputs("<thead><tr><th>#</th><th>time, µs</th><th>cpu</th><th>dir</th><th>packet</th>", f);
	if (w.devices)
		fputs("<th>devices</th>", f);
	fputs("<th>len</th><th>flags</th><th>span, µs</th>", f);
	fprintf(f, "<th class=\"wf-axis\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">",
		SVG_W, AXIS_H);
	ns_chart_x_axis(f, &w.x, 4, "µs from NSI (the block's first TSC reading), raw");
	fputs("</svg></th></tr></thead>\n<tbody>\n", f);
	for (unsigned int i = 0; i < n; i++)
		row_html(f, &w, &rows[i]);
	fputs("</tbody></table>\n", f);
}
