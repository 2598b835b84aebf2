// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <string.h>
#include "source/decode.h"
#include "source/file.h"
#include "gen.h"

void gen_info(struct nsl_info *info)
{
	memset(info, 0, sizeof(*info));
	info->abi_version = NSL_ABI_VERSION;
	info->tsc_khz = GEN_TSC_KHZ;
	info->block_size = sizeof(struct nsl_block);
	info->ncpus = 2;
	info->max_records = NSL_MAX_RECORDS;
	info->max_events = NSL_MAX_EVENTS;
	info->ring_bytes = 1 << 20;
	info->ring_max = 1 << 26;
	info->ref_tsc = GEN_T0;
	info->ref_realtime_ns = 1700000000000000000ull;
}

void gen_calib(uint32_t cpu, unsigned int nevents, struct nsl_calib *c)
{
	static const uint64_t ticks[NSL_C_MAX] = {
		[NSL_C_NSI] = 90, [NSL_C_NSS] = 45, [NSL_C_NST] = 45,
		[NSL_C_NSE] = 300, [NSL_C_NSO] = GEN_TAU_O,
		[NSL_C_NSA] = GEN_TAU_BETA,
	};

	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->nevents = nevents;
	for (int m = 0; m < NSL_C_MAX; m++) {
		c->cost[m].ticks = ticks[m];
		c->cost[m].min = ticks[m] - 3;
		c->cost[m].cv_ppm = 4000;	/* 0.4 % */
		c->cost[m].samples = 1000;
		for (unsigned int e = 0; e < nevents; e++)
			c->cost[m].count[e] = m == NSL_C_NSO ? 2 + e :
					      m == NSL_C_NSA ? 5 + e : 10 * m + e;
	}
}

void gen_events(unsigned int n, struct ns_counters *sel)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t config;
	} ev[NSL_MAX_EVENTS] = {
		{ "cycles", 0, 0 }, { "instructions", 0, 1 },
		{ "cpu-clock", 1, 0 }, { "page-faults", 1, 2 },
	};

	memset(sel, 0, sizeof(*sel));
	for (unsigned int i = 0; i < n && i < NSL_MAX_EVENTS; i++) {
		snprintf(sel->name[i], sizeof(sel->name[i]), "%s", ev[i].name);
		snprintf(sel->canon[i], sizeof(sel->canon[i]), "perf::%s",
			 ev[i].name);
		sel->ev.ev[i].type = ev[i].type;
		sel->ev.ev[i].config = ev[i].config;
		sel->n = sel->ev.nevents = i + 1;
	}
}

static void rec(struct nsl_block *b, unsigned int region, uint64_t start,
		uint64_t ticks, unsigned int depth)
{
	struct nsl_record *r = &b->rec[b->nrec++];

	r->region = region;
	r->depth = depth;
	r->nmerged = 1;
	r->cpu = b->hdr.cpu;
	r->start = start;
	r->ticks = ticks;
	for (unsigned int e = 0; e < b->nevents; e++)
		r->count[e] = ticks / 10 + e;
}

const struct gen_flow gen_flows[GEN_NFLOWS] = {
	{ AF_INET, IPPROTO_TCP, "192.0.2.1", "192.0.2.2", 43210, 5201,
	  NSL_DIR_TX, 1, 1500, 0x10 },
	{ AF_INET, IPPROTO_TCP, "192.0.2.2", "192.0.2.1", 5201, 43210,
	  NSL_DIR_RX, 1, 52, 0x10 },
	{ AF_INET, IPPROTO_UDP, "192.0.2.1", "192.0.2.53", 40000, 53,
	  NSL_DIR_TX, 2, 60, 0x11 },
	{ AF_INET, IPPROTO_UDP, "192.0.2.53", "192.0.2.1", 53, 40000,
	  NSL_DIR_RX, 2, 200, 0x11 },
	{ AF_INET6, IPPROTO_TCP, "2001:db8::1", "2001:db8::2", 43211, 80,
	  NSL_DIR_TX, 2, 1500, 0x12 },
	{ AF_INET6, IPPROTO_TCP, "2001:db8::2", "2001:db8::1", 80, 43211,
	  NSL_DIR_RX, 2, 1440, 0x12 },
	{ AF_INET6, IPPROTO_UDP, "2001:db8::1", "ff02::fb", 5353, 5353,
	  NSL_DIR_TX, 1, 120, 0x13 },
	{ AF_INET, IPPROTO_TCP, "10.1.2.3", "192.0.2.1", 80, 43212,
	  NSL_DIR_RX, 3, 1000, 0x14 },
	{ AF_INET, IPPROTO_ICMP, "192.0.2.1", "198.51.100.7", 0, 0,
	  NSL_DIR_TX, 2, 84, 0 },
	{ 0, 0, NULL, NULL, 0, 0, NSL_DIR_TX, 0, 42, 0 },
	{ AF_INET6, IPPROTO_ICMPV6, "2001:db8::1", "2001:db8::2", 0, 0,
	  NSL_DIR_TX, 2, 104, 0 },
	{ AF_INET, IPPROTO_TCP, "10.9.8.7", "10.1.2.3", 5201, 43213,
	  NSL_DIR_TX, 3, 1448, 0x15 },
};

/* Block @b takes flow @f (the addresses unless @no_addr). */
static void set_flow(struct nsl_block *b, const struct gen_flow *f,
		     bool no_addr)
{
	b->family = f->family;
	b->proto = f->proto;
	b->sport = f->sport;
	b->dport = f->dport;
	b->dir = f->dir;
	b->ifindex = f->ifindex;
	b->len = f->len;
	b->conn = f->conn;
	b->nhlen = f->family == AF_INET6 ? 40 : f->family ? 20 : 0;
	b->thlen = f->proto == IPPROTO_TCP ? 32 : f->proto == IPPROTO_UDP ? 8 : 0;
	if (no_addr || !f->family)
		return;
	inet_pton(f->family, f->saddr, b->saddr);
	inet_pton(f->family, f->daddr, b->daddr);
}

static void dev(struct nsl_block *b, uint32_t ifindex, uint32_t netns,
		uint8_t dir)
{
	struct nsl_dev *d = &b->dev[b->ndev++];

	d->ifindex = ifindex;
	d->netns = netns;
	d->dir = dir;
	d->first = b->nrec;	/* the records that follow are its */
	b->ifindex = ifindex;
}

/* gen.h's device paths, after the records of the socket and IP. */
static void gen_path(struct nsl_block *b, unsigned int path, uint32_t ours)
{
	switch (path) {
	case 0:
		dev(b, 9, ours, NSL_DIR_TX);
		rec(b, NSL_R_LINK, 1300, 1500, 1);
		dev(b, 1, ours, NSL_DIR_TX);
		rec(b, NSL_R_LINK, 2900, 900, 1);
		rec(b, NSL_R_NIC, 3900, 30000, 0);
		break;
	case 1:
		dev(b, 8, ours, NSL_DIR_TX);
		rec(b, NSL_R_LINK, 1300, 1500, 1);
		dev(b, 2, GEN_NETNS_CT, NSL_DIR_RX);
		rec(b, NSL_R_RX_LINK, 2900, 600, 1);
		break;
	default:
		dev(b, 6, ours, NSL_DIR_TX);
		rec(b, NSL_R_LINK, 1300, 1500, 1);
		rec(b, NSL_R_NIC, 2900, 30000, 0);
		break;
	}
}

size_t gen_block(const struct gen_opts *g, unsigned int i, void *buf)
{
	struct nsl_block b;

	if (i >= g->n)
		return 0;
	memset(&b, 0, sizeof(b));
	b.hdr.kind = NSL_ITEM_BLOCK;
	b.hdr.cpu = i % 2;
	b.seq = i / 2;
	b.tsc0 = GEN_T0 + (uint64_t)i * 3000;
	b.conn = g->pingpong ? (i % 2 ? 'B' : 'A') : 42;
	b.len = 1448;
	b.ifindex = 1;
	b.gso_segs = 1;
	b.proto = 6;
	b.nhlen = 20;
	b.thlen = 32;
	b.dir = NSL_DIR_TX;
	b.nevents = g->nevents;
	b.mode = g->nevents ? NSL_MODE_COUNT : NSL_MODE_DURATION;
	b.tcp_seq = 1000 + i * 1448;
	if (g->flows)
		set_flow(&b, &gen_flows[i % GEN_NFLOWS], g->no_addr);
	rec(&b, NSL_R_WRITE, 0, 3000ull * (i % 10 + 1), 0);
	rec(&b, NSL_R_TCP, 10, 300, 1);
	rec(&b, NSL_R_TCP, 400, 120, 1);
	rec(&b, NSL_R_IP, 600, 600, 1);
	if (g->dev_netns) {
		gen_path(&b, i % 3, g->dev_netns);
	} else {
		rec(&b, NSL_R_LINK, 1300, 1500, 1);
		rec(&b, NSL_R_NIC, 2900, 30000, 0);
	}
	if (g->invalid_every && i % g->invalid_every == g->invalid_every - 1)
		b.rec[3].flags |= NSL_RF_INVALID;
	if (g->shared_every && i % g->shared_every == g->shared_every - 1)
		b.rec[1].flags |= NSL_RF_SHARED;
	if (g->open_every && i % g->open_every == g->open_every - 1) {
		b.rec[b.nrec - 1].flags = NSL_RF_OPEN;
		b.rec[b.nrec - 1].ticks = 0;
	}
	b.hdr.size = NSL_BLOCK_SIZE(b.nrec);
	memcpy(buf, &b, b.hdr.size);
	return b.hdr.size;
}

size_t gen_loss(unsigned int i, void *buf)
{
	struct nsl_loss l = {
		.hdr = { .kind = NSL_ITEM_LOSS, .size = sizeof(l), .cpu = i % 2 },
		.lost = GEN_LOST,
		.first_seq = 100000 + i,
		.tsc = GEN_T0 + (uint64_t)i * 3000,
	};

	memcpy(buf, &l, sizeof(l));
	return sizeof(l);
}

size_t gen_event(uint32_t cpu, uint64_t seq, uint64_t tsc, uint32_t type,
		 uint32_t bytes, uint32_t flags, void *buf)
{
	struct nsl_event_rec e;

	memset(&e, 0, sizeof(e));
	e.hdr.kind = NSL_ITEM_EVENT;
	e.hdr.size = sizeof(e);
	e.hdr.cpu = cpu;
	e.tsc = tsc;
	e.conn = GEN_CONN_A;
	e.type = type;
	e.bytes = bytes;
	e.flags = flags;
	e.seq = seq;
	if (flags & NSL_EVF_TCP)
		e.tcp = (struct nsl_tcp_state){
			.snd_wnd = 65535, .srtt_us = 120, .rto_us = 201000,
			.packets_out = 3, .snd_ssthresh = 2147483647,
			.snd_cwnd = 10, .rcv_wnd = 65483,
			.write_seq = 1000 + bytes, .copied_seq = 5000,
			.mss = 1448, .state = 1,	/* TCP_ESTABLISHED */
		};
	if (flags & NSL_EVF_IP)
		e.ip = (struct nsl_ip_fields){
			.version = 4, .ttl = 64, .protocol = 6, .id = 1234,
			.frag_off = 0x4000,
		};
	if (flags & NSL_EVF_ADDR) {
		e.tcp.sport = 43210;
		e.tcp.dport = 5201;
		e.ip.saddr = htonl(0xc0000201);		/* 192.0.2.1 */
		e.ip.daddr = htonl(0xc0000202);
	}
	memcpy(buf, &e, sizeof(e));
	return sizeof(e);
}

/* ---- MAGNeT's FTP example ---- */

struct mitem {
	uint64_t tsc;
	unsigned int order;	/* ties keep creation order */
	size_t size;
	unsigned char b[sizeof(struct nsl_block)];
};

struct mlist {
	struct mitem *v;
	size_t n, cap;
	bool fail;
};

static struct mitem *madd(struct mlist *l, uint64_t tsc)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 256;
		struct mitem *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->fail = true;
			return NULL;
		}
		l->v = v;
		l->cap = cap;
	}
	memset(&l->v[l->n], 0, sizeof(l->v[0]));
	l->v[l->n].tsc = tsc;
	l->v[l->n].order = l->n;
	return &l->v[l->n++];
}

static void mevent(struct mlist *l, uint64_t conn, uint32_t cpu,
		   uint64_t tsc, uint32_t type, uint32_t bytes, uint32_t flags)
{
	struct mitem *it = madd(l, tsc);
	struct nsl_event_rec e;

	if (!it)
		return;
	it->size = gen_event(cpu, 0, tsc, type, bytes, flags, it->b);
	memcpy(&e, it->b, sizeof(e));
	e.conn = conn;
	/* a socket event has the socket's addresses, local first (.1 > .2) */
	if (conn == GEN_CONN_B && (flags & NSL_EVF_ADDR)) {
		e.tcp.sport = 43211;
		if (type != NSL_EV_SOCK_RECV) {
			e.ip.saddr = htonl(0xc0000202);	/* a packet's: .2 > .1 */
			e.ip.daddr = htonl(0xc0000201);
		}
	}
	if (type != NSL_EV_SOCK_SEND && type != NSL_EV_SOCK_RECV)
		e.tcp.tcp_flags = 0x18;		/* PSH|ACK */
	memcpy(it->b, &e, sizeof(e));
}

static void mblock(struct mlist *l, const struct gen_magnet *m, uint64_t conn,
		   uint32_t cpu, uint64_t tsc0, uint8_t dir, uint32_t len,
		   uint16_t segs)
{
	static const struct { uint8_t region; uint64_t ticks; } tx[] = {
		{ NSL_R_TCP, 600 }, { NSL_R_IP, 600 }, { NSL_R_NIC, 3000 },
	}, rx[] = {
		{ NSL_R_RX_NIC, 300 }, { NSL_R_RX_IP, 600 }, { NSL_R_RX_TCP, 900 },
	};
	struct mitem *it = madd(l, tsc0);
	struct nsl_block b;
	uint64_t start = 0;

	if (!it)
		return;
	memset(&b, 0, sizeof(b));
	b.hdr.kind = NSL_ITEM_BLOCK;
	b.hdr.cpu = cpu;
	b.tsc0 = tsc0;
	b.conn = conn;
	b.len = len;
	b.ifindex = 2;
	b.gso_segs = segs;
	b.proto = 6;
	b.nhlen = 20;
	b.thlen = 32;
	b.dir = dir;
	b.family = AF_INET;
	b.sport = dir == NSL_DIR_TX ? 43210 : 5201;
	b.dport = dir == NSL_DIR_TX ? 5201 : 43211;
	if (m->addr) {
		uint32_t local = htonl(0xc0000201), remote = htonl(0xc0000202);

		memcpy(b.saddr, dir == NSL_DIR_TX ? &local : &remote, 4);
		memcpy(b.daddr, dir == NSL_DIR_TX ? &remote : &local, 4);
	}
	b.flags = segs > 1 ? NSL_BF_GSO : 0;
	if (dir == NSL_DIR_RX)
		b.flags |= NSL_BF_RX;
	for (int i = 0; i < 3; i++) {
		struct nsl_record *r = &b.rec[b.nrec++];

		r->region = dir == NSL_DIR_RX ? rx[i].region : tx[i].region;
		r->ticks = dir == NSL_DIR_RX ? rx[i].ticks : tx[i].ticks;
		r->nmerged = 1;
		r->cpu = cpu;
		r->start = start;
		start += r->ticks + 30;
	}
	b.hdr.size = NSL_BLOCK_SIZE(b.nrec);
	memcpy(it->b, &b, b.hdr.size);
	it->size = b.hdr.size;
}

static int mcmp(const void *a, const void *b)
{
	const struct mitem *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void magnet_items(const struct gen_magnet *m, struct mlist *l)
{
	uint32_t sock = NSL_EVF_TCP | (m->addr ? NSL_EVF_ADDR : 0);
	uint32_t tso = m->tso ? NSL_EVF_TSO : 0;

	for (unsigned int k = 0; k < m->writes; k++) {
		uint64_t t = GEN_EV_T0 + k * 20 * GEN_MS;

		mevent(l, GEN_CONN_A, 0, t, NSL_EV_SOCK_SEND, 10240, sock);
		for (unsigned int j = 0; j < (m->tso ? 1u : 8u); j++) {
			uint32_t pay = m->tso ? 10240 : j < 7 ? 1448 : 104;
			uint64_t ts = t + 5 * GEN_US + j * 12 * GEN_US;

			mevent(l, GEN_CONN_A, 0, ts, NSL_EV_TCP_SEND, pay,
			       tso | NSL_EVF_TCP | NSL_EVF_IP);
			mevent(l, GEN_CONN_A, 0, ts, NSL_EV_IP_SEND, pay + 32,
			       tso | NSL_EVF_IP);
			mevent(l, GEN_CONN_A, 0, ts + GEN_US, NSL_EV_DEV_SEND,
			       pay + 52, tso | NSL_EVF_IP);
			mblock(l, m, GEN_CONN_A, 0, ts, NSL_DIR_TX, pay + 52,
			       m->tso ? 8 : 1);
		}
	}
	for (unsigned int k = 0; k < m->reads; k++) {
		uint64_t t = GEN_EV_T0 + GEN_MS + k * 5 * GEN_MS;

		for (unsigned int j = 0; j < 3; j++) {
			uint64_t ts = t + j * 12 * GEN_US;

			mblock(l, m, GEN_CONN_B, 1, ts, NSL_DIR_RX, 1500, 1);
			mevent(l, GEN_CONN_B, 1, ts, NSL_EV_DEV_RECV, 1500,
			       NSL_EVF_IP);
			mevent(l, GEN_CONN_B, 1, ts + GEN_US, NSL_EV_IP_RECV,
			       1500, NSL_EVF_IP);
			mevent(l, GEN_CONN_B, 1, ts + 2 * GEN_US,
			       NSL_EV_TCP_RECV, 1448, NSL_EVF_TCP | NSL_EVF_IP);
		}
		mevent(l, GEN_CONN_B, 1, t + 40 * GEN_US, NSL_EV_SOCK_RECV,
		       4344, sock);
	}
	qsort(l->v, l->n, sizeof(l->v[0]), mcmp);
}

/* The items in stream order, seq filled in, through @fn. */
static int magnet_walk(const void *opts,
		       int (*fn)(void *ctx, const void *item, size_t size),
		       void *ctx)
{
	const struct gen_magnet *m = opts;
	struct mlist l = { 0 };
	uint64_t seq[2] = { 0, 0 };
	unsigned char item[sizeof(struct nsl_block)];
	int ret = 0;

	magnet_items(m, &l);
	if (l.fail)
		ret = -1;
	if (!ret && m->sysinfo)
		ret = fn(ctx, item, gen_sysinfo(item));
	for (size_t i = 0; !ret && i < l.n; i++) {
		struct nsl_item_hdr h;

		memcpy(&h, l.v[i].b, sizeof(h));
		/* blocks and events share one seq per CPU, at offset 8 */
		memcpy(l.v[i].b + 8, &seq[h.cpu], 8);
		seq[h.cpu]++;
		ret = fn(ctx, l.v[i].b, l.v[i].size);
		if (!ret && m->loss_at && i + 1 == m->loss_at) {
			struct nsl_loss loss = {
				.hdr = { NSL_ITEM_LOSS, sizeof(loss), h.cpu },
				.lost = GEN_LOST, .first_seq = seq[h.cpu],
				.tsc = l.v[i].tsc,
			};

			seq[h.cpu] += GEN_LOST;
			ret = fn(ctx, &loss, sizeof(loss));
		}
	}
	free(l.v);
	return ret;
}

size_t gen_sysinfo(void *buf)
{
	struct nsl_sysinfo s = {
		.hdr = { .kind = NSL_ITEM_SYSINFO, .size = sizeof(s) },
		.abi_version = NSL_ABI_VERSION,
		.byte_order = NSL_BYTE_ORDER_MARK,
		.tsc_khz = GEN_TSC_KHZ,
		.ncpus = 2,
		.ref_tsc = GEN_T0,
		.ref_realtime_ns = GEN_WALL0,
	};

	memcpy(buf, &s, sizeof(s));
	return sizeof(s);
}

/* Item by item, loss items in their places: calls @fn for each. */
static int walk(const void *opts,
		int (*fn)(void *ctx, const void *item, size_t size), void *ctx)
{
	const struct gen_opts *g = opts;
	unsigned char item[sizeof(struct nsl_block)];

	for (unsigned int i = 0; i < g->n; i++) {
		if (g->loss_every && i % g->loss_every == g->loss_every - 1 &&
		    fn(ctx, item, gen_loss(i, item)))
			return -1;
		if (fn(ctx, item, gen_block(g, i, item)))
			return -1;
	}
	return 0;
}

struct membuf {
	unsigned char *p;
	size_t len, cap;
};

static int to_mem(void *ctx, const void *item, size_t size)
{
	struct membuf *m = ctx;

	if (m->len + size > m->cap) {
		size_t cap = (m->cap + size) * 2;
		unsigned char *p = realloc(m->p, cap);

		if (!p)
			return -1;
		m->p = p;
		m->cap = cap;
	}
	memcpy(m->p + m->len, item, size);
	m->len += size;
	return 0;
}

static unsigned char *collect(gen_walker w, const void *opts, size_t *len)
{
	struct membuf m = { 0 };

	if (w(opts, to_mem, &m)) {
		free(m.p);
		return NULL;
	}
	*len = m.len;
	return m.p ? m.p : malloc(1);
}

unsigned char *gen_stream(const struct gen_opts *g, size_t *len)
{
	return collect(walk, g, len);
}

static int to_file(void *ctx, const void *item, size_t size)
{
	struct ns_item it;

	if (ns_decode_item(item, size, &it))
		return -1;
	return nsf_write_item(ctx, &it);
}

size_t gen_compact(unsigned char *p, size_t len)
{
	size_t in = 0, out = 0;
	struct ns_item it;

	while (in < len && !ns_decode_item(p + in, len - in, &it)) {
		size_t size = it.hdr.size;

		if (it.type == NS_ITEM_BLOCK) {
			uint64_t c[NSL_CBLOCK_MAX / 8];
			size_t n = nsl_cblock_encode(&it.block, c);

			memcpy(p + out, c, n);
			out += n;
		} else {
			memmove(p + out, p + in, size);
			out += size;
		}
		in += size;
	}
	return out;
}

unsigned char *gen_magnet_stream(const struct gen_magnet *m, size_t *len)
{
	return collect(magnet_walk, m, len);
}

/* EVENTS and CALIB records as @g asks; 0 or -1. */
static int trace_head(struct nsf_writer *w, const struct gen_opts *g,
		      const struct nsl_info *info)
{
	if (g->named) {
		static const char *const nasty[NSL_MAX_EVENTS] = {
			GEN_NASTY_EVENT0, GEN_NASTY_EVENT1, GEN_NASTY_EVENT2,
			GEN_NASTY_EVENT3,
		};
		struct ns_counters sel;

		gen_events(g->nevents, &sel);
		for (unsigned int e = 0; g->nasty && e < sel.n; e++)
			snprintf(sel.name[e], sizeof(sel.name[e]), "%s", nasty[e]);
		nsf_write_events(w, &sel);
	}
	if (g->calib) {
		struct ns_calib_set cs;
		struct nsl_calib c;

		if (ns_calib_alloc(&cs, info->ncpus))
			return -1;
		cs.tsc_khz = info->tsc_khz;
		snprintf(cs.model, sizeof(cs.model), "%s", g->nasty ?
			 GEN_NASTY_MODEL : "Synthetic CPU @ 3.00GHz");
		for (uint32_t cpu = 0; cpu < info->ncpus; cpu++) {
			gen_calib(cpu, g->nevents, &c);
			ns_calib_put(&cs, &c);
		}
		nsf_write_calib(w, &cs);
		ns_calib_free(&cs);
	}
	return 0;
}

int gen_trace_file(gen_walker walk_items, const void *opts,
		   const struct gen_opts *head, int fd)
{
	struct nsf_writer w;
	struct nsl_info info;
	int ret;

	gen_info(&info);
	if (nsf_writer_open(&w, fd, "gen", &info)) {
		nsf_writer_close(&w);
		return -1;
	}
	ret = head ? trace_head(&w, head, &info) : 0;
	if (!ret)
		ret = walk_items(opts, to_file, &w);
	if (nsf_writer_close(&w))
		ret = -1;
	return ret;
}

int gen_magnet_file(const struct gen_magnet *m, int fd)
{
	return gen_trace_file(magnet_walk, m, NULL, fd);
}

int gen_file(const struct gen_opts *g, int fd)
{
	return gen_trace_file(walk, g, g, fd);
}

bool gen_same_item(const void *want, size_t left, const struct ns_item *got,
		   size_t *taken)
{
	struct ns_item w;
	const void *a = &w.loss, *b = &got->loss;

	*taken = left;
	if (ns_decode_item(want, left, &w) || w.type != got->type)
		return false;
	*taken = w.hdr.size;
	if (w.type == NS_ITEM_BLOCK)
		return w.block.hdr.cpu == got->block.hdr.cpu &&
		       !memcmp(&w.block.seq, &got->block.seq,
			       sizeof(w.block) -
			       offsetof(struct nsl_block, seq));
	if (w.type == NS_ITEM_EVENT)
		a = &w.event, b = &got->event;
	else if (w.type == NS_ITEM_SYSINFO)
		a = &w.sysinfo, b = &got->sysinfo;
	return w.hdr.size == got->hdr.size && !memcmp(a, b, w.hdr.size);
}
