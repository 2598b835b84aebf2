// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "decode.h"
#include "gen.h"
#include "report.h"
#include "tap.h"
#include "tests.h"

static void feed(struct ns_report *r, const struct gen_opts *g)
{
	size_t len, pos = 0;
	unsigned char *p = gen_stream(g, &len);

	while (pos < len) {
		struct ns_item it;

		if (ns_decode_item(p + pos, len - pos, &it))
			break;
		if (it.type == NS_ITEM_BLOCK)
			ns_report_block(r, &it.block);
		else if (it.type == NS_ITEM_LOSS)
			ns_report_loss(r, &it.loss);
		pos += it.hdr.size;
	}
	free(p);
}

static void lines(void)
{
	struct gen_opts g = { .n = 4, .loss_every = 2, .open_every = 4 };
	struct ns_report r;
	char *text = NULL;
	size_t size;
	FILE *f = open_memstream(&text, &size);

	ns_report_init(&r, &ns_plain_printer, f, GEN_TSC_KHZ);
	feed(&r, &g);
	fclose(f);
	tap_ok(!strcmp(text,
		"0.000 cpu 0 seq 0 tx len 1448 segs 1 write 1.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000\n"
		"-- 5 items lost here (cpu 1, first seq 100001) --\n"
		"1.000 cpu 1 seq 0 tx len 1448 segs 1 write 2.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000\n"
		"2.000 cpu 0 seq 1 tx len 1448 segs 1 write 3.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic 10.000\n"
		"-- 5 items lost here (cpu 1, first seq 100003) --\n"
		"3.000 cpu 1 seq 1 tx len 1448 segs 1 write 4.000 tcp 0.100+0.040 ip 0.200 link 0.500 nic open\n"),
	       "report: per-packet and loss lines, exact text");
	if (tap_failed)
		printf("# %s", text);
	tap_ok(r.blocks == 4 && r.lost == 10 && r.loss_items == 2,
	       "report: 4 blocks, 10 lost in 2 loss items");
	ns_report_free(&r);
	free(text);
}

static void table(void)
{
	struct gen_opts g = { .n = 20, .open_every = 4, .nevents = 2 };
	struct ns_report r;
	struct ns_summary s;

	ns_report_init(&r, &ns_plain_printer, NULL, GEN_TSC_KHZ);
	feed(&r, &g);

	/* write: 1..10 us twice over */
	ns_report_summary(&r, NSL_R_WRITE, &s);
	tap_ok(s.n == 20 && s.mean == 5.5 && s.p50 == 5 && s.p99 == 10 &&
	       s.min == 1 && s.max == 10, "table: write n 20 mean 5.5 p50 5 p99 10");
	/* tcp: two records per block summed: 420 ticks = 0.14 us */
	ns_report_summary(&r, NSL_R_TCP, &s);
	TAP_NEAR(s.mean, 0.14, "table: tcp sums its two records per block");
	tap_ok(s.n == 20 && r.region[NSL_R_TCP].records == 40 && s.cv == 0,
	       "table: tcp n 20 from 40 records, CV 0");
	/* nic: OPEN in blocks 3, 7, 11, 15, 19 */
	ns_report_summary(&r, NSL_R_NIC, &s);
	tap_ok(s.n == 15 && r.region[NSL_R_NIC].open == 5 && s.mean == 10,
	       "table: nic excludes 5 OPEN records, n 15 mean 10");
	/* counters: ticks/10 + e per record; tcp = 30 + 12 + 2e */
	TAP_NEAR(r.region[NSL_R_TCP].ev_sum[1] / r.region[NSL_R_TCP].ev_n[1], 44,
		 "table: tcp ev1 mean 44 (summed per block)");
	TAP_EQ(r.region[NSL_R_NIC].ev_n[0], 15, "table: nic counter mean over 15 closed blocks");
	tap_ok(r.nevents == 2 && !r.region[NSL_R_RX_TCP].records,
	       "table: nevents 2, absent regions empty");

	char *text = NULL;
	size_t size;

	r.out = open_memstream(&text, &size);
	ns_report_table(&r);
	fclose(r.out);
	tap_ok(strstr(text, "RAW values, not corrected for macro overhead") &&
	       strstr(text, "rdtsc (not serialising)") &&
	       strstr(text, "\nwrite            20       5.500      5.000      10.000        1.000      10.000   0.522        0       4.660         1650.0       1500       3000         1651.0       1501       3001\n") &&
	       strstr(text, "\nnic              15      10.000     10.000      10.000       10.000      10.000   0.000        5      10.000         3000.0       3000       3000         3001.0       3001       3001\n") &&
	       strstr(text, "\n# counter columns: mean, p50, p99 of the delta per packet; 0 invalid counter readings excluded\n"),
	       "table: plain rows exact");
	if (tap_failed)
		printf("# %s", text);
	free(text);

	r.out = open_memstream(&text, &size);
	r.pr = &ns_json_printer;
	ns_report_table(&r);
	fclose(r.out);
	tap_ok(strstr(text, "{\"region\":\"tcp\",\"open\":0,\"invalid\":0,\"shared\":0,\"n\":20,\"mean\":0.140,\"p50\":0.140,\"p99\":0.140,\"min\":0.140,\"max\":0.140,\"cv\":0.0000,\"sampled\":false,\"raw_mean\":0.140,\"self_mean\":0.140,\"event_mean\":[42.0,44.0],\"event_p50\":[42,44],\"event_p99\":[42,44]}") != NULL,
	       "table: JSON region object exact");
	free(text);
	ns_report_free(&r);
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
	struct ns_report r;
	struct ns_summary s;
	char *text = NULL;
	size_t size;

	ns_report_init(&r, &ns_plain_printer, NULL, GEN_TSC_KHZ);
	feed(&r, &g);
	tcp = &r.region[NSL_R_TCP];
	ns_report_summary(&r, NSL_R_TCP, &s);
	tap_ok(s.n == 20 && tcp->records == 40 && tcp->shared == 4 &&
	       r.shared == 4, "shared: tcp 40 records, 4 SHARED, n 20");
	/* 16 blocks of 420 ticks and 4 of 120: 7200 ticks = 2.4 us */
	TAP_NEAR(s.mean * 20, 2.4, "shared: tcp time sums each measurement once");
	/* counts: 42 per 300+120 block, 12 per SHARED block: 720 */
	TAP_NEAR(tcp->ev_sum[0], 16 * 42 + 4 * 12, "shared: tcp counts sum each measurement once");
	r.out = open_memstream(&text, &size);
	ns_report_table(&r);
	fclose(r.out);
	tap_ok(strstr(text, "\n# 4 records measured before their skb was split are counted once, in the first part's block\n") != NULL,
	       "shared: the table says how many");
	free(text);
	r.out = open_memstream(&text, &size);
	r.pr = &ns_json_printer;
	ns_report_table(&r);
	fclose(r.out);
	tap_ok(strstr(text, "\"shared\":4,") && strstr(text, "{\"region\":\"tcp\",\"open\":0,\"invalid\":0,\"shared\":4,"),
	       "shared: JSON total and per region");
	free(text);
	ns_report_free(&r);
}

void test_report(void)
{
	lines();
	table();
	shared();
}
