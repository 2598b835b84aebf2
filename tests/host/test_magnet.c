// SPDX-License-Identifier: GPL-2.0
/*
 * MAGNeT event records: wall clock, event lines, Table III on the FTP
 * example of gen.h, and -p / --dir.  Times print in UTC here.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "source/decode.h"
#include "stage/filter.h"
#include "gen.h"
#include "stage/magnet.h"
#include "view/report.h"
#include "tap.h"
#include "tests.h"
#include "tpipe.h"

static void clock_conversion(void)
{
	struct nsl_info info;
	struct nsl_sysinfo si;
	struct ns_clock c;
	unsigned char buf[64];
	char s[64];

	gen_info(&info);
	ns_clock_from_info(&c, &info);
	TAP_EQ(ns_clock_ns(&c, GEN_T0), 1700000000000000000ull,
	       "clock: INFO's ref_tsc is its ref_realtime_ns");
	ns_clock_format(&c, GEN_T0 + 3000000000ull + 3, s, sizeof(s));
	tap_ok(!strcmp(s, "2023-11-14 22:13:21.000000001"),
	       "clock: INFO, 1 s + 3 ticks later: '%s'", s);
	ns_clock_format(&c, GEN_T0 - 1500, s, sizeof(s));
	tap_ok(!strcmp(s, "2023-11-14 22:13:19.999999500"),
	       "clock: before ref_tsc counts back: '%s'", s);

	gen_sysinfo(buf);
	memcpy(&si, buf, sizeof(si));
	ns_clock_from_sysinfo(&c, &si);
	ns_clock_format(&c, GEN_EV_T0, s, sizeof(s));
	tap_ok(TAP_IS(!strcmp(s, "2026-11-21 23:41:07.123456789")) &&
	       TAP_IS(c.sysinfo),
	       "clock: SYSINFO replaces INFO: '%s'", s);
	TAP_EQ(ns_clock_ns(&c, GEN_EV_T0), GEN_WALL0 + 123456789,
	       "clock: 370370367 ticks at 3 GHz are 123456789 ns");
	si.tsc_khz = 1000000;	/* a later SYSINFO: 1 GHz, new reference */
	si.ref_tsc = 5000000000ull;
	si.ref_realtime_ns = GEN_WALL0 + 60000000000ull;
	ns_clock_from_sysinfo(&c, &si);
	ns_clock_format(&c, 5000000000ull + 2500, s, sizeof(s));
	tap_ok(!strcmp(s, "2026-11-21 23:42:07.000002500"),
	       "clock: a later SYSINFO's rate and reference: '%s'", s);
	TAP_EQ(ns_clock_ns(&c, 5000000000ull + (1ull << 50) + 7) -
	       ns_clock_ns(&c, 5000000000ull), (1ull << 50) + 7,
	       "clock: 2^50 ticks from the reference, to the nanosecond");
	tap_ok(TAP_IS(ns_clock_ns(&c, 5000000000ull + (1ull << 62)) > 0) &&
	       TAP_IS(ns_clock_ns(&c, 5000000000ull - (1ull << 62)) < 0),
	       "clock: absurd distances clamp, no overflow");

	info.ref_realtime_ns = 0;
	ns_clock_from_info(&c, &info);
	ns_clock_format(&c, GEN_T0 + 3000, s, sizeof(s));
	tap_ok(!strcmp(s, "+0.000001000"), "clock: no wall clock known: '%s'", s);
}

/* The report's text for the items of @m, through nsdump's own pipeline. */
struct fed {
	struct tpipe t;
	struct ns_filter f;	/* -p, --dir: set between fed_init() and feed() */
	char *text;
};

static void feed(struct fed *x, const unsigned char *p, size_t len,
		 const struct ns_printer *pr, bool quiet)
{
	tpipe_init(&x->t, NULL, pr);
	x->t.f = x->f;
	x->t.f.conns = &x->t.p.conns;
	ns_pipeline_magnet(&x->t.p);
	x->t.r.quiet = quiet;
	x->t.r.mag = &x->t.p.conns;
	tpipe_bytes(&x->t, p, len);
	tpipe_finish(&x->t);
	x->text = x->t.text;
}

static void fed_free(struct fed *x)
{
	tpipe_free(&x->t);
}

static void fed_init(struct fed *x)
{
	memset(x, 0, sizeof(*x));
	ns_filter_init(&x->f, NULL);
}

/* fed_init() and feed() of the FTP example @m, no per-packet lines. */
static void feed_magnet(struct fed *x, const struct gen_magnet *m,
			const struct ns_printer *pr)
{
	size_t len;
	unsigned char *p = gen_magnet_stream(m, &len);

	fed_init(x);
	feed(x, p, len, pr, true);
	free(p);
}

/* The report of the items at @p, through @pr, starts with @want. */
static void report_starts(const unsigned char *p, size_t len,
			  const struct ns_printer *pr, const char *want,
			  const char *name)
{
	struct fed x;

	fed_init(&x);
	feed(&x, p, len, pr, false);
	tap_ok(!strncmp(x.text, want, strlen(want)), "%s", name);
	if (tap_failed)
		printf("# %s", x.text);
	fed_free(&x);
}

static const char *after(const char *text, const char *marker)
{
	const char *p = strstr(text, marker);

	return p ? p : "";
}

/* gen_sysinfo()'s version, as the lines print it */
#define TEXT_OF(x)	#x
#define ABI_TEXT	TEXT_OF_VALUE(NSL_ABI_VERSION)
#define TEXT_OF_VALUE(x)	TEXT_OF(x)

static void event_lines(void)
{
	unsigned char buf[512];
	size_t len = gen_sysinfo(buf);

	len += gen_event(1, 7, GEN_EV_T0, NSL_EV_SOCK_SEND, 10240,
			 NSL_EVF_TCP | NSL_EVF_IP | NSL_EVF_ADDR, buf + len);
	report_starts(buf, len, &ns_plain_printer,
		"-- SYSINFO cpu 0 abi " ABI_TEXT " tsc_khz 3000000 ncpus 2: tsc 1000000000 is 2026-11-21 23:41:07.000000000 --\n"
		"23:41:07.123456 cpu 1 conn 0x2a MAGNET_SOCK_SEND 10240 bytes "
		"[tcp cwnd 10 ssthresh 2147483647 srtt 120us rto 201000us out 3 retr 0/0 snd_wnd 65535 rcv_wnd 65483 wseq 11240 cseq 5000 mss 1448 state ESTABLISHED] "
		"[ip v4 tos 0 ttl 64 id 1234 frag 0x4000 proto 6] [192.0.2.1:43210 > 192.0.2.2:5201]\n",
		"magnet: SYSINFO line and a full event line, exact");
	report_starts(buf, len, &ns_json_printer,
		"{\"type\":\"sysinfo\",\"cpu\":0,\"abi_version\":" ABI_TEXT ",\"tsc_khz\":3000000,\"ncpus\":2,\"ref_tsc\":1000000000,\"ref_realtime_ns\":1795304467000000000,\"time\":\"2026-11-21 23:41:07.000000000\"}\n"
		"{\"type\":\"event\",\"time\":\"2026-11-21 23:41:07.123456789\",\"time_ns\":1795304467123456789,\"cpu\":1,\"seq\":7,\"tsc\":1370370367,\"conn\":42,\"event\":\"MAGNET_SOCK_SEND\",\"bytes\":10240,\"flags\":[\"TCP\",\"IP\",\"ADDR\"],"
		"\"tcp\":{\"snd_cwnd\":10,\"snd_ssthresh\":2147483647,\"srtt_us\":120,\"rto_us\":201000,\"packets_out\":3,\"retrans_out\":0,\"total_retrans\":0,\"snd_wnd\":65535,\"rcv_wnd\":65483,\"write_seq\":11240,\"copied_seq\":5000,\"mss\":1448,\"state\":\"ESTABLISHED\",\"ca_state\":0,\"tcp_flags\":0},"
		"\"ip\":{\"version\":4,\"tos\":0,\"ttl\":64,\"id\":1234,\"frag_off\":16384,\"protocol\":6},"
		"\"sport\":43210,\"dport\":5201,\"saddr\":\"192.0.2.1\",\"daddr\":\"192.0.2.2\"}\n{\"type\":\"table\"",
		"magnet: --json sysinfo and event objects, every field");

	/* brackets only for what the flags say; TSO marked; ports only */
	len = gen_event(0, 0, GEN_EV_T0, NSL_EV_TCP_SEND, 10240,
			NSL_EVF_TSO, buf);
	len += gen_event(0, 1, GEN_EV_T0, NSL_EV_SOCK_RECV, 4344,
			 NSL_EVF_ADDR, buf + len);
	memset(buf + len - sizeof(struct nsl_event_rec) +
	       offsetof(struct nsl_event_rec, ip.saddr), 0, 8);
	report_starts(buf, len, &ns_plain_printer,
		"22:13:20.123456 cpu 0 conn 0x2a MAGNET_TCP_SEND 10240 bytes TSO\n"
		"22:13:20.123456 cpu 0 conn 0x2a MAGNET_SOCK_RECV 4344 bytes [*:5201 > *:43210]\n",
		"magnet: no optional data, no brackets; TSO; receive: remote > local, unknown addresses *");

	/* IPv6 (NSL_EVF_ADDR6): the addresses in brackets, and in JSON */
	len = gen_event(0, 0, GEN_EV_T0, NSL_EV_SOCK_SEND, 1000,
			NSL_EVF_ADDR | NSL_EVF_ADDR6, buf);
	{
		struct nsl_event_rec e;

		memcpy(&e, buf, sizeof(e));
		e.ip.saddr = e.ip.daddr = 0;
		inet_pton(AF_INET6, "2001:db8::1", e.saddr6);
		inet_pton(AF_INET6, "2001:db8::2", e.daddr6);
		memcpy(buf, &e, sizeof(e));
	}
	report_starts(buf, len, &ns_plain_printer,
		"22:13:20.123456 cpu 0 conn 0x2a MAGNET_SOCK_SEND 1000 bytes [[2001:db8::1]:43210 > [2001:db8::2]:5201]\n",
		"magnet: IPv6 socket event: [address]:port, local > remote");
	{
		struct fed x;

		fed_init(&x);
		feed(&x, buf, len, &ns_json_printer, false);
		tap_ok(TAP_IS(strstr(x.text, "\"flags\":[\"ADDR\",\"ADDR6\"],\"sport\":43210,\"dport\":5201,\"saddr\":\"2001:db8::1\",\"daddr\":\"2001:db8::2\"}")) &&
		       TAP_IS(strstr(x.text, "\"laddr\":\"2001:db8::1\",\"raddr\":\"2001:db8::2\"")),
		       "magnet: IPv6 addresses in the event's and the connection's JSON");
		if (tap_failed)
			printf("# %s", x.text);
		fed_free(&x);
	}
}

static const char table3[] =
	"# application vs wire per connection (MAGNeT Table III) over 290 event records: data size in bytes; spacing of consecutive events of the connection and type, by tsc, in µs\n"
	"conn 0x2a local 192.0.2.1:43210 remote 192.0.2.2:5201\n"
	"  event                    n  mean-size      min      max mean-spacing       CV    TSO\n"
	"  MAGNET_SOCK_SEND        10    10240.0    10240    10240    20000.000    0.000      0\n"
	"  MAGNET_TCP_SEND         80     1280.0      104     1448     2279.544    2.774      0\n"
	"  MAGNET_IP_SEND          80     1312.0      136     1480     2279.544    2.774      0\n"
	"  MAGNET_DEV_SEND         80     1332.0      156     1500     2279.544    2.774      0\n"
	"conn 0x2b local 192.0.2.1:43211 remote 192.0.2.2:5201\n"
	"  event                    n  mean-size      min      max mean-spacing       CV    TSO\n"
	"  MAGNET_DEV_RECV         12     1500.0     1500     1500     1365.818    1.619      0\n"
	"  MAGNET_IP_RECV          12     1500.0     1500     1500     1365.818    1.619      0\n"
	"  MAGNET_TCP_RECV         12     1448.0     1448     1448     1365.818    1.619      0\n"
	"  MAGNET_SOCK_RECV         4     4344.0     4344     4344     5000.000    0.000      0\n";

/*
 * The FTP example: 10 writes of 10240 bytes 20 ms apart, each 7 x 1448 +
 * 104 on the wire 12 us apart: 79 gaps, 70 of 12 us and 9 of 19916 us,
 * mean 180084 / 79 = 2279.544 us, CV 2.774; the receiver's 4 bursts of 3
 * segments: 8 gaps of 12 us and 3 of 4976, mean 1365.818, CV 1.619.
 */
static void table_three(void)
{
	struct gen_magnet m = { .writes = 10, .reads = 4, .addr = true,
				.sysinfo = true };
	struct ns_layer_summary s;
	struct fed x;

	feed_magnet(&x, &m, &ns_plain_printer);
	tap_ok(!strcmp(after(x.text, "# application vs wire"), table3),
	       "magnet: Table III of the FTP example, exact rows");
	if (tap_failed)
		printf("%s", after(x.text, "# application vs wire"));
	TAP_EQ(x.t.p.acc.blocks, 92, "magnet: 80 + 12 blocks in the latency table");
	TAP_EQ(x.t.p.conns.events, 290, "magnet: 250 + 40 event records counted");
	tap_ok(TAP_IS(ns_magnet_layer(&x.t.p.conns.conn[0].layer[NSL_EV_TCP_SEND],
				      GEN_TSC_KHZ, &s)) &&
	       TAP_IS(s.gaps == 79) && TAP_IS(s.bytes_mean == 1280) &&
	       TAP_IS(s.bytes_min == 104),
	       "magnet: TCP_SEND summary: 79 gaps, mean 1280 bytes");
	fed_free(&x);

	m.tso = true;
	m.reads = 0;
	feed_magnet(&x, &m, &ns_plain_printer);
	tap_ok(TAP_IS(strstr(x.text, "  MAGNET_TCP_SEND         10    10240.0    10240    10240    20000.000    0.000     10\n")) &&
	       TAP_IS(strstr(x.text, "  MAGNET_DEV_SEND         10    10292.0    10292    10292    20000.000    0.000     10\n")) &&
	       TAP_IS(strstr(x.text, "# TSO: 30 events were TSO/GSO super-segments")),
	       "magnet: TSO: one super-segment per write, counted, noted");
	fed_free(&x);

	/* JSON carries the same rows */
	m.tso = false;
	m.reads = 4;
	feed_magnet(&x, &m, &ns_json_printer);
	tap_ok(TAP_IS(strstr(x.text, "{\"type\":\"conn\",\"conn\":42,\"lport\":43210,\"rport\":5201,\"laddr\":\"192.0.2.1\",\"raddr\":\"192.0.2.2\",\"layers\":[{\"event\":\"MAGNET_SOCK_SEND\",\"n\":10,\"bytes_mean\":10240.0,\"bytes_min\":10240,\"bytes_max\":10240,\"tso\":0,\"spacing_n\":9,\"spacing_mean_us\":20000.000,\"spacing_cv\":0.0000},{\"event\":\"MAGNET_TCP_SEND\",\"n\":80,\"bytes_mean\":1280.0,\"bytes_min\":104,\"bytes_max\":1448,\"tso\":0,\"spacing_n\":79,\"spacing_mean_us\":2279.544,\"spacing_cv\":2.7742}")) &&
	       TAP_IS(strstr(x.text, "{\"event\":\"MAGNET_SOCK_RECV\",\"n\":4,\"bytes_mean\":4344.0,\"bytes_min\":4344,\"bytes_max\":4344,\"tso\":0,\"spacing_n\":3,\"spacing_mean_us\":5000.000,\"spacing_cv\":0.0000}]}\n")),
	       "magnet: --json Table III, conn objects");
	fed_free(&x);
}

/* Events of one connection and type arriving out of tsc order. */
static void spacing_sorted(void)
{
	static const uint64_t t[] = { 9, 3, 0, 6, 12 };	/* ms */
	struct ns_magnet mag;
	struct ns_layer_summary s;
	unsigned char buf[sizeof(struct nsl_event_rec)];

	ns_magnet_init(&mag);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct nsl_event_rec e;

		gen_event(i % 2, i, GEN_T0 + t[i] * GEN_MS, NSL_EV_IP_RECV,
			  100 * (i + 1), 0, buf);
		memcpy(&e, buf, sizeof(e));
		ns_magnet_account(&mag, &e);
	}
	tap_ok(TAP_IS(ns_magnet_layer(&mag.conn[0].layer[NSL_EV_IP_RECV], GEN_TSC_KHZ,
				      &s)) &&
	       TAP_IS(s.n == 5) && TAP_IS(s.gaps == 4) &&
	       TAP_IS(s.gap_mean_us == 3000) && TAP_IS(s.gap_cv == 0) &&
	       TAP_IS(s.bytes_mean == 300) && TAP_IS(s.bytes_min == 100) &&
	       TAP_IS(s.bytes_max == 500),
	       "magnet: spacing from tsc order, not arrival: 4 gaps of 3 ms");
	ns_magnet_free(&mag);
}

/*
 * Event lines print in time order across CPUs: CPU 0's records (0, 10,
 * 20 ms) arrive before CPU 1's (5, 15 ms), as one read() takes one ring
 * after the other.  A record arriving after one half a second newer (the
 * horizon) is printed at once and counted as late.
 */
static void time_order(void)
{
	static const struct { unsigned int cpu; uint64_t ms; } in[] = {
		{ 0, 0 }, { 0, 10 }, { 0, 20 }, { 1, 5 }, { 1, 15 },
		{ 0, 2000 }, { 1, 1 },
	};
	static const char *const want[] = {
		"20.000000 cpu 0", "20.005000 cpu 1", "20.010000 cpu 0",
		"20.015000 cpu 1", "20.020000 cpu 0", "20.001000 cpu 1",
		"22.000000 cpu 0",
	};
	unsigned char buf[8 * sizeof(struct nsl_event_rec)];
	const char *at = NULL;
	struct fed x;
	size_t len = 0;
	bool ordered = true;

	fed_init(&x);
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		len += gen_event(in[i].cpu, i, GEN_T0 + in[i].ms * GEN_MS,
				 NSL_EV_IP_RECV, 100, 0, buf + len);
	feed(&x, buf, len, &ns_plain_printer, false);
	at = x.text;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *p = strstr(x.text, want[i]);

		if (!p || p < at)
			ordered = false;
		at = p ? p : at;
	}
	tap_ok(ordered, "magnet: event lines in tsc order across CPUs, the late one where it arrived");
	TAP_EQ(x.t.r.lines.late, 1, "magnet: one record later than the horizon, counted");
	tap_ok(strstr(x.text, "# 1 lines (blocks, event records) arrived more than 500 ms after a later one and were printed out of time order\n") != NULL,
	       "magnet: the report says so");
	if (tap_failed)
		printf("# %s", x.text);
	fed_free(&x);
}

static void filtering(void)
{
	struct gen_magnet m = { .writes = 10, .reads = 4, .addr = true,
				.sysinfo = true, .loss_at = 100 };
	size_t len;
	unsigned char *p = gen_magnet_stream(&m, &len);
	struct fed x;

	fed_init(&x);
	ns_filter_add_ports(&x.f, "43210.5201");
	feed(&x, p, len, &ns_plain_printer, true);
	tap_ok(TAP_IS(x.t.p.acc.blocks == 80) &&
	       TAP_IS(x.t.p.conns.events == 250) &&
	       TAP_IS(x.t.p.conns.conn[0].accounted) &&
	       TAP_IS(!x.t.p.conns.conn[1].accounted) &&
	       TAP_IS(x.t.p.acc.region[NSL_R_RX_TCP].records == 0) &&
	       TAP_IS(x.t.p.acc.lost == GEN_LOST),
	       "filter: -p 43210.5201: the sender's 80 blocks and 250 events, no rx, loss kept");
	tap_ok(!strstr(x.text, "conn 0x2b"), "filter: the other connection is not in Table III");
	fed_free(&x);

	/* the receiver's blocks and events come before its ports: held */
	fed_init(&x);
	ns_filter_add_ports(&x.f, "43211.5201");
	feed(&x, p, len, &ns_plain_printer, false);
	tap_ok(TAP_IS(x.t.p.acc.blocks == 12) &&
	       TAP_IS(x.t.p.conns.events == 40) &&
	       TAP_IS(x.t.p.acc.region[NSL_R_RX_TCP].records == 12) &&
	       TAP_IS(x.t.p.acc.region[NSL_R_TCP].records == 0) &&
	       TAP_IS(!x.t.f.undecided_blocks),
	       "filter: -p 43211.5201: 12 rx blocks and 40 events, released when SOCK_RECV named the ports");
	const char *held = strstr(x.text, "cpu 1 conn 0x2b MAGNET_TCP_RECV 1448 bytes");
	const char *named = strstr(x.text, "cpu 1 conn 0x2b MAGNET_SOCK_RECV 4344 bytes");

	tap_ok(TAP_IS(held) && TAP_IS(named) && TAP_IS(held < named),
	       "filter: held items come out before the record that released them");
	fed_free(&x);

	fed_init(&x);
	ns_filter_add_ports(&x.f, "0.5201");
	ns_filter_add_ports(&x.f, "1.2");
	feed(&x, p, len, &ns_plain_printer, true);
	tap_ok(TAP_IS(x.t.p.acc.blocks == 92) &&
	       TAP_IS(x.t.p.conns.events == 290),
	       "filter: -p 0.5201 -p 1.2: any local port, either pair");
	fed_free(&x);

	fed_init(&x);
	ns_filter_set_dir(&x.f, "rx");
	feed(&x, p, len, &ns_plain_printer, true);
	tap_ok(TAP_IS(x.t.p.acc.blocks == 12) &&
	       TAP_IS(x.t.p.conns.events == 40),
	       "filter: --dir rx: 12 blocks, 40 events");
	fed_free(&x);

	fed_init(&x);
	ns_filter_set_dir(&x.f, "tx");
	ns_filter_add_ports(&x.f, "43211.5201");
	feed(&x, p, len, &ns_plain_printer, true);
	tap_ok(TAP_IS(x.t.p.acc.blocks == 0) && TAP_IS(x.t.p.conns.events == 0),
	       "filter: --dir tx -p 43211.5201: nothing");
	fed_free(&x);
	free(p);

	/* no addresses anywhere: everything held, then left out */
	m.addr = false;
	p = gen_magnet_stream(&m, &len);
	fed_init(&x);
	ns_filter_add_ports(&x.f, "43210.5201");
	feed(&x, p, len, &ns_plain_printer, true);
	tap_ok(TAP_IS(x.t.p.acc.blocks == 0) &&
	       TAP_IS(x.t.p.conns.with_addr == 0) &&
	       TAP_IS(x.t.f.undecided_blocks == 92) &&
	       TAP_IS(x.t.f.undecided_events == 290),
	       "filter: no NSL_EVF_ADDR: 92 blocks and 290 events undecided");
	fed_free(&x);
	free(p);

	struct ns_filter f;

	ns_filter_init(&f, NULL);
	tap_ok(TAP_IS(ns_filter_add_ports(&f, "80")) &&
	       TAP_IS(ns_filter_add_ports(&f, "80.")) &&
	       TAP_IS(ns_filter_add_ports(&f, "65536.1")) &&
	       TAP_IS(ns_filter_add_ports(&f, "-1.2")) &&
	       TAP_IS(ns_filter_add_ports(&f, "1.2x")) &&
	       TAP_IS(!ns_filter_add_ports(&f, "0.0")) &&
	       TAP_IS(ns_filter_set_dir(&f, "up")) && TAP_IS(f.nports == 1),
	       "filter: malformed -p and --dir refused");
}

/* fed_init() and feed() of @p with the expression @expr. */
static void feed_expr(struct fed *x, const unsigned char *p, size_t len,
		      const char *expr)
{
	char err[256];

	fed_init(x);
	if (ns_expr_compile(&x->f.expr, expr, err, sizeof(err)))
		printf("# %s: %s\n", expr, err);
	feed(x, p, len, &ns_plain_printer, true);
}

/*
 * An expression matches event records as packets of their connection,
 * whose flow its blocks tell: conn 0x2a's SOCK_SEND comes 5 us before
 * its first block, and is held until then.  Without addresses in the
 * blocks (a capture without --addr) ports still match, hosts never.
 */
static void expression(void)
{
	static const struct {
		const char *expr;
		bool addr;
		uint64_t blocks, events;
		const char *row;
	} rows[] = {
		{ "tcp port 43210", true, 80, 250, "the sender's blocks and records" },
		{ "src port 5201 or src host 192.0.2.2", true, 12, 40,
		  "what came from the peer: receive records, SOCK_RECV's too" },
		{ "ip6", true, 0, 0, "nothing" },
		{ "port 43211", false, 12, 40, "no addresses: ports still" },
		{ "host 192.0.2.1", false, 0, 0, "no addresses: no host" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gen_magnet m = { .writes = 10, .reads = 4, .addr = rows[i].addr };
		size_t len;
		unsigned char *p = gen_magnet_stream(&m, &len);
		struct fed x;

		feed_expr(&x, p, len, rows[i].expr);
		tap_ok(TAP_IS(x.t.p.acc.blocks == rows[i].blocks) &&
		       TAP_IS(x.t.p.conns.events == rows[i].events) &&
		       TAP_IS(!x.t.f.undecided_events) &&
		       TAP_IS(!x.t.f.undecided_blocks),
		       "expr: '%s': %llu blocks, %llu event records, none left out: %s",
		       rows[i].expr, (unsigned long long)rows[i].blocks,
		       (unsigned long long)rows[i].events, rows[i].row);
		fed_free(&x);
		free(p);
	}

	/* event records whose connection never shows a block */
	unsigned char buf[3 * sizeof(struct nsl_event_rec)];
	size_t len = 0;
	struct fed x;

	for (int i = 0; i < 3; i++)
		len += gen_event(0, i, GEN_EV_T0 + i, NSL_EV_SOCK_SEND, 100,
				 NSL_EVF_ADDR, buf + len);
	feed_expr(&x, buf, len, "tcp");
	tap_ok(TAP_IS(x.t.p.conns.events == 0) &&
	       TAP_IS(x.t.f.undecided_events == 3),
	       "expr: event records of a connection without blocks: held, left out, counted");
	fed_free(&x);
}

void test_magnet(void)
{
	clock_conversion();
	event_lines();
	table_three();
	spacing_sorted();
	time_order();
	filtering();
	expression();
}
