/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic NetSlice items for the tests and mkblocks.  Block i (from 0):
 * cpu i % 2, seq i / 2, tsc0 T0 + i * 3000, tx, len 1448, regions
 *   write  3000 * (i % 10 + 1) ticks   (1..10 us at 3 GHz), depth 0
 *   tcp    300 + 120                   (two records: 0.140 us), depth 1
 *   ip     600, link 1500              (0.2, 0.5 us), depth 1
 *   nic    30000                       (10 us), depth 0
 * so write encloses K = 4 pairs and the others none.  An OPEN nic record
 * every open_every blocks, an INVALID ip record every invalid_every, the
 * first tcp record SHARED (a split's copy) every shared_every, a
 * loss item (lost 5) before every loss_every-th block, counter deltas
 * ticks / 10 + e when nevents > 0.  No flow (family 0, proto 6, conn 42)
 * unless flows: then block i has gen_flows[i % GEN_NFLOWS]'s flow,
 * direction, length, ifindex and connection, its addresses zero with
 * no_addr (a capture without NSL_REC_FLOWADDR).
 *
 * The calibration (gen_calib, the same on every CPU): tau_o 30 ticks
 * (10 ns), tau_beta 60 (20 ns), NSI 90, NSS 45, NST 45, NSE 300;
 * n(o,e) = 2 + e, n(beta,e) = 5 + e.  Corrected: write raw - 270 ticks,
 * tcp 360 (0.120 us), ip 570, link 1470, nic 29970.
 */
#ifndef _NS_GEN_H
#define _NS_GEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "source/calib.h"
#include "source/decode.h"
#include "source/counters.h"
#include "netslice.h"

#define GEN_TSC_KHZ	3000000u
#define GEN_T0		1000000000ull
#define GEN_LOST	5

struct gen_opts {
	unsigned int n;		/* blocks */
	unsigned int loss_every;	/* 0: none */
	unsigned int open_every;	/* 0: none */
	unsigned int nevents;
	unsigned int invalid_every;	/* 0: none */
	unsigned int shared_every;	/* first tcp record SHARED; 0: none */
	bool calib;		/* gen_file: write a CALIB record */
	bool named;		/* gen_file: EVENTS record (gen_events) */
	bool pingpong;		/* conn 'A' and 'B' in turn, not 42 */
	bool nasty;		/* gen_file: GEN_NASTY_* names (with named, calib) */
	bool flows;		/* gen_flows[] in turn */
	bool no_addr;		/* with flows: addresses left zero */
	uint32_t dev_netns;	/* not 0: the devices of gen_block() below */
};

/*
 * With dev_netns, block i crosses the devices of path i % 3 (ABI 6),
 * "ours" in namespace dev_netns (nsdump's own, for -i by name), its
 * ifindex the last one's; records write, tcp, tcp, ip as above, then:
 *   0  VLAN over lo: if9/tx (first 4: link 1500) > if1/tx (first 5:
 *      link 900, nic 30000)
 *   1  a veth into a container: if8/tx (first 4: link 1500) >
 *      if2@GEN_NETNS_CT/rx (first 5: rx-link 600)
 *   2  a NIC: if6/tx (first 4: link 1500, nic 30000)
 * so by the ABI's rule write, tcp and ip are each path's first device's.
 */
#define GEN_NETNS_CT	4026532253u

/*
 * Known flows, IPv4 and IPv6, TCP, UDP, ICMP and one without IP, over
 * several hosts, ports and interfaces (mkblocks -D lists them per
 * block, for the tests to count matches on their own).
 */
struct gen_flow {
	uint16_t family;	/* AF_INET, AF_INET6, 0 */
	uint8_t proto;
	const char *saddr, *daddr;	/* inet_pton's text */
	uint16_t sport, dport;
	uint8_t dir;
	uint32_t ifindex, len;
	uint64_t conn;
};

#define GEN_NFLOWS	12
extern const struct gen_flow gen_flows[GEN_NFLOWS];

/*
 * Names no printer may pass on as they are: quotes, backslashes, control
 * characters, ill-formed UTF-8 of every kind (a bad lead byte, a cut
 * sequence, a surrogate, above U+10FFFF, overlong), and well-formed
 * multibyte characters and DEL, which must come through unchanged.
 */
#define GEN_NASTY_EVENT0	"cyc\"les\\"
#define GEN_NASTY_EVENT1	"in\x01st\x1f\n\t"
#define GEN_NASTY_EVENT2	"\xff\xfe bad \xc3( \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf \xe2\x82"
#define GEN_NASTY_EVENT3	"ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \x7f"
#define GEN_NASTY_MODEL		"Model \"X\" \\ \x1b[31m \xc0\xaf\xf8"

#define GEN_TAU_O	30
#define GEN_TAU_BETA	60

void gen_info(struct nsl_info *info);
/* The fixed calibration of @cpu (nevents counts valid). */
void gen_calib(uint32_t cpu, unsigned int nevents, struct nsl_calib *c);
/* cycles, instructions, cpu-clock, page-faults: the first @n. */
void gen_events(unsigned int n, struct ns_counters *sel);
/* Item i of the stream into @buf; returns its size, 0 past the end. */
size_t gen_block(const struct gen_opts *g, unsigned int i, void *buf);
size_t gen_loss(unsigned int i, void *buf);
/*
 * MAGNeT items.  gen_event: conn 0x2a's socket view (192.0.2.1:43210 >
 * 192.0.2.2:5201), TCP state cwnd 10 ssthresh 2147483647 srtt 120us
 * rto 201000us out 3 retr 0/0 snd_wnd 65535 rcv_wnd 65483 mss 1448
 * ESTABLISHED, IP v4 tos 0 ttl 64 id 1234 frag 0x4000 proto 6; the
 * addresses only with NSL_EVF_ADDR.  gen_sysinfo: ref_tsc GEN_T0 at
 * GEN_WALL0 (2026-11-21 23:41:07 UTC), tsc_khz GEN_TSC_KHZ, 2 CPUs.
 */
#define GEN_WALL0	1795304467000000000ull
#define GEN_CONN_A	0x2a
#define GEN_CONN_B	0x2b
size_t gen_event(uint32_t cpu, uint64_t seq, uint64_t tsc, uint32_t type,
		 uint32_t bytes, uint32_t flags, void *buf);
size_t gen_sysinfo(void *buf);

/*
 * MAGNeT's FTP example (gen_magnet_*), all times from GEN_EV_T0 =
 * GEN_T0 + 370370367 ticks (2026-11-21 23:41:07.123456789 UTC):
 *
 * conn 0x2a (cpu 0), 43210 > 5201, sends: write k (k = 0 .. writes-1)
 * at GEN_EV_T0 + k * 20 ms is a SOCK_SEND of 10240 bytes, then 8
 * segments j = 0..7 of 1448 bytes (the last 104) at + 5 us + j * 12 us:
 * TCP_SEND of the payload, IP_SEND of payload + 32, DEV_SEND of
 * payload + 52 one microsecond later, and a tx block (len payload + 52,
 * tcp 0.2 us, ip 0.2 us, nic 1 us).  With tso: one TCP_SEND 10240, one
 * IP_SEND 10272, one DEV_SEND 10292 at + 5 us, flagged NSL_EVF_TSO, and
 * one block of 8 GSO segments.
 *
 * conn 0x2b (cpu 1), 43211 > 5201, receives: burst k at GEN_EV_T0 +
 * 1 ms + k * 5 ms, 3 segments of 1448 at + j * 12 us: DEV_RECV 1500,
 * IP_RECV 1500 and TCP_RECV 1448 a microsecond apart and an rx block
 * (rx-nic 0.1 us, rx-ip 0.2 us, rx-tcp 0.3 us); SOCK_RECV 4344 at
 * + 40 us.
 *
 * Every block has its flow (IPv4, TCP, the packet's ports; addresses
 * 192.0.2.1 local, .2 remote with addr).  Socket events carry TCP
 * state, the others IP fields (TCP_* both);
 * with addr every SOCK_* event also carries NSL_EVF_ADDR and only
 * those, so a receiver's blocks come before its ports are known.  A
 * SYSINFO item first (sysinfo), a loss item of 5 after item loss_at
 * (0: none).  Items are in time order; seq counts per CPU.
 */
#define GEN_EV_T0	(GEN_T0 + 370370367ull)
#define GEN_MS		3000000ull	/* ticks */
#define GEN_US		3000ull

struct gen_magnet {
	unsigned int writes;	/* conn 0x2a's 10240-byte writes */
	unsigned int reads;	/* conn 0x2b's bursts */
	unsigned int loss_at;
	bool tso, addr, sysinfo;
};

unsigned char *gen_magnet_stream(const struct gen_magnet *m, size_t *len);
int gen_magnet_file(const struct gen_magnet *m, int fd);

/* What hands a generator's items, one by one, to @fn; 0 or -1. */
typedef int (*gen_walker)(const void *opts,
			  int (*fn)(void *ctx, const void *item, size_t size),
			  void *ctx);
/*
 * A trace file of gen_info(), @head's EVENTS and CALIB records (NULL:
 * none) and the items of @walk; 0 or -1.
 */
int gen_trace_file(gen_walker walk, const void *opts,
		   const struct gen_opts *head, int fd);

/* The whole stream (raw ABI items) into malloc'd memory. */
unsigned char *gen_stream(const struct gen_opts *g, size_t *len);
/*
 * Whether @got (read back from a file) is the item at @want (@left bytes
 * of a stream); *@taken is the stream item's size.  A block is compared
 * as the struct it decodes to, all but its kind and size: the writer
 * makes it compact (NSL_ITEM_CBLOCK).
 */
bool gen_same_item(const void *want, size_t left, const struct ns_item *got,
		   size_t *taken);
/* @p's blocks compact, as an ABI 4 module sends them: the new length. */
size_t gen_compact(unsigned char *p, size_t len);
/* A trace file; 0 or -1. */
int gen_file(const struct gen_opts *g, int fd);

#endif /* _NS_GEN_H */
