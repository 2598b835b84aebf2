// SPDX-License-Identifier: GPL-2.0
/*
 * mkpair: two hosts' trace files for the join (nsdump -r a -r b), with
 * what the join must find written as JSON.
 *
 *   mkpair [-a asym_ns] [-d drift_ppm] [-t scale] [-u] a.nst b.nst truth.json
 *   mkpair -s ticks in.nst out.nst
 *
 * Host a (192.0.2.1, tsc_khz 3000000) and host b (192.0.2.2, tsc_khz
 * 2500000, its wall-clock anchor 7 ms off a's) run from one true time;
 * b's clock is PAIR_OFFSET_NS ahead of a's beyond their anchors (plus
 * drift_ppm of the time since the start).  The wire takes PAIR_WIRE_NS
 * plus up to 20 us each way (b to a asym_ns less, so the estimate is
 * off by asym_ns / 2).  The traffic (one block per packet, each send
 * and receive block its own cpu and seq, which the truth names):
 *   TCP a>b, 200 segments of 1448 bytes 1 ms apart: segment 10 lost
 *     and sent again 200 ms later (RETRANS); 20 sent again though it
 *     arrived (two copies each side); 30 arrives twice (a duplicate);
 *     40..43 one TSO send of 4 segments; 50 and 51 merged by GRO
 *     (ABSORBED); 60's receive block not captured;
 *   TCP b>a, 100 segments of 1000 bytes 2 ms apart;
 *   UDP a>b, 100 datagrams of 200 bytes 1 ms apart: 5 lost, 7 twice;
 *   UDP b>a, 50 datagrams of 100 or 300 bytes 3 ms apart;
 *   a loopback block on a; a third host's segment received by b.
 * -t: the packets' spacing times scale.  -u: the UDP traffic alone.  -s: the file's blocks' tsc0 moved by
 * @ticks (its anchors kept): an offset added on purpose.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "source/file.h"

#define PAIR_OFFSET_NS	1234567.0
#define PAIR_ANCHOR_NS	7000000ull
#define PAIR_WIRE_NS	50000.0
#define PAIR_WALL0	1795304467000000000ull
#define KHZ_A		3000000u
#define KHZ_B		2500000u
#define REF_A		1000000000ull
#define REF_B		5000000000ull
#define MAXB		4096

struct host {
	struct nsl_block b[MAXB];
	unsigned int n;
	uint32_t khz;
	uint64_t ref;
	uint8_t addr[4];
};

static struct host hosts[2];
static double asym_ns, drift_ppm, scale = 1;
static FILE *truth;
static unsigned int npairs, nwhy[2][2][16];
static const char *const why_name[] = { "joined", "not-seen",
					"duplicate", "no-peer", "local" };
enum { J, NOT_SEEN, DUP, NO_PEER, LOCAL };

/* Host @h's TSC at true time @t (ns from the start). */
static uint64_t tsc_at(unsigned int h, double t)
{
	const struct host *x = &hosts[h];
	double local = h ? t + PAIR_OFFSET_NS + drift_ppm * 1e-6 * t -
			   PAIR_ANCHOR_NS : t;

	return x->ref + (uint64_t)llround(local * x->khz / 1e6);
}

static void rec(struct nsl_block *b, unsigned int h, unsigned int region,
		double start_ns, double ns, unsigned int depth)
{
	struct nsl_record *r = &b->rec[b->nrec++];

	r->region = region;
	r->depth = depth;
	r->nmerged = 1;
	r->cpu = b->hdr.cpu;
	r->start = (uint64_t)llround(start_ns * hosts[h].khz / 1e6);
	r->ticks = (uint64_t)llround(ns * hosts[h].khz / 1e6);
}

/* A new block on @h at true time @t, from host @from, proto, ports. */
static struct nsl_block *block(unsigned int h, double t, unsigned int from,
			       uint8_t proto, uint16_t sport, uint16_t dport,
			       uint32_t plen)
{
	struct host *x = &hosts[h];
	struct nsl_block *b = &x->b[x->n];

	memset(b, 0, sizeof(*b));
	b->hdr.kind = NSL_ITEM_BLOCK;
	b->hdr.cpu = x->n % 2;
	b->seq = x->n++;
	b->tsc0 = tsc_at(h, t);
	b->conn = 0x100 + h;
	b->gso_segs = 1;
	b->proto = proto;
	b->family = AF_INET;
	b->nhlen = 20;
	b->thlen = proto == IPPROTO_TCP ? 32 : 8;
	b->len = plen + b->nhlen + b->thlen;
	b->sport = sport;
	b->dport = dport;
	b->ifindex = 2;
	memcpy(b->saddr, hosts[from].addr, 4);
	memcpy(b->daddr, hosts[!from].addr, 4);
	return b;
}

/* Region after region of @b from table @r: region, start, ns, depth. */
static void recs(struct nsl_block *b, unsigned int h, const double (*r)[4],
		 unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		rec(b, h, (unsigned int)r[i][0], r[i][1], r[i][2],
		    (unsigned int)r[i][3]);
	b->dev[0] = (struct nsl_dev){ .ifindex = 2, .netns = 4026531840u,
				      .first = b->dir == NSL_DIR_TX ? 3 : 0,
				      .dir = b->dir };
	b->ndev = 1;
}

/* A send block on @h whose hand-off to the driver is at true time @t. */
static struct nsl_block *send_(unsigned int h, double t, uint8_t proto,
			      uint16_t sport, uint16_t dport, uint32_t plen)
{
	struct nsl_block *b = block(h, t - 3000, h, proto, sport, dport, plen);

	const double r[][4] = {
		{ NSL_R_WRITE, 0, 2500, 0 },
		{ proto == IPPROTO_TCP ? NSL_R_TCP : NSL_R_UDP, 100, 1200, 1 },
		{ NSL_R_IP, 1400, 500, 1 }, { NSL_R_LINK, 2000, 1000, 1 },
		{ NSL_R_NIC, 3000, 30000, 0 },
	};

	b->dir = NSL_DIR_TX;
	recs(b, h, r, 5);
	return b;
}

/* A receive block on @h whose rx-nic starts at true time @t. */
static struct nsl_block *recv_(unsigned int h, double t, uint8_t proto,
			       uint16_t sport, uint16_t dport, uint32_t plen,
			       const uint8_t *saddr)
{
	struct nsl_block *b = block(h, t, !h, proto, sport, dport, plen);

	if (saddr)
		memcpy(b->saddr, saddr, 4);
	const double r[][4] = {
		{ NSL_R_RX_NIC, 0, 800, 0 }, { NSL_R_RX_LINK, 900, 700, 0 },
		{ NSL_R_RX_IP, 1700, 600, 0 },
		{ proto == IPPROTO_TCP ? NSL_R_RX_TCP : NSL_R_RX_UDP, 2400, 900, 0 },
		{ NSL_R_QUEUE, 3400, 5000, 0 }, { NSL_R_COPY, 8500, 1500, 0 },
	};

	b->dir = NSL_DIR_RX;
	b->flags = NSL_BF_RX;
	recs(b, h, r, 6);
	return b;
}

/* The wire time of the k-th packet from @from, ns. */
static double wire(unsigned int from, unsigned int k)
{
	return PAIR_WIRE_NS + (k * 7919 % 20000) - (from ? asym_ns : 0);
}

static void pair(const struct nsl_block *t, unsigned int th,
		 const struct nsl_block *r, unsigned int rh)
{
	fprintf(truth, "%s[%u, %u, %llu, %u, %u, %llu]", npairs++ ? ", " : "",
		th, t->hdr.cpu, (unsigned long long)t->seq, rh, r->hdr.cpu,
		(unsigned long long)r->seq);
	nwhy[th][1][J] += !(t->flags & 0x80000000u);
	nwhy[rh][0][J]++;
}

static void why(unsigned int h, int tx, int w)
{
	nwhy[h][tx][w]++;
}

/* One packet from @h at @t, received (unless @lost) after its wire. */
static const struct nsl_block *packet(unsigned int h, double t, unsigned int k,
				      uint8_t proto, uint16_t sp, uint16_t dp,
				      uint32_t plen, uint32_t seq, bool lost)
{
	struct nsl_block *s = send_(h, t, proto, sp, dp, plen), *r;

	s->tcp_seq = seq;
	if (lost) {
		why(h, 1, NOT_SEEN);
		return s;
	}
	r = recv_(!h, t + wire(h, k), proto, sp, dp, plen, NULL);
	r->tcp_seq = seq;
	pair(s, h, r, !h);
	return s;
}

static void tcp_ab(void)
{
	for (unsigned int k = 0; k < 200; k++) {
		double t = 1e6 + k * 1e6 * scale;
		uint32_t seq = 1000 + k * 1448;

		if (k == 41 || k == 42 || k == 43)
			continue;
		if (k == 40) {	/* TSO: one send, four frames */
			struct nsl_block *s = send_(0, t, IPPROTO_TCP, 43210, 5201,
						   4 * 1448);

			s->tcp_seq = seq;
			s->gso_segs = 4;
			s->flags |= NSL_BF_GSO;
			for (unsigned int f = 0; f < 4; f++) {
				struct nsl_block *r = recv_(1, t + wire(0, k) + f * 12000,
							    IPPROTO_TCP, 43210, 5201,
							    1448, NULL);

				r->tcp_seq = seq + f * 1448;
				s->flags |= f ? 0x80000000u : 0;
				pair(s, 0, r, 1);
				s->flags &= ~0x80000000u;
			}
			continue;
		}
		if (k == 60) {	/* the receive block not captured */
			send_(0, t, IPPROTO_TCP, 43210, 5201, 1448)->tcp_seq = seq;
			why(0, 1, NOT_SEEN);
			continue;
		}
		packet(0, t, k, IPPROTO_TCP, 43210, 5201, 1448, seq, k == 10);
		if (k == 10 || k == 20)	/* sent again 200 ms later */
			((struct nsl_block *)packet(0, t + 2e8, k + 1000,
				IPPROTO_TCP, 43210, 5201, 1448, seq, false))->flags |=
				NSL_BF_RETRANS;
		if (k == 30) {	/* a duplicate on the wire */
			struct nsl_block *r = recv_(1, t + wire(0, k) + 5000,
						    IPPROTO_TCP, 43210, 5201,
						    1448, NULL);

			r->tcp_seq = seq;
			why(1, 0, DUP);
		}
		if (k == 50 || k == 51)
			hosts[1].b[hosts[1].n - 1].flags |= NSL_BF_ABSORBED;
	}
}

static void tcp_ba(void)
{
	for (unsigned int k = 0; k < 100; k++)
		packet(1, 1.5e6 + k * 2e6 * scale, k, IPPROTO_TCP, 5202, 43211, 1000,
		       7000 + k * 1000, false);
}

static void udp(void)
{
	for (unsigned int k = 0; k < 100; k++) {
		double t = 1.25e6 + k * 1e6 * scale;

		packet(0, t, k + 500, IPPROTO_UDP, 40000, 4000, 200, 0, k == 5);
		if (k == 7) {
			recv_(1, t + wire(0, k + 500) + 3000, IPPROTO_UDP, 40000,
			      4000, 200, NULL);
			why(1, 0, DUP);
		}
	}
	for (unsigned int k = 0; k < 50; k++)
		packet(1, 1.75e6 + k * 3e6 * scale, k + 700, IPPROTO_UDP, 4001, 40001,
		       k % 2 ? 300 : 100, 0, false);
}

/* A loopback block on a, and a third host's segment at b. */
static void others(void)
{
	static const uint8_t third[4] = { 198, 51, 100, 9 };
	struct nsl_block *b = send_(0, 5e5, IPPROTO_TCP, 5555, 6666, 100);

	b->flags |= NSL_BF_LOOPBACK;
	why(0, 1, LOCAL);
	recv_(1, 6e5, IPPROTO_TCP, 80, 43999, 500, third)->tcp_seq = 1;
	why(1, 0, NO_PEER);
}

static int by_tsc(const void *x, const void *y)
{
	const struct nsl_block *a = x, *b = y;

	return a->tsc0 < b->tsc0 ? -1 : a->tsc0 > b->tsc0;
}

static int write_host(unsigned int h, const char *path)
{
	struct host *x = &hosts[h];
	struct nsl_info info = {
		.abi_version = NSL_ABI_VERSION, .tsc_khz = x->khz,
		.block_size = sizeof(struct nsl_block), .ncpus = 2,
		.max_records = NSL_MAX_RECORDS, .max_events = NSL_MAX_EVENTS,
		.ring_bytes = 1 << 20, .ring_max = 1 << 26, .ref_tsc = x->ref,
		.ref_realtime_ns = PAIR_WALL0 + (h ? PAIR_ANCHOR_NS : 0),
	};
	struct nsf_writer w;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), ret = 0;

	if (fd < 0 || nsf_writer_open(&w, fd, "mkpair", &info))
		return -1;
	qsort(x->b, x->n, sizeof(x->b[0]), by_tsc);
	for (unsigned int i = 0; i < x->n && !ret; i++) {
		struct ns_item it = { .type = NS_ITEM_BLOCK };

		x->b[i].flags &= ~0x80000000u;
		x->b[i].hdr.size = NSL_BLOCK_SIZE(x->b[i].nrec);
		it.hdr = x->b[i].hdr;
		it.block = x->b[i];
		ret = nsf_write_item(&w, &it);
	}
	if (nsf_writer_close(&w))
		ret = -1;
	return ret;
}

static void write_truth(bool udp_only)
{
	unsigned int k = 0;

	fprintf(truth, "], \"offset_ns\": %.1f, \"asym_ns\": %.1f, \"drift_ppm\": %.3f, \"tsc_khz\": [%u, %u], \"udp_only\": %s, \"counts\": {",
		PAIR_OFFSET_NS, asym_ns, drift_ppm, KHZ_A, KHZ_B,
		udp_only ? "true" : "false");
	for (unsigned int h = 0; h < 2; h++)
		for (int tx = 1; tx >= 0; tx--)
			for (unsigned int w = 0; w < 5; w++)
				if (nwhy[h][tx][w])
					fprintf(truth, "%s\"%u %s %s\": %u",
						k++ ? ", " : "", h,
						tx ? "tx" : "rx", why_name[w],
						nwhy[h][tx][w]);
	fprintf(truth, "}}\n");
}

/* -s: @in's blocks moved by @ticks into @out. */
static int shift(long long ticks, const char *in, const char *out)
{
	int ifd = open(in, O_RDONLY), ofd, ret = 0;
	struct nsf_reader r;
	struct nsf_writer w;
	struct ns_item it;
	enum nsf_status st;

	if (ifd < 0 || nsf_reader_open(&r, ifd, in))
		return -1;
	ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (ofd < 0 || nsf_writer_open(&w, ofd, "mkpair -s", &r.info))
		return -1;
	if (r.have_calib)
		nsf_write_calib(&w, &r.calib);
	while (!ret && (st = nsf_read_item(&r, &it)) == NSF_OK) {
		if (it.type == NS_ITEM_BLOCK) {
			it.block.tsc0 += (uint64_t)ticks;
			it.raw = NULL;	/* written from the block, not the bytes */
			it.hdr.kind = NSL_ITEM_BLOCK;
		}
		if (it.type == NS_ITEM_SKIPPED)
			continue;
		ret = nsf_write_item(&w, &it);
	}
	if (nsf_writer_close(&w))
		ret = -1;
	nsf_reader_close(&r);
	return ret;
}

int main(int argc, char **argv)
{
	bool udp_only = false;
	int c;

	while ((c = getopt(argc, argv, "a:d:t:us:")) != -1) {
		switch (c) {
		case 'a':
			asym_ns = atof(optarg);
			break;
		case 'd':
			drift_ppm = atof(optarg);
			break;
		case 't':
			scale = atof(optarg);
			break;
		case 'u':
			udp_only = true;
			break;
		case 's':
			return argc - optind == 2 &&
			       !shift(atoll(optarg), argv[optind],
				      argv[optind + 1]) ? 0 : 1;
		default:
			return 2;
		}
	}
	if (argc - optind != 3 || !(truth = fopen(argv[optind + 2], "w")))
		return 2;
	for (unsigned int h = 0; h < 2; h++) {
		hosts[h].khz = h ? KHZ_B : KHZ_A;
		hosts[h].ref = h ? REF_B : REF_A;
		memcpy(hosts[h].addr, (const uint8_t[4]){ 192, 0, 2, 1 + h }, 4);
	}
	fprintf(truth, "{\"pairs\": [");
	if (!udp_only) {
		tcp_ab();
		tcp_ba();
		others();
	}
	udp();
	write_truth(udp_only);
	fclose(truth);
	return write_host(0, argv[optind]) || write_host(1, argv[optind + 1]);
}
