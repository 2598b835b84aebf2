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
#include "stage/expr.h"
#include "gen.h"
#include "tap.h"
#include "tests.h"
#include "view/tstamp.h"
#include "stage/tuple.h"

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

	tap_ok(TAP_IS(n == 40) &&
	       TAP_IS(bytes_are(p, n,
				"450005dc" "00000000" "40060000" "c0000201" "c0000202"
				"a8ca1451" "01020304" "00000000" "50000000" "00000000")),
	       "packet: IPv4 TCP, total length 1500, ports, sequence, offset 5");
	t = tuple(AF_INET6, IPPROTO_UDP, "2001:db8::1", 5353, "ff02::fb",
		  5353, 120);
	n = ns_expr_packet(&t, p);
	tap_ok(TAP_IS(n == 48) &&
	       TAP_IS(bytes_are(p, n,
				"60000000" "00501140"
				"20010db8000000000000000000000001"
				"ff0200000000000000000000000000fb"
				"14e914e9" "00500000")),
	       "packet: IPv6 UDP, payload and UDP lengths 80, next header 17");
	t = tuple(AF_INET, IPPROTO_ICMP, "192.0.2.1", 0, "198.51.100.7", 0, 84);
	n = ns_expr_packet(&t, p);
	tap_ok(TAP_IS(n == 20) &&
	       TAP_IS(bytes_are(p, n,
				"45000054" "00000000" "40010000" "c0000201" "c6336407")),
	       "packet: IPv4 ICMP, the IP header alone");
	t = tuple(AF_INET, IPPROTO_TCP, NULL, 1, NULL, 2, 70000);
	n = ns_expr_packet(&t, p);
	tap_ok(TAP_IS(n == 40) && TAP_IS(p[2] == 0xff) && TAP_IS(p[3] == 0xff),
	       "packet: a 70000-byte GSO packet's total length saturates at 65535");
	t = tuple(AF_INET6, IPPROTO_TCP, NULL, 1, NULL, 2, 0);
	n = ns_expr_packet(&t, p);
	tap_ok(TAP_IS(n == 60) && TAP_IS(p[4] == 0) && TAP_IS(p[5] == 20),
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

		tap_ok(TAP_IS(ok) &&
		       TAP_IS(ns_expr_match(&e, rows[i].t) == rows[i].match),
		       "expr: '%s' %s: %s", rows[i].expr,
		       rows[i].match ? "matches" : "does not match", rows[i].row);
	}
	ns_expr_free(&e);
	tap_ok(TAP_IS(ns_expr_match(&e, &nonip)) && TAP_IS(!ns_expr_active(&e)),
	       "expr: none: everything, a block without a flow too");
	tap_ok(TAP_IS(!ns_expr_compile(&e, "  \t", err, sizeof(err))) &&
	       TAP_IS(!ns_expr_active(&e)),
	       "expr: a blank expression is none, as tcpdump's");
	ok = !ns_expr_compile(&e, "udp", err, sizeof(err));
	tap_ok(TAP_IS(ok) && TAP_IS(e.prog.bf_len > 0) &&
	       TAP_IS(e.prog.bf_insns),
	       "expr: the compiled classic BPF program is there to hand on (%u instructions)",
	       e.prog.bf_len);
	tap_ok(TAP_IS(ns_expr_compile(&e, "tcp prot 80", err, sizeof(err))) &&
	       TAP_IS(strstr(err, "syntax error")) &&
	       TAP_IS(!ns_expr_active(&e)),
	       "expr: a syntax error is libpcap's message: '%s'", err);
	tap_ok(TAP_IS(ns_expr_compile(&e, "ether host 1:2:3:4:5:6", err, sizeof(err))) &&
	       TAP_IS(!ns_expr_active(&e)),
	       "expr: link-layer words refused on raw IP: '%s'", err);
	ns_expr_free(&e);
}

/*
 * ns_expr_flow_only(): proved for what reads only families, protocols,
 * addresses and ports; never for what reads a length or the sequence.
 * The property test runs each row's program over random flows too.
 */
enum flow_row {
	FLOW_ONLY,		/* proved; random flows see both verdicts */
	LENGTH_DECIDES,		/* not proved; lengths change some verdicts */
	LENGTH_READ,		/* not proved, though no length here changes it */
};

static const struct {
	const char *expr;
	enum flow_row kind;
} flow_rows[] = {
	{ "udp dst port 6201", FLOW_ONLY },
	{ "ip6 and udp", FLOW_ONLY },
	{ "udp and host 10.0.0.2 and (port 6202 or port 6201)", FLOW_ONLY },
	{ "tcp", FLOW_ONLY },
	{ "ip6 dst host ::1", FLOW_ONLY },
	{ "src net 10.0.0.0/8", FLOW_ONLY },
	{ "tcp port 80 or udp port 53", FLOW_ONLY },
	{ "icmp or icmp6", FLOW_ONLY },
	{ "not tcp", FLOW_ONLY },
	{ "portrange 5000-6500 and not udp", FLOW_ONLY },
	{ "ip[8] = 64", FLOW_ONLY },	/* the TTL is a constant */
	{ "greater 100", LENGTH_DECIDES },
	{ "less 100", LENGTH_DECIDES },
	{ "len > 10", LENGTH_READ },	/* BPF_LEN is never below the headers */
	{ "tcp[4:4] > 5", LENGTH_DECIDES },
	{ "ip[2:2] > 100", LENGTH_DECIDES },
	{ "udp[4:2] > 8", LENGTH_DECIDES },
	{ "ip6[4:2] > 8", LENGTH_DECIDES },
	{ "tcp port 80 and less 100", LENGTH_DECIDES },
};
#define N_FLOW_ROWS	(sizeof(flow_rows) / sizeof(flow_rows[0]))

static void flow_only_rows(void)
{
	struct ns_expr e;
	char err[256];

	ns_expr_init(&e);
	for (size_t i = 0; i < N_FLOW_ROWS; i++) {
		bool ok = !ns_expr_compile(&e, flow_rows[i].expr, err, sizeof(err));
		bool want = flow_rows[i].kind == FLOW_ONLY;

		tap_ok(TAP_IS(ok) && TAP_IS(ns_expr_flow_only(&e.prog) == want),
		       "flow-only: '%s' %s", flow_rows[i].expr,
		       want ? "proved: the flow alone decides" :
		       "not proved: it reads a length or the sequence");
	}
	ns_expr_free(&e);
}

/* Programs libpcap does not write: refused, not misread. */
static void flow_only_odd_programs(void)
{
	struct bpf_insn ret_len[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct bpf_insn off_end[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 6, 0, 5),
	};
	struct bpf_insn flow_offset[] = {
		BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 12),	/* an address byte */
		BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct bpf_insn past_headers[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 60),	/* always fails */
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 5, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct bpf_insn scratch_len[] = {
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 2),	/* IPv4 total length */
		BPF_STMT(BPF_ST, 3),
		BPF_STMT(BPF_LD | BPF_IMM, 7),
		BPF_STMT(BPF_LDX | BPF_MEM, 3),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),	/* rejects when 0 */
		BPF_STMT(BPF_RET | BPF_K, 1),
	};
	struct bpf_program p;

#define PROG(insns) (p.bf_len = sizeof(insns) / sizeof(insns[0]), \
		     p.bf_insns = insns, &p)
	tap_ok(!ns_expr_flow_only(PROG(ret_len)), "flow-only: RET of BPF_LEN: not proved");
	tap_ok(!ns_expr_flow_only(PROG(off_end)), "flow-only: a jump past the end: not proved");
	tap_ok(!ns_expr_flow_only(PROG(flow_offset)),
	       "flow-only: a load at an offset the addresses decide: not proved");
	tap_ok(ns_expr_flow_only(PROG(past_headers)),
	       "flow-only: a load past the headers rejects, whatever the lengths: proved");
	tap_ok(!ns_expr_flow_only(PROG(scratch_len)),
	       "flow-only: a length through scratch memory into a divisor: not proved");
#undef PROG
	p.bf_len = 0;
	p.bf_insns = NULL;
	tap_ok(!ns_expr_flow_only(&p), "flow-only: no program: not proved");

	/* 24 forks on an address in a row: 2^24 paths, past the bound */
	struct bpf_insn forks[2 * 24 + 1];

	for (int i = 0; i < 24; i++) {
		forks[2 * i] = (struct bpf_insn)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 12);
		forks[2 * i + 1] = (struct bpf_insn)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K,
							     1u << i, 0, 0);
	}
	forks[48] = (struct bpf_insn)BPF_STMT(BPF_RET | BPF_K, 1);
	p.bf_len = 49;
	p.bf_insns = forks;
	tap_ok(!ns_expr_flow_only(&p),
	       "flow-only: 2^24 paths: not proved within the bound on the work");
	p.bf_len = 2 * 8 + 1;
	p.bf_insns = forks + 2 * 16;
	tap_ok(ns_expr_flow_only(&p), "flow-only: 2^8 paths of the same: proved");
}

/* xorshift64*: the same flows every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/*
 * A flow from small pools, so that hosts and ports the expressions name
 * come up often; random length and sequence.
 */
static struct ns_tuple random_flow(uint64_t *s)
{
	static const char *const v4[] = { "10.0.0.2", "10.0.0.1", "192.0.2.1", "10.9.8.7" };
	static const char *const v6[] = { "::1", "2001:db8::1", "::2", "fe80::1" };
	static const uint16_t ports[] = { 6201, 6202, 80, 53, 5201, 443 };
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_TCP,
					  IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6, 132 };
	bool six = rnd(s) & 1;
	const char *const *pool = six ? v6 : v4;

	return tuple(six ? AF_INET6 : AF_INET, protos[rnd(s) % sizeof(protos)],
		     pool[rnd(s) % 4], ports[rnd(s) % 6], pool[rnd(s) % 4],
		     rnd(s) % 3 ? ports[rnd(s) % 6] : (uint16_t)rnd(s), 0);
}

/* Lengths small, header-sized, MTU-sized and past 65535. */
static void vary_length(struct ns_tuple *t, uint64_t *s)
{
	static const uint32_t scale[] = { 64, 1600, 70000 };

	t->len = rnd(s) % scale[rnd(s) % 3];
	t->tcp_seq = rnd(s) % 4 ? (uint32_t)rnd(s) : rnd(s) % 8;
}

/*
 * For each row: over many random flows, each with several random
 * lengths and sequence numbers, does the verdict ever change within a
 * flow, and are both verdicts seen?  Run with libpcap's bpf_filter() on
 * the kernel's packet (ns_expr_match()).
 */
static void flow_only_property(void)
{
	const int flows = 2000, lengths = 8;
	uint64_t seed = 0x6e7364756d70ull;
	struct ns_expr e;
	char err[256];

	ns_expr_init(&e);
	for (size_t i = 0; i < N_FLOW_ROWS; i++) {
		enum flow_row kind = flow_rows[i].kind;
		const char *expr = flow_rows[i].expr;
		unsigned int verdicts[2] = { 0, 0 }, changed = 0;
		bool ok = !ns_expr_compile(&e, expr, err, sizeof(err));

		for (int f = 0; ok && f < flows; f++) {
			struct ns_tuple t = random_flow(&seed);
			bool first, same = true;

			vary_length(&t, &seed);
			first = ns_expr_match(&e, &t);
			for (int k = 0; k < lengths; k++) {
				vary_length(&t, &seed);
				same &= ns_expr_match(&e, &t) == first;
			}
			verdicts[first]++;
			changed += !same;
		}
		if (changed || !verdicts[0] || !verdicts[1])
			printf("# '%s': %u flows taken, %u refused, %u changed with the length\n",
			       expr, verdicts[1], verdicts[0], changed);
		if (kind == FLOW_ONLY)
			tap_ok(TAP_IS(ok) && TAP_IS(!changed) &&
			       TAP_IS(verdicts[0]) && TAP_IS(verdicts[1]),
			       "flow-only property: '%s': no flow of %d changes verdict over %d lengths and sequences; both verdicts seen",
			       expr, flows, lengths);
		else if (kind == LENGTH_DECIDES)
			tap_ok(TAP_IS(ok) && TAP_IS(changed),
			       "flow-only property: '%s': %u of %d flows change verdict with the length",
			       expr, changed, flows);
	}
	ns_expr_free(&e);
}

static void joining(void)
{
	char *argv[] = { "nsdump", "-r", "f", "tcp", "port", "80" };
	char *text = ns_expr_join(6, argv, 3);

	tap_ok(TAP_IS(text) && TAP_IS(!strcmp(text, "tcp port 80")),
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
	tap_ok(TAP_IS(!strcmp(ns_proto_name(132, s, sizeof(s)), "proto 132")) &&
	       TAP_IS(!strcmp(ns_proto_name(IPPROTO_ICMPV6, s, sizeof(s)), "icmp6")),
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
	flow_only_rows();
	flow_only_odd_programs();
	flow_only_property();
	joining();
	flow_text();
	stamps();
}
