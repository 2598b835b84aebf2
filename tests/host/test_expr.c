// SPDX-License-Identifier: GPL-2.0
/*
 * pcap-filter expressions over flows (expr.h, tuple.h) and the -t time
 * stamps (tstamp.h).  The packet the program runs over is checked byte
 * by byte against the layout expr.c states, independently of libpcap;
 * the verdicts against what each expression means, row by row.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "expr.h"
#include "gen.h"
#include "tap.h"
#include "tests.h"
#include "tstamp.h"
#include "tuple.h"

static struct ns_tuple tuple(uint16_t family, uint8_t proto, const char *s,
			     uint16_t sport, const char *d, uint16_t dport,
			     uint32_t len)
{
	struct ns_tuple t = {
		.family = family, .proto = proto, .sport = sport,
		.dport = dport, .len = len, .tcp_seq = 0x01020304,
	};

	if (s)
		inet_pton(family, s, t.saddr);
	if (d)
		inet_pton(family, d, t.daddr);
	return t;
}

static bool bytes_are(const uint8_t *p, size_t n, const char *hex)
{
	char got[2 * NS_EXPR_PACKET_MAX + 1];

	for (size_t i = 0; i < n; i++)
		sprintf(got + 2 * i, "%02x", p[i]);
	got[2 * n] = 0;
	if (strcmp(got, hex))
		printf("# got  %s\n# want %s\n", got, hex);
	return !strcmp(got, hex);
}

static void packet_layout(void)
{
	struct ns_tuple t = tuple(AF_INET, IPPROTO_TCP, "192.0.2.1", 43210,
				  "192.0.2.2", 5201, 1500);
	uint8_t p[NS_EXPR_PACKET_MAX];
	size_t n = ns_expr_packet(&t, p);

	tap_ok(n == 40 && bytes_are(p, n,
		"450005dc" "00000000" "40060000" "c0000201" "c0000202"
		"a8ca1451" "01020304" "00000000" "50000000" "00000000"),
	       "packet: IPv4 TCP, total length 1500, ports, sequence, offset 5");
	t = tuple(AF_INET6, IPPROTO_UDP, "2001:db8::1", 5353, "ff02::fb",
		  5353, 120);
	n = ns_expr_packet(&t, p);
	tap_ok(n == 48 && bytes_are(p, n,
		"60000000" "00501140"
		"20010db8000000000000000000000001"
		"ff0200000000000000000000000000fb"
		"14e914e9" "00500000"),
	       "packet: IPv6 UDP, payload and UDP lengths 80, next header 17");
	t = tuple(AF_INET, IPPROTO_ICMP, "192.0.2.1", 0, "198.51.100.7", 0, 84);
	n = ns_expr_packet(&t, p);
	tap_ok(n == 20 && bytes_are(p, n,
		"45000054" "00000000" "40010000" "c0000201" "c6336407"),
	       "packet: IPv4 ICMP, the IP header alone");
	t = tuple(AF_INET, IPPROTO_TCP, NULL, 1, NULL, 2, 70000);
	n = ns_expr_packet(&t, p);
	tap_ok(n == 40 && p[2] == 0xff && p[3] == 0xff,
	       "packet: a 70000-byte GSO packet's total length saturates at 65535");
	t = tuple(AF_INET6, IPPROTO_TCP, NULL, 1, NULL, 2, 0);
	n = ns_expr_packet(&t, p);
	tap_ok(n == 60 && p[4] == 0 && p[5] == 20,
	       "packet: no length known: the headers' own");
}

/* Each row: an expression, a flow, whether it matches and why. */
static void verdicts(void)
{
	static const struct ns_tuple none;
	const struct ns_tuple v4tcp = tuple(AF_INET, IPPROTO_TCP, "192.0.2.1",
					    43210, "192.0.2.2", 5201, 1500);
	const struct ns_tuple v4udp = tuple(AF_INET, IPPROTO_UDP, "192.0.2.53",
					    53, "192.0.2.1", 40000, 200);
	const struct ns_tuple v6tcp = tuple(AF_INET6, IPPROTO_TCP, "2001:db8::2",
					    80, "2001:db8::1", 43211, 1440);
	const struct ns_tuple noaddr = tuple(AF_INET, IPPROTO_TCP, NULL, 43210,
					     NULL, 5201, 1500);
	const struct ns_tuple nonip = { .proto = IPPROTO_TCP, .sport = 80 };
	const struct {
		const char *expr;
		const struct ns_tuple *t;
		bool match;
		const char *row;
	} rows[] = {
		{ "tcp", &v4tcp, true, "tcp: IPv4 TCP" },
		{ "tcp", &v6tcp, true, "tcp: IPv6 TCP" },
		{ "tcp", &v4udp, false, "tcp: not UDP" },
		{ "ip", &v6tcp, false, "ip: not IPv6" },
		{ "ip6", &v6tcp, true, "ip6" },
		{ "tcp port 5201 and host 192.0.2.2", &v4tcp, true, "port and host" },
		{ "tcp port 5201 and host 192.0.2.3", &v4tcp, false, "port, another host" },
		{ "src port 43210", &v4tcp, true, "src port" },
		{ "dst port 43210", &v4tcp, false, "dst port is the other end" },
		{ "src host 192.0.2.53 and udp src port 53", &v4udp, true, "udp source" },
		{ "net 192.0.2.0/24", &v4udp, true, "net" },
		{ "net 10.0.0.0/8", &v4udp, false, "net, another" },
		{ "src net 2001:db8::/32 and port 80", &v6tcp, true, "IPv6 net and port" },
		{ "portrange 5000-6000", &v4tcp, true, "portrange" },
		{ "greater 1000", &v4tcp, true, "greater: 1500 bytes" },
		{ "less 1000", &v4tcp, false, "less: 1500 bytes" },
		{ "less 200", &v4udp, true, "less: 200 bytes, inclusive" },
		{ "tcp[4:4] = 0x01020304", &v4tcp, true, "TCP sequence at offset 4" },
		{ "tcp[tcpflags] & tcp-syn != 0", &v4tcp, false, "no flags in a block: 0" },
		{ "ip[8] = 64", &v4tcp, true, "TTL 64" },
		{ "port 5201", &noaddr, true, "no addresses: ports still match" },
		{ "host 192.0.2.2", &noaddr, false, "no addresses: no host matches" },
		{ "not tcp", &nonip, false, "no flow: not even 'not tcp'" },
		{ "not host 1.2.3.4", &none, false, "family 0: never" },
	};
	struct ns_expr e;
	char err[256];
	bool ok;

	ns_expr_init(&e);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ok = !ns_expr_compile(&e, rows[i].expr, err, sizeof(err));

		tap_ok(ok && ns_expr_match(&e, rows[i].t) == rows[i].match,
		       "expr: '%s' %s: %s", rows[i].expr,
		       rows[i].match ? "matches" : "does not match", rows[i].row);
	}
	ns_expr_free(&e);
	tap_ok(ns_expr_match(&e, &nonip) && !ns_expr_active(&e),
	       "expr: none: everything, a block without a flow too");
	tap_ok(!ns_expr_compile(&e, "  \t", err, sizeof(err)) && !ns_expr_active(&e),
	       "expr: a blank expression is none, as tcpdump's");
	ok = !ns_expr_compile(&e, "udp", err, sizeof(err));
	tap_ok(ok && e.prog.bf_len > 0 && e.prog.bf_insns,
	       "expr: the compiled classic BPF program is there to hand on (%u instructions)",
	       e.prog.bf_len);
	tap_ok(ns_expr_compile(&e, "tcp prot 80", err, sizeof(err)) &&
	       strstr(err, "syntax error") && !ns_expr_active(&e),
	       "expr: a syntax error is libpcap's message: '%s'", err);
	tap_ok(ns_expr_compile(&e, "ether host 1:2:3:4:5:6", err, sizeof(err)) &&
	       !ns_expr_active(&e),
	       "expr: link-layer words refused on raw IP: '%s'", err);
	ns_expr_free(&e);
}

static void joining(void)
{
	char *argv[] = { "nsdump", "-r", "f", "tcp", "port", "80" };
	char *text = ns_expr_join(6, argv, 3);

	tap_ok(text && !strcmp(text, "tcp port 80"),
	       "expr: the words after the options joined by spaces");
	free(text);
}

static void flow_text(void)
{
	struct ns_tuple t = tuple(AF_INET6, IPPROTO_TCP, "2001:db8::2", 80,
				  "2001:db8::1", 43211, 0);
	char s[128];

	ns_tuple_text(&t, s, sizeof(s));
	tap_ok(!strcmp(s, "[2001:db8::2]:80 > [2001:db8::1]:43211"),
	       "tuple: IPv6 endpoints bracketed: '%s'", s);
	t = tuple(AF_INET, IPPROTO_ICMP, "192.0.2.1", 0, "198.51.100.7", 0, 0);
	ns_tuple_text(&t, s, sizeof(s));
	tap_ok(!strcmp(s, "192.0.2.1 > 198.51.100.7"), "tuple: no ports for ICMP: '%s'", s);
	tap_ok(!strcmp(ns_proto_name(132, s, sizeof(s)), "proto 132") &&
	       !strcmp(ns_proto_name(IPPROTO_ICMPV6, s, sizeof(s)), "icmp6"),
	       "tuple: protocol names, a number for the others");
}

/* GEN_WALL0 + 123456789 ns: 2026-11-21 23:41:07.123456789 UTC. */
static void stamps(void)
{
	const int64_t t0 = GEN_WALL0 + 123456789;
	static const struct {
		enum ns_tstamp_mode mode;
		const char *want[3];
	} rows[] = {
		{ NS_TS_TIME, { "23:41:07.123456 ", "23:41:07.123461 ", "23:41:07.123460 " } },
		{ NS_TS_NONE, { "", "", "" } },
		{ NS_TS_EPOCH, { "1795304467.123456 ", "1795304467.123461 ", "1795304467.123460 " } },
		{ NS_TS_DELTA, { " 00:00:00.000000 ", " 00:00:00.000005 ", "-00:00:00.000001 " } },
		{ NS_TS_DATE, { "2026-11-21 23:41:07.123456 ", "2026-11-21 23:41:07.123461 ",
				"2026-11-21 23:41:07.123460 " } },
		{ NS_TS_SINCE_FIRST, { " 00:00:00.000000 ", " 00:00:00.000005 ", " 00:00:00.000004 " } },
	};
	/* 5.0 us later, then 0.9 us back: truncated to 123461 and 123460 */
	const int64_t at[3] = { t0, t0 + 5000, t0 + 4100 };

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ns_tstamper s;
		bool ok = true;
		char buf[64];

		ns_tstamp_init(&s, rows[i].mode);
		for (int k = 0; k < 3; k++) {
			ns_tstamp(&s, at[k], buf, sizeof(buf));
			if (strcmp(buf, rows[i].want[k])) {
				printf("# line %d: '%s', want '%s'\n", k, buf,
				       rows[i].want[k]);
				ok = false;
			}
		}
		tap_ok(ok, "tstamp: -t count %d, three lines exact", (int)rows[i].mode);
	}

	struct ns_tstamper s;
	char buf[64];

	ns_tstamp_init(&s, NS_TS_DELTA);
	ns_tstamp(&s, 0, buf, sizeof(buf));
	ns_tstamp(&s, (int64_t)(26 * 3600 + 61) * 1000000000 + 999, buf, sizeof(buf));
	tap_ok(!strcmp(buf, " 26:01:01.000000 "),
	       "tstamp: -ttt hours past a day, as tcpdump's: '%s'", buf);
	ns_tstamp_init(&s, NS_TS_EPOCH);
	ns_tstamp(&s, -1, buf, sizeof(buf));
	tap_ok(!strcmp(buf, "-1.999999 "), "tstamp: -tt before the epoch rounds down: '%s'", buf);
}

void test_expr(void)
{
	packet_layout();
	verdicts();
	joining();
	flow_text();
	stamps();
}
