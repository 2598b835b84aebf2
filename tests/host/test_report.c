// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "source/decode.h"
#include "gen.h"
#include "view/report.h"
#include "tap.h"
#include "tests.h"
#include "tpipe.h"
#include "view/utf8.h"

static void feed(struct tpipe *t, const struct gen_opts *g)
{
	size_t len;
	unsigned char *p = gen_stream(g, &len);

	tpipe_bytes(t, p, len);
	free(p);
}

static void lines(void)
{
	struct gen_opts g = { .n = 4, .loss_every = 2, .open_every = 4 };
	struct tpipe t;
	char *text;

	tpipe_init(&t, NULL, &ns_plain_printer);
	feed(&t, &g);
	ns_pipeline_idle(&t.p);		/* what waits for time order */
	fflush(t.out);
	text = t.text;
	tap_ok(!strcmp(text,
		"22:13:20.000000 conn 0x2a tcp tx len 1448 seq 1000 cpu 0: write 1.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000\n"
		"-- 5 items lost here (cpu 1, first seq 100001) --\n"
		"22:13:20.000001 conn 0x2a tcp tx len 1448 seq 2448 cpu 1: write 2.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000\n"
		"22:13:20.000002 conn 0x2a tcp tx len 1448 seq 3896 cpu 0: write 3.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000\n"
		"-- 5 items lost here (cpu 1, first seq 100003) --\n"
		"22:13:20.000003 conn 0x2a tcp tx len 1448 seq 5344 cpu 1: write 4.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic open\n"),
	       "report: per-packet and loss lines, exact text");
	if (tap_failed)
		printf("# %s", text);
	tap_ok(TAP_IS(t.p.acc.blocks == 4) && TAP_IS(t.p.acc.lost == 10) &&
	       TAP_IS(t.p.acc.loss_items == 2),
	       "report: 4 blocks, 10 lost in 2 loss items");
	tpipe_free(&t);
}

/* gen.h's flows: addresses and ports, or the connection without them. */
static void flow_lines(void)
{
	struct gen_opts g = { .n = 12, .flows = true };
	static const char *const want[] = {
		"22:13:20.000000 192.0.2.1:43210 > 192.0.2.2:5201 tcp tx len 1500 seq 1000 cpu 0: write 1.000 ",
		"22:13:20.000003 192.0.2.53:53 > 192.0.2.1:40000 udp rx len 200 cpu 1: write 4.000 ",
		"22:13:20.000005 [2001:db8::2]:80 > [2001:db8::1]:43211 tcp rx len 1440 seq 8240 cpu 1: ",
		"22:13:20.000008 192.0.2.1 > 198.51.100.7 icmp tx len 84 cpu 0: ",
		"22:13:20.000009 conn 0x0 tx len 42 cpu 1: ",
		"22:13:20.000010 2001:db8::1 > 2001:db8::2 icmp6 tx len 104 cpu 0: ",
	};
	struct tpipe t;
	bool all = true;

	tpipe_init(&t, NULL, &ns_plain_printer);
	feed(&t, &g);
	tpipe_finish(&t);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		all &= strstr(t.text, want[i]) != NULL;
	tap_ok(all, "report: flows with addresses, IPv6 bracketed, ICMP without ports, none without IP");
	tpipe_free(&t);

	g.no_addr = true;
	tpipe_init(&t, NULL, &ns_plain_printer);
	feed(&t, &g);
	tpipe_finish(&t);
	tap_ok(TAP_IS(strstr(t.text, "\n22:13:20.000001 conn 0x10 5201 > 43210 tcp rx len 52 seq 2448 cpu 1: ")) &&
	       TAP_IS(strstr(t.text, "\n22:13:20.000008 conn 0x0 icmp tx len 84 cpu 0: ")),
	       "report: no addresses: the connection, the ports where there are some");
	tpipe_free(&t);
}

/*
 * Blocks reach their rings when freed, not in tsc0 order: the lines come
 * out in time order all the same, -ttt's deltas never negative.
 */
static void time_order(void)
{
	static const unsigned int order[] = { 2, 0, 3, 1, 5, 4 };
	static const char first[] =
		" 00:00:00.000000 conn 0x2a tcp tx len 1448 seq 1000 cpu 0: write 1.000 ";
	struct gen_opts g = { .n = 6 };
	unsigned char buf[sizeof(struct nsl_block)];
	struct tpipe t;

	tpipe_init(&t, NULL, &ns_plain_printer);
	ns_tstamp_init(&t.r.ts, NS_TS_DELTA);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		tpipe_bytes(&t, buf, gen_block(&g, order[i], buf));
	tpipe_finish(&t);
	tap_ok(TAP_IS(!strncmp(t.text, first, strlen(first))) &&
	       TAP_IS(strstr(t.text, "\n 00:00:00.000001 conn 0x2a tcp tx len 1448 seq 2448 cpu 1: write 2.000 ")) &&
	       TAP_IS(strstr(t.text, "\n 00:00:00.000001 conn 0x2a tcp tx len 1448 seq 8240 cpu 1: write 6.000 ")) &&
	       TAP_IS(!strstr(t.text, "-00:")) && TAP_IS(t.r.lines.late == 0),
	       "report: blocks out of order come out in time order, -ttt 1 us apart");
	if (tap_failed)
		printf("# %s", t.text);
	tpipe_free(&t);
}

static void table(void)
{
	struct gen_opts g = { .n = 20, .open_every = 4, .nevents = 2 };
	struct tpipe t;
	struct ns_acc *r = &t.p.acc;
	struct ns_summary s;

	tpipe_init(&t, NULL, NULL);
	feed(&t, &g);

	/* write: 1..10 us twice over */
	ns_acc_summary(r, NSL_R_WRITE, &s);
	tap_ok(TAP_IS(s.n == 20) && TAP_IS(s.mean == 5.5) &&
	       TAP_IS(s.p50 == 5) && TAP_IS(s.p99 == 10) &&
	       TAP_IS(s.min == 1) && TAP_IS(s.max == 10),
	       "table: write n 20 mean 5.5 p50 5 p99 10");
	/* tcp: two records per block summed: 420 ticks = 0.14 us */
	ns_acc_summary(r, NSL_R_TCP, &s);
	TAP_NEAR(s.mean, 0.14, "table: tcp sums its two records per block");
	tap_ok(TAP_IS(s.n == 20) &&
	       TAP_IS(r->region[NSL_R_TCP].records == 40) && TAP_IS(s.cv == 0),
	       "table: tcp n 20 from 40 records, CV 0");
	/* nic: OPEN in blocks 3, 7, 11, 15, 19 */
	ns_acc_summary(r, NSL_R_NIC, &s);
	tap_ok(TAP_IS(s.n == 15) && TAP_IS(r->region[NSL_R_NIC].open == 5) &&
	       TAP_IS(s.mean == 10),
	       "table: nic excludes 5 OPEN records, n 15 mean 10");
	/* counters: ticks/10 + e per record; tcp = 30 + 12 + 2e */
	TAP_NEAR(r->region[NSL_R_TCP].ev_sum[1] / r->region[NSL_R_TCP].ev_n[1], 44,
		 "table: tcp ev1 mean 44 (summed per block)");
	TAP_EQ(r->region[NSL_R_NIC].ev_n[0], 15, "table: nic counter mean over 15 closed blocks");
	tap_ok(TAP_IS(r->nevents == 2) &&
	       TAP_IS(!r->region[NSL_R_RX_TCP].records),
	       "table: nevents 2, absent regions empty");

	char *text = tpipe_table(&t, &ns_plain_printer);

	tap_ok(TAP_IS(strstr(text, "RAW values, not corrected for macro overhead")) &&
	       TAP_IS(strstr(text, "rdtsc (not serialising)")) &&
	       TAP_IS(strstr(text, "\nwrite            20       5.500      5.000      10.000        1.000      10.000   0.522        0       4.660         1650.0       1500       3000         1651.0       1501       3001\n")) &&
	       TAP_IS(strstr(text, "\nnic              15      10.000     10.000      10.000       10.000      10.000   0.000        5      10.000         3000.0       3000       3000         3001.0       3001       3001\n")) &&
	       TAP_IS(strstr(text, "\n# counter columns: mean, p50, p99 of the delta per packet; 0 invalid counter readings excluded\n")),
	       "table: plain rows exact");
	if (tap_failed)
		printf("# %s", text);
	free(text);

	text = tpipe_table(&t, &ns_json_printer);
	tap_ok(strstr(text, "{\"region\":\"tcp\",\"open\":0,\"invalid\":0,\"shared\":0,\"merged\":0,\"n\":20,\"mean\":0.140,\"p50\":0.140,\"p90\":0.140,\"p99\":0.140,\"p999\":0.140,\"min\":0.140,\"max\":0.140,\"cv\":0.0000,\"sampled\":false,\"raw_mean\":0.140,\"self_mean\":0.140,\"event_mean\":[42.0,44.0],\"event_p50\":[42,44],\"event_p99\":[42,44]}") != NULL,
	       "table: JSON region object exact");
	free(text);
	tpipe_free(&t);
}

/*
 * A record copied to the other part of a split skb is one measurement:
 * the table counts it once.  Blocks 4, 9, 14, 19 have their 300-tick tcp
 * record SHARED: their tcp value is the 120-tick record alone.
 */
static void shared(void)
{
	struct gen_opts g = { .n = 20, .shared_every = 5, .nevents = 1 };
	struct ns_region_acc *tcp;
	struct tpipe t;
	struct ns_acc *r = &t.p.acc;
	struct ns_summary s;
	char *text;

	tpipe_init(&t, NULL, NULL);
	feed(&t, &g);
	tcp = &r->region[NSL_R_TCP];
	ns_acc_summary(r, NSL_R_TCP, &s);
	tap_ok(TAP_IS(s.n == 20) && TAP_IS(tcp->records == 40) &&
	       TAP_IS(tcp->shared == 4) && TAP_IS(r->shared == 4),
	       "shared: tcp 40 records, 4 SHARED, n 20");
	/* 16 blocks of 420 ticks and 4 of 120: 7200 ticks = 2.4 us */
	TAP_NEAR(s.mean * 20, 2.4, "shared: tcp time sums each measurement once");
	/* counts: 42 per 300+120 block, 12 per SHARED block: 720 */
	TAP_NEAR(tcp->ev_sum[0], 16 * 42 + 4 * 12, "shared: tcp counts sum each measurement once");
	text = tpipe_table(&t, &ns_plain_printer);
	tap_ok(strstr(text, "\n# 4 records measured before their skb was split are counted once, in the first part's block\n") != NULL,
	       "shared: the table says how many");
	free(text);
	text = tpipe_table(&t, &ns_json_printer);
	tap_ok(TAP_IS(strstr(text, "\"shared\":4,")) &&
	       TAP_IS(strstr(text, "{\"region\":\"tcp\",\"open\":0,\"invalid\":0,\"shared\":4,\"merged\":0,")),
	       "shared: JSON total and per region");
	free(text);
	tpipe_free(&t);
}

/*
 * Receive blocks of 12 frames: every 4th merged into another skb by GRO
 * (ABSORBED: rx-nic 1 us, rx-link 0.5 us, cut at the merge), every 4th
 * from the second coalesced on the socket (COALESCED: no queue, no
 * copy), the rest the whole way (rx-link 5 us).  rx-link's row holds the
 * 9 frames IP took, its 3 merged ones are counted apart.
 */
static void rx_block(struct nsl_block *b, unsigned int i)
{
	static const struct { uint8_t region, depth; uint64_t ticks; } whole[] = {
		{ NSL_R_RX_NIC, 0, 3000 }, { NSL_R_RX_LINK, 0, 15000 },
		{ NSL_R_RX_IP, 1, 6000 }, { NSL_R_RX_TCP, 2, 3000 },
		{ NSL_R_QUEUE, 0, 30000 }, { NSL_R_COPY, 0, 3000 },
	};
	unsigned int n = i % 4 == 0 ? 2 : i % 4 == 1 ? 4 : 6;
	uint64_t at = 0;

	memset(b, 0, sizeof(*b));
	b->hdr.kind = NSL_ITEM_BLOCK;
	b->hdr.size = NSL_BLOCK_SIZE(n);
	b->hdr.cpu = 0;
	b->seq = i;
	b->tsc0 = GEN_T0 + i * 100000;
	b->dir = NSL_DIR_RX;
	b->gso_segs = 1;
	b->proto = 6;
	b->flags = NSL_BF_RX | (i % 4 == 0 ? NSL_BF_ABSORBED : 0) |
		   (i % 4 == 1 ? NSL_BF_COALESCED : 0);
	b->nrec = n;
	for (unsigned int k = 0; k < n; k++) {
		struct nsl_record *r = &b->rec[k];

		r->region = whole[k].region;
		r->depth = whole[k].depth;
		r->nmerged = 1;
		r->start = at;
		r->ticks = i % 4 == 0 && k == 1 ? 1500 : whole[k].ticks;
		at += whole[k].depth ? 0 : r->ticks;
	}
}

static void merged(void)
{
	struct tpipe t;
	struct ns_acc *r = &t.p.acc;
	struct ns_summary s;
	struct nsl_block b;
	char *text;

	tpipe_init(&t, NULL, NULL);
	for (unsigned int i = 0; i < 12; i++) {
		rx_block(&b, i);
		tpipe_block(&t, &b);
	}
	TAP_EQ(r->blocks, 12, "merged: 12 receive blocks");
	TAP_EQ(r->absorbed, 3, "merged: 3 ABSORBED");
	TAP_EQ(r->coalesced, 3, "merged: 3 COALESCED");
	ns_acc_summary(r, NSL_R_RX_LINK, &s);
	TAP_EQ(s.n, 9, "merged: rx-link's row holds the 9 frames IP took");
	TAP_NEAR(s.min, 5.0, "merged: no short rx-link of a merged frame in the row");
	TAP_EQ(r->region[NSL_R_RX_LINK].merged, 3, "merged: 3 rx-links counted apart");
	ns_acc_summary(r, NSL_R_RX_NIC, &s);
	TAP_EQ(s.n, 12, "merged: rx-nic, before any merge, from all 12");
	ns_acc_summary(r, NSL_R_QUEUE, &s);
	TAP_EQ(s.n, 6, "merged: queue only where the segment was queued (6)");
	text = tpipe_table(&t, &ns_plain_printer);
	tap_ok(TAP_IS(strstr(text, "\n# 3 frames merged into another skb by GRO (ABSORBED): their rx-link ends at the merge and is counted apart, not in rx-link's row\n")) &&
	       TAP_IS(strstr(text, "\n# 3 received segments coalesced into another skb (COALESCED): ")),
	       "merged: the table says how many of each");
	if (tap_failed)
		printf("# %s", text);
	free(text);
	text = tpipe_table(&t, &ns_json_printer);
	tap_ok(TAP_IS(strstr(text, "\"absorbed\":3,\"coalesced\":3,")) &&
	       TAP_IS(strstr(text, "{\"region\":\"rx-link\",\"open\":0,\"invalid\":0,\"shared\":0,\"merged\":3,\"n\":9,")),
	       "merged: JSON totals and rx-link's merged");
	if (tap_failed)
		printf("# %s", text);
	free(text);
	tpipe_free(&t);
}

/* JSON's strings: ill-formed UTF-8 replaced, as Python's "replace" does. */
static void utf8(void)
{
	static const struct { const char *in, *out, *row; } rows[] = {
		{ "plain \x7f", "plain \x7f", "ASCII and DEL unchanged" },
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
		  "2-, 3- and 4-byte characters unchanged" },
		{ "a\xff" "b", "a\xef\xbf\xbd" "b", "a byte that starts nothing" },
		{ "\xe2\x82", "\xef\xbf\xbd", "a cut sequence: one U+FFFD" },
		{ "\xf0\x9f\x98" "x", "\xef\xbf\xbdx", "cut before an ASCII byte" },
		{ "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "a surrogate: three" },
		{ "\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		  "above U+10FFFF: four (glibc's iconv takes it)" },
		{ "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd", "an overlong '/': two" },
		{ "\xe0\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "an overlong 3-byte NUL" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char out[NS_UTF8_REPAIRED(16)];
		size_t n = ns_utf8_repair(rows[i].in, out);

		tap_ok(TAP_IS(n == strlen(rows[i].out)) &&
		       TAP_IS(!strcmp(out, rows[i].out)),
		       "utf8: %s", rows[i].row);
	}
}

void test_report(void)
{
	utf8();
	lines();
	flow_lines();
	time_order();
	table();
	shared();
	merged();
}
