// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>
#include "gen.h"
#include "genviews.h"

/* A block as the macros build it: NSS opens a record, NST closes it. */
struct bld {
	struct nsl_block b;
	uint64_t at;		/* ticks from tsc0 */
	unsigned int depth, cpu;
	uint64_t rng;		/* xorshift64 */
};

/* Instructions per cycle by region, for the counter deltas. */
static double ipc(unsigned int region)
{
	switch (region) {
	case NSL_R_TCP: case NSL_R_UDP: case NSL_R_COPY:
		return 1.6;	/* copies and checksums */
	case NSL_R_IP: case NSL_R_RX_IP: case NSL_R_RX_TCP:
		return 1.1;
	case NSL_R_NIC: case NSL_R_SNDQ: case NSL_R_QUEUE: case NSL_R_QDISC:
	case NSL_R_BACKLOG: case NSL_R_SK_BACKLOG:
		return 0.2;	/* waits: mostly other work's instructions */
	default:
		return 0.8;
	}
}

static unsigned int nss(struct bld *k, unsigned int region)
{
	struct nsl_record *r = &k->b.rec[k->b.nrec];

	r->region = region;
	r->depth = k->depth++;
	r->cpu = k->cpu;
	r->start = k->at;
	r->nmerged = 1;
	return k->b.nrec++;
}

static void counts(struct bld *k, unsigned int i)
{
	struct nsl_record *r = &k->b.rec[i];

	r->count[0] = r->ticks;
	r->count[1] = (uint64_t)(r->ticks * ipc(r->region));
}

static void nst(struct bld *k, unsigned int i)
{
	k->b.rec[i].ticks = k->at - k->b.rec[i].start;
	k->depth--;
	counts(k, i);
}

static void leaf(struct bld *k, unsigned int region, uint64_t ticks)
{
	unsigned int i = nss(k, region);

	k->at += ticks;
	nst(k, i);
}

static uint64_t rnd(struct bld *k, uint64_t lo, uint64_t hi)
{
	double u;

	k->rng ^= k->rng << 13;
	k->rng ^= k->rng >> 7;
	k->rng ^= k->rng << 17;
	u = (double)(k->rng >> 11) / (double)(1ull << 53);
	return lo + (uint64_t)((double)(hi - lo) * u * u);	/* a skew low */
}

static void flow(struct nsl_block *b, uint8_t proto, uint32_t saddr,
		 uint32_t daddr, uint16_t sport, uint16_t dport, uint32_t seq)
{
	uint32_t s = htonl(saddr), d = htonl(daddr);

	b->family = AF_INET;
	b->proto = proto;
	b->nhlen = 20;
	b->thlen = proto == 6 ? 32 : 8;
	memcpy(b->saddr, &s, 4);
	memcpy(b->daddr, &d, 4);
	b->sport = sport;
	b->dport = dport;
	b->tcp_seq = seq;
}

/* The values of a send path's regions: block 0's, or drawn. */
struct tx_values {
	uint64_t copy, sndq, hdr, ip, qdisc, nic;
};

static void tcp_tx(struct bld *k, const struct tx_values *v)
{
	unsigned int write = nss(k, NSL_R_WRITE), link, sndq;

	k->at += 150;
	leaf(k, NSL_R_TCP, v->copy);
	k->at += 150;
	sndq = nss(k, NSL_R_SNDQ);
	k->at += v->sndq;
	nst(k, sndq);
	k->b.rec[sndq].flags = NSL_RF_GAP;
	k->at += 150;
	leaf(k, NSL_R_TCP, v->hdr);
	k->at += 150;
	leaf(k, NSL_R_IP, v->ip);
	k->at += 150;
	link = nss(k, NSL_R_LINK);
	k->at += 450;
	if (v->qdisc) {
		leaf(k, NSL_R_QDISC, v->qdisc);
		k->at += 450;
	}
	nst(k, link);
	k->at += 450;
	nst(k, write);
	k->at += 300;
	leaf(k, NSL_R_NIC, v->nic);
}

static void tcp_tx_block(struct bld *k, unsigned int i, unsigned int nth)
{
	static const struct tx_values first = {
		.copy = 1200, .sndq = 6000, .hdr = 600, .ip = 900,
		.qdisc = 4200, .nic = 24000,
	};
	struct tx_values v = {
		.copy = rnd(k, 900, 4500), .sndq = rnd(k, 300, 30000),
		.hdr = rnd(k, 450, 1200), .ip = rnd(k, 600, 2400),
		.qdisc = i % 3 ? 0 : rnd(k, 900, 9000),
		.nic = rnd(k, 9000, 60000),
	};

	if (i % 50 == 49)
		v.sndq *= 20;
	tcp_tx(k, i ? &v : &first);
	k->b.len = 1500;
	flow(&k->b, 6, 0x0a000001, 0x0a000002, 43210, 5201, 1000 + 1448 * nth);
	k->b.conn = 0x2a;
}

/* The rest of a send path without a qdisc: ip, link, write's end, nic. */
static void to_driver(struct bld *k, unsigned int write, uint64_t nic_lo,
		      uint64_t nic_hi, uint64_t gap)
{
	k->at += 150;
	leaf(k, NSL_R_IP, rnd(k, 600, 1800));
	k->at += 150;
	leaf(k, NSL_R_LINK, rnd(k, 900, 3000));
	k->at += 150;
	nst(k, write);
	k->at += gap;
	leaf(k, NSL_R_NIC, rnd(k, nic_lo, nic_hi));
}

static void tcp_rx(struct bld *k, bool backlog)
{
	unsigned int tcp;

	leaf(k, NSL_R_RX_NIC, rnd(k, 600, 3000));
	k->at += 90;
	leaf(k, NSL_R_RX_LINK, rnd(k, 900, 6000));
	k->at += 90;
	leaf(k, NSL_R_RX_IP, rnd(k, 600, 2400));
	k->at += 90;
	tcp = nss(k, NSL_R_RX_TCP);
	k->at += rnd(k, 300, 1500);
	if (backlog) {
		leaf(k, NSL_R_SK_BACKLOG, rnd(k, 1500, 15000));
		k->at += 150;
	}
	nst(k, tcp);
	k->b.dir = NSL_DIR_RX;
	k->b.flags |= NSL_BF_RX;
}

static void loopback(struct bld *k, unsigned int i, unsigned int nth)
{
	unsigned int write = nss(k, NSL_R_WRITE), rx_link, tcp;

	k->at += 150;
	leaf(k, NSL_R_TCP, rnd(k, 600, 3000));
	to_driver(k, write, 600, 2400, 150);	/* nic: to the hand-off */
	k->cpu = 1;
	k->at += 300;
	rx_link = nss(k, NSL_R_RX_LINK);
	k->at += 150;
	leaf(k, NSL_R_BACKLOG, rnd(k, 1500, 9000));
	k->at += 150;
	nst(k, rx_link);
	k->at += 90;
	leaf(k, NSL_R_RX_IP, rnd(k, 600, 1800));
	k->at += 90;
	tcp = nss(k, NSL_R_RX_TCP);
	k->at += rnd(k, 900, 3000);
	nst(k, tcp);
	k->at += 90;
	leaf(k, NSL_R_QUEUE, rnd(k, 3000, 30000) * (i % 50 == 49 ? 20 : 1));
	k->at += 90;
	leaf(k, NSL_R_COPY, rnd(k, 900, 4500));
	k->b.flags |= NSL_BF_LOOPBACK | NSL_BF_RX;
	k->b.len = 1500;
	flow(&k->b, 6, 0x7f000001, 0x7f000001, 50000, 7000, 5000 + 1448 * nth);
	k->b.conn = 0x2c;
}

/* udp's two intervals (copy, then header) summed in one MERGED record */
static void udp_tx(struct bld *k)
{
	unsigned int write = nss(k, NSL_R_WRITE), udp;
	uint64_t copy = rnd(k, 600, 3000), wait = rnd(k, 300, 1500);
	uint64_t hdr = rnd(k, 300, 900);

	k->at += 150;
	udp = nss(k, NSL_R_UDP);
	k->at += copy;
	k->depth--;
	k->at += wait;
	k->depth++;
	k->at += hdr;
	nst(k, udp);
	k->b.rec[udp].ticks = copy + hdr;
	k->b.rec[udp].nmerged = 2;
	k->b.rec[udp].flags = NSL_RF_MERGED;
	counts(k, udp);
	to_driver(k, write, 9000, 30000, 300);
	k->b.len = 540;
	flow(&k->b, 17, 0x0a000001, 0x0a000003, 5353, 5353, 0);
	k->b.conn = 0x2d;
}

static void build(struct bld *k, unsigned int i)
{
	unsigned int group = i / 8, kind = i % 8;

	switch (kind) {
	case 0: case 1: case 2: case 3:
		tcp_tx_block(k, i, group * 4 + kind);
		break;
	case 4:
		tcp_rx(k, i % 3 == 0);
		k->b.len = 52;
		flow(&k->b, 6, 0x0a000002, 0x0a000001, 5201, 43210, 777 + group);
		k->b.conn = 0x2a;
		break;
	case 5:
		loopback(k, i, group);
		break;
	case 6:
		udp_tx(k);
		break;
	case 7:
		tcp_rx(k, false);
		k->b.len = 1500;
		flow(&k->b, 6, 0x0a000001, 0x0a000002, 43210, 5201,
		     1000 + 1448 * (group * 4));
		k->b.conn = 0x3a;	/* the receiver's socket */
		break;
	}
}

static size_t block(struct bld *k, unsigned int i, uint64_t *seq)
{
	unsigned int kind = i % 8;
	uint64_t rng = k->rng;

	memset(k, 0, sizeof(*k));
	k->rng = rng;
	k->cpu = kind == 4 || kind == 7;
	k->b.hdr.kind = NSL_ITEM_BLOCK;
	k->b.tsc0 = GEN_T0 + i * GENV_SPACING;
	k->b.ifindex = kind == 5 ? 1 : 2;
	k->b.gso_segs = 1;
	k->b.nevents = 2;
	k->b.mode = NSL_MODE_COUNT;
	build(k, i);
	if (i == 10)
		k->b.rec[k->b.nrec - 1].flags |= NSL_RF_OPEN;
	if (i == 20)
		k->b.flags |= NSL_BF_RETRANS;
	k->b.hdr.cpu = kind == 4 || kind == 5 || kind == 7;
	k->b.seq = seq[k->b.hdr.cpu]++;
	k->b.hdr.size = NSL_BLOCK_SIZE(k->b.nrec);
	return k->b.hdr.size;
}

/* MAGNeT's records of a segment sent by a kind-0 block. */
static int segment_events(const struct bld *k, unsigned int i, uint64_t *seq,
			  int (*fn)(void *ctx, const void *item, size_t size),
			  void *ctx)
{
	uint32_t flags = NSL_EVF_TCP | NSL_EVF_IP | NSL_EVF_ADDR;
	uint64_t t = k->b.tsc0;
	unsigned char item[sizeof(struct nsl_event_rec)];
	int ret = 0;

	if (i % 32 == 0)
		ret |= fn(ctx, item, gen_event(0, seq[0]++, t, NSL_EV_SOCK_SEND,
					      4 * 1448, flags, item));
	ret |= fn(ctx, item, gen_event(0, seq[0]++, t + k->b.rec[3].start,
				      NSL_EV_TCP_SEND, 1448, flags, item));
	ret |= fn(ctx, item, gen_event(0, seq[0]++, t + k->b.rec[4].start,
				      NSL_EV_IP_SEND, 1468, NSL_EVF_IP, item));
	ret |= fn(ctx, item, gen_event(0, seq[0]++, t + k->b.rec[5].start + 450,
				      NSL_EV_DEV_SEND, 1500, NSL_EVF_IP, item));
	return ret;
}

static int views_walk(const void *opts,
		      int (*fn)(void *ctx, const void *item, size_t size),
		      void *ctx)
{
	unsigned int n = *(const unsigned int *)opts;
	unsigned char item[sizeof(struct nsl_block)];
	uint64_t seq[2] = { 0, 0 };
	struct bld k = { .rng = 0x9e3779b97f4a7c15ull };

	if (fn(ctx, item, gen_sysinfo(item)))
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		size_t size = block(&k, i, seq);

		if (i % 8 == 0 && segment_events(&k, i, seq, fn, ctx))
			return -1;
		if (fn(ctx, &k.b, size))
			return -1;
		if (i == GENV_LOSS_AFTER) {
			struct nsl_loss l = {
				.hdr = { NSL_ITEM_LOSS, sizeof(l), 0 },
				.lost = GENV_LOST, .first_seq = seq[0],
				.tsc = k.b.tsc0 + GENV_SPACING / 2,
			};

			seq[0] += GENV_LOST;
			if (fn(ctx, &l, sizeof(l)))
				return -1;
		}
	}
	return 0;
}

int gen_views_file(unsigned int n, int fd)
{
	const struct gen_opts head = { .nevents = 2, .named = true, .calib = true };

	return gen_trace_file(views_walk, &n, &head, fd);
}
