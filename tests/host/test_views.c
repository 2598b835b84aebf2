// SPDX-License-Identifier: GPL-2.0
/*
 * The drawn views' pieces (--html, --export chrome-trace): the cumulative
 * counts the charts draw, a block's records as nested spans, which blocks
 * the waterfall keeps, axes, numbers, escaping, a packet's name.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "view/chart.h"
#include "view/markup.h"
#include "view/nest.h"
#include "view/shortlist.h"
#include "stage/stats.h"
#include "tap.h"
#include "tests.h"

static void count_le(void)
{
	static const uint64_t v[] = { 5, 1, 3, 3, 9 };
	struct ns_stats s;
	bool within = true;

	ns_stats_init(&s, 0);
	for (unsigned int i = 0; i < 5; i++)
		ns_stats_add(&s, v[i]);
	tap_ok(TAP_IS(ns_stats_count_le(&s, 0) == 0) &&
	       TAP_IS(ns_stats_count_le(&s, 1) == 1) &&
	       TAP_IS(ns_stats_count_le(&s, 3) == 3) &&
	       TAP_IS(ns_stats_count_le(&s, 4) == 3) &&
	       TAP_IS(ns_stats_count_le(&s, 9) == 5) &&
	       TAP_IS(ns_stats_count_le(&s, 100) == 5),
	       "count_le, every value kept: exact ranks of 1 3 3 5 9");
	ns_stats_free(&s);

	/* past the store: from the histogram, never under, over by its bound */
	ns_stats_init(&s, 4);
	for (uint64_t x = 1; x <= 100000; x++)
		ns_stats_add(&s, x);
	for (uint64_t x = 1; x <= 100000; x += 997) {
		uint64_t c = ns_stats_count_le(&s, x);

		within &= c >= x && c <= x + x * NS_HIST_REL_ERROR + 1;
	}
	tap_ok(TAP_IS(within) && TAP_IS(ns_stats_count_le(&s, 0) == 0) &&
	       TAP_IS(ns_stats_count_le(&s, 100000) == 100000),
	       "count_le from the histogram: between the truth and its bound above");
	ns_stats_free(&s);
}

static void rec(struct nsl_block *b, unsigned int region, unsigned int depth,
		uint64_t start, uint64_t ticks, uint16_t flags)
{
	struct nsl_record *r = &b->rec[b->nrec++];

	r->region = region;
	r->depth = depth;
	r->start = start;
	r->ticks = ticks;
	r->flags = flags;
	r->nmerged = flags & NSL_RF_MERGED ? 2 : 1;
}

static bool span_is(const struct ns_nest *n, unsigned int k, uint64_t start,
		    uint64_t end, int parent, unsigned int level, bool cut)
{
	const struct ns_span *s = &n->span[k];

	if (s->start == start && s->end == end && s->parent == parent &&
	    s->level == level && s->cut == cut)
		return true;
	printf("# record %u: %llu..%llu parent %d level %u cut %d\n", k,
	       (unsigned long long)s->start, (unsigned long long)s->end,
	       s->parent, s->level, s->cut);
	return false;
}

static void nest(void)
{
	struct nsl_block b;
	struct ns_nest n;

	/* gen.h's blocks: write runs past nic's start */
	memset(&b, 0, sizeof(b));
	rec(&b, NSL_R_WRITE, 0, 0, 9000, 0);
	rec(&b, NSL_R_TCP, 1, 10, 300, 0);
	rec(&b, NSL_R_NIC, 0, 2900, 30000, 0);
	ns_nest_block(&b, &n);
	tap_ok(TAP_IS(span_is(&n, 0, 0, 2900, -1, 0, true)) &&
	       TAP_IS(span_is(&n, 1, 10, 310, 0, 1, false)) &&
	       TAP_IS(span_is(&n, 2, 2900, 32900, -1, 0, false)) &&
	       TAP_IS(n.end == 32900),
	       "nest: a record ends where the next one at its depth starts");

	/* MERGED intervals drawn from the first start; a child past its parent */
	memset(&b, 0, sizeof(b));
	rec(&b, NSL_R_WRITE, 0, 0, 1000, 0);
	rec(&b, NSL_R_UDP, 1, 10, 500, NSL_RF_MERGED);
	rec(&b, NSL_R_IP, 1, 400, 900, 0);
	ns_nest_block(&b, &n);
	tap_ok(TAP_IS(span_is(&n, 1, 10, 400, 0, 1, true)) &&
	       TAP_IS(span_is(&n, 2, 400, 1000, 0, 1, true)),
	       "nest: MERGED cut at the next sibling, a child cut at its parent's end");

	/* an OPEN record has no span: what it holds is bounded by its parent */
	memset(&b, 0, sizeof(b));
	rec(&b, NSL_R_WRITE, 0, 0, 0, NSL_RF_OPEN);
	rec(&b, NSL_R_TCP, 1, 10, 100, 0);
	rec(&b, NSL_R_QDISC, 2, 20, 50, 0);
	ns_nest_block(&b, &n);
	tap_ok(TAP_IS(n.span[0].open) &&
	       TAP_IS(span_is(&n, 1, 10, 110, -1, 0, false)) &&
	       TAP_IS(span_is(&n, 2, 20, 70, 1, 1, false)) &&
	       TAP_IS(n.end == 110),
	       "nest: an OPEN parent is skipped, its children a level up");

	/* loopback: a send part, then a receive part; nesting within each */
	memset(&b, 0, sizeof(b));
	rec(&b, NSL_R_WRITE, 0, 0, 100, 0);
	rec(&b, NSL_R_NIC, 0, 100, 100, 0);
	rec(&b, NSL_R_RX_LINK, 0, 200, 100, 0);
	rec(&b, NSL_R_BACKLOG, 1, 210, 50, 0);
	rec(&b, NSL_R_COPY, 0, 300, 100, 0);
	ns_nest_block(&b, &n);
	tap_ok(TAP_IS(n.nparts == 2) && TAP_IS(!n.part[0].receive) &&
	       TAP_IS(n.part[0].first == 0) && TAP_IS(n.part[0].end == 2) &&
	       TAP_IS(n.part[1].receive) && TAP_IS(n.part[1].first == 2) &&
	       TAP_IS(n.part[1].end == 5) && TAP_IS(n.span[3].part == 1),
	       "nest: loopback's block is a send part and a receive part");

	/* forwarded: received, then sent on */
	memset(&b, 0, sizeof(b));
	rec(&b, NSL_R_RX_NIC, 0, 0, 100, 0);
	rec(&b, NSL_R_RX_LINK, 0, 100, 100, 0);
	rec(&b, NSL_R_LINK, 0, 200, 100, 0);
	rec(&b, NSL_R_QDISC, 1, 210, 50, 0);
	rec(&b, NSL_R_NIC, 0, 300, 100, 0);
	ns_nest_block(&b, &n);
	tap_ok(TAP_IS(n.nparts == 2) && TAP_IS(n.part[0].receive) &&
	       TAP_IS(n.part[0].end == 2) && TAP_IS(!n.part[1].receive) &&
	       TAP_IS(n.part[1].end == 5),
	       "nest: a forwarded block is a receive part, then a send part");

	/* a corrupt file's ticks do not wrap */
	memset(&b, 0, sizeof(b));
	rec(&b, NSL_R_WRITE, 0, 10, UINT64_MAX, 0);
	ns_nest_block(&b, &n);
	tap_ok(span_is(&n, 0, 10, UINT64_MAX, -1, 0, true),
	       "nest: start + ticks past 2^64 ends at 2^64 - 1");
}

static void shortlist(void)
{
	static const uint64_t span[] = { 5, 1, 9, 2, 7, 7, 3, 8 };
	struct ns_rec_corr corr[NSL_MAX_RECORDS] = { 0 };
	struct nsl_block b;
	struct ns_shortlist p;

	memset(&b, 0, sizeof(b));
	if (!tap_ok(!ns_shortlist_init(&p, 3, 2), "shortlist: init"))
		return;
	for (unsigned int i = 0; i < 8; i++) {
		b.seq = 100 + i;
		ns_shortlist_offer(&p, &b, corr, span[i]);
	}
	ns_shortlist_finish(&p);
	tap_ok(TAP_IS(p.offered == 8) && TAP_IS(p.nfirst == 3) &&
	       TAP_IS(p.first[0].ordinal == 0) &&
	       TAP_IS(p.first[2].ordinal == 2) &&
	       TAP_IS(p.first[2].b.seq == 102),
	       "shortlist: the first 3 as they came, each a copy of its block");
	tap_ok(TAP_IS(p.nslow == 2) && TAP_IS(p.slow[0].ordinal == 7) &&
	       TAP_IS(p.slow[0].span == 8) && TAP_IS(p.slow[1].ordinal == 4) &&
	       TAP_IS(p.slow[1].b.seq == 104),
	       "shortlist: the 2 slowest of the others, slowest first, the earlier of a tie");
	ns_shortlist_free(&p);
}

static bool same(const char *got, const char *want)
{
	if (!strcmp(got, want))
		return true;
	printf("# got \"%s\", want \"%s\"\n", got, want);
	return false;
}

static bool num_is(double v, const char *want)
{
	char buf[32];

	ns_num_text(v, buf, sizeof(buf));
	return same(buf, want);
}

static bool ticks_are(const struct ns_scale *s, const char *want)
{
	double t[32];
	unsigned int n = ns_scale_ticks(s, t, 32);
	char got[256] = "", num[32];

	for (unsigned int i = 0; i < n; i++) {
		ns_num_text(t[i], num, sizeof(num));
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", num);
	}
	return same(got, want);
}

static void axes(void)
{
	struct ns_scale s;

	tap_ok(TAP_IS(num_is(0, "0")) && TAP_IS(num_is(-0.0, "0")) &&
	       TAP_IS(num_is(0.125, "0.125")) && TAP_IS(num_is(2.5, "2.5")) &&
	       TAP_IS(num_is(12.34, "12.3")) && TAP_IS(num_is(1, "1")) &&
	       TAP_IS(num_is(4500, "4500")) && TAP_IS(num_is(0.0005, "0.0005")),
	       "numbers: about four digits, no trailing zeros");
	ns_scale_fit(&s, 0.9, 9.91, 0, 100);
	tap_ok(TAP_IS(!s.log) && TAP_IS(s.lo == 0) && TAP_IS(s.hi == 10) &&
	       TAP_IS(ticks_are(&s, "0 2 4 6 8 10")) &&
	       TAP_IS(ns_scale_px(&s, 5) == 50),
	       "scale: less than a factor 20, linear from 0 to a round number");
	ns_scale_fit(&s, 0.14, 9.5, 0, 100);
	tap_ok(TAP_IS(s.log) && TAP_IS(s.lo == 0.1) && TAP_IS(s.hi == 10) &&
	       TAP_IS(ticks_are(&s, "0.1 0.2 0.5 1 2 5 10")) &&
	       TAP_IS(ns_scale_px(&s, 1) == 50),
	       "scale: two decades, log10, 1-2-5 ticks");
	ns_scale_fit(&s, 0.19, 151, 0, 100);
	tap_ok(TAP_IS(s.log) && TAP_IS(ticks_are(&s, "0.1 1 10 100 1000")),
	       "scale: four decades, the powers of ten");
	ns_scale_fit(&s, 0, 0, 0, 100);
	tap_ok(TAP_IS(!s.log) && TAP_IS(s.hi == 1), "scale: all zero, 0 to 1");
}

static void escaping(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ns_ml_text(f, "<a href=\"x\">&'</a>\x01\t\xc3\xa9\xff");
	fclose(f);
	tap_ok(!strcmp(buf, "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
			    "\xef\xbf\xbd\t\xc3\xa9\xef\xbf\xbd"),
	       "markup: & < > \" ' as references, controls and bad UTF-8 as U+FFFD");
	free(buf);
}

static bool flow_is(const struct nsl_block *b, const char *want)
{
	char buf[128];

	ns_block_flow_text(b, buf, sizeof(buf));
	return same(buf, want);
}

static void flow(void)
{
	struct nsl_block b;
	uint32_t a = htonl(0xc0000201), z = htonl(0xc0000202);

	memset(&b, 0, sizeof(b));
	tap_ok(flow_is(&b, ""), "flow: no IP header seen, nothing");
	b.family = AF_INET;
	b.proto = 6;
	b.sport = 43210;
	b.dport = 5201;
	tap_ok(flow_is(&b, "tcp 43210 > 5201"), "flow: ports only when addresses were not asked for");
	memcpy(b.saddr, &a, 4);
	memcpy(b.daddr, &z, 4);
	tap_ok(flow_is(&b, "tcp 192.0.2.1.43210 > 192.0.2.2.5201"), "flow: IPv4 as tcpdump");
	memset(b.saddr, 0, 16);
	memset(b.daddr, 0, 16);
	b.family = AF_INET6;
	b.proto = 17;
	b.saddr[0] = 0x20;
	b.saddr[1] = 0x01;
	b.saddr[15] = 1;
	b.daddr[15] = 1;
	tap_ok(flow_is(&b, "udp [2001::1].43210 > [::1].5201"), "flow: IPv6 in brackets");
	b.proto = 47;
	tap_ok(flow_is(&b, "proto 47"), "flow: another protocol by number");
}

void test_views(void)
{
	count_le();
	nest();
	shortlist();
	axes();
	escaping();
	flow();
}
