// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "stage/magnet.h"

/* ---- connections ---- */

void ns_magnet_init(struct ns_magnet *m)
{
	memset(m, 0, sizeof(*m));
}

void ns_magnet_free(struct ns_magnet *m)
{
	for (size_t i = 0; i < m->n; i++)
		for (int t = 0; t < NSL_EV_MAX; t++)
			free(m->conn[i].layer[t].tsc);
	free(m->conn);
	free(m->slot);
	memset(m, 0, sizeof(*m));
}

static size_t hash(uint64_t conn, size_t nslots)
{
	conn ^= conn >> 33;
	conn *= 0xff51afd7ed558ccdull;
	conn ^= conn >> 33;
	return conn & (nslots - 1);
}

/* The slot of @conn, or the free one where it would go. */
static void probe(const struct ns_magnet *m, uint64_t conn, size_t *at)
{
	size_t i = hash(conn, m->nslots);

	while (m->slot[i] && m->conn[m->slot[i] - 1].conn != conn)
		i = (i + 1) & (m->nslots - 1);
	*at = i;
}

const struct ns_conn *ns_magnet_find(const struct ns_magnet *m,
				     uint64_t conn)
{
	size_t i;

	if (!m->nslots)
		return NULL;
	probe(m, conn, &i);
	return m->slot[i] ? &m->conn[m->slot[i] - 1] : NULL;
}

static int grow_slots(struct ns_magnet *m)
{
	size_t nslots = m->nslots ? 2 * m->nslots : 64, i;
	uint32_t *old = m->slot;
	size_t oldn = m->nslots;

	m->slot = calloc(nslots, sizeof(*m->slot));
	if (!m->slot) {
		m->slot = old;
		return -1;
	}
	m->nslots = nslots;
	for (size_t k = 0; k < oldn; k++) {
		if (!old[k])
			continue;
		probe(m, m->conn[old[k] - 1].conn, &i);
		m->slot[i] = old[k];
	}
	free(old);
	return 0;
}

static struct ns_conn *get_conn(struct ns_magnet *m, uint64_t conn)
{
	struct ns_conn *c;
	size_t i;

	if ((m->n + 1) * 2 > m->nslots && grow_slots(m))
		goto oom;
	probe(m, conn, &i);
	if (m->slot[i])
		return &m->conn[m->slot[i] - 1];
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct ns_conn *p = realloc(m->conn, cap * sizeof(*p));

		if (!p)
			goto oom;
		m->conn = p;
		m->cap = cap;
	}
	c = &m->conn[m->n++];
	memset(c, 0, sizeof(*c));
	c->conn = conn;
	m->slot[i] = m->n;
	return c;
oom:
	m->oom = true;
	return NULL;
}

/* @len bytes at @a as an address of @family; family 0 if all zero. */
static void conn_addr(struct ns_conn_addr *out, uint16_t family,
		      const void *a, size_t len)
{
	static const uint8_t zero[16];

	memset(out, 0, sizeof(*out));
	if (!memcmp(a, zero, len))
		return;
	out->family = family;
	memcpy(out->a, a, len);
}

/*
 * The record's local and remote addresses (family 0: not known), IPv6
 * ones with NSL_EVF_ADDR6.  A socket event has no packet: the kernel
 * gives the socket's addresses, local first; the others carry their
 * packet's, source first.
 */
static void event_addrs(const struct nsl_event_rec *ev,
			struct ns_conn_addr *local, struct ns_conn_addr *remote)
{
	bool local_first = ns_event_is_send(ev->type) ||
			   ev->type == NSL_EV_SOCK_RECV;
	struct ns_conn_addr s, d;

	if (ev->flags & NSL_EVF_ADDR6) {
		conn_addr(&s, AF_INET6, ev->saddr6, 16);
		conn_addr(&d, AF_INET6, ev->daddr6, 16);
	} else {
		conn_addr(&s, AF_INET, &ev->ip.saddr, 4);
		conn_addr(&d, AF_INET, &ev->ip.daddr, 4);
	}
	*local = local_first ? s : d;
	*remote = local_first ? d : s;
}

bool ns_magnet_learn(struct ns_magnet *m, const struct nsl_event_rec *ev)
{
	struct ns_conn_addr local, remote;
	struct ns_conn *c;
	bool was;

	if (!(ev->flags & NSL_EVF_ADDR))
		return false;
	m->with_addr++;
	c = get_conn(m, ev->conn);
	if (!c)
		return false;
	was = c->have_ports;
	c->have_ports = true;
	c->lport = ev->tcp.sport;
	c->rport = ev->tcp.dport;
	event_addrs(ev, &local, &remote);
	if (local.family)
		c->laddr = local;
	if (remote.family)
		c->raddr = remote;
	return !was;
}

bool ns_magnet_learn_block(struct ns_magnet *m, const struct nsl_block *b)
{
	struct ns_tuple t;
	struct ns_conn *c;
	bool news;

	if (!b->conn || !ns_tuple_from_block(b, &t))
		return false;
	c = get_conn(m, b->conn);
	if (!c)
		return false;
	news = !c->have_flow ||
	       (!ns_tuple_has_addr(&c->flow) && ns_tuple_has_addr(&t));
	if (!news)
		return false;
	if (b->dir == NSL_DIR_RX)
		ns_tuple_reverse(&t);
	t.len = t.tcp_seq = 0;
	c->flow = t;
	c->have_flow = true;
	return true;
}

void ns_magnet_account(struct ns_magnet *m, const struct nsl_event_rec *ev)
{
	struct ns_conn *c = get_conn(m, ev->conn);
	struct ns_layer_acc *a;

	if (!c || ev->type == 0 || ev->type >= NSL_EV_MAX)
		return;
	c->accounted = true;
	m->events++;
	a = &c->layer[ev->type];
	if (!a->n || ev->bytes < a->bytes_min)
		a->bytes_min = ev->bytes;
	if (!a->n || ev->bytes > a->bytes_max)
		a->bytes_max = ev->bytes;
	a->n++;
	a->bytes_sum += ev->bytes;
	a->tso += !!(ev->flags & NSL_EVF_TSO);
	if (a->ntsc == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		uint64_t *p = realloc(a->tsc, cap * sizeof(*p));

		if (!p) {
			a->oom = m->oom = true;
			return;
		}
		a->tsc = p;
		a->cap = cap;
	}
	a->tsc[a->ntsc++] = ev->tsc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool ns_magnet_layer(struct ns_layer_acc *a, uint32_t tsc_khz,
		     struct ns_layer_summary *s)
{
	struct ns_stats gaps;
	struct ns_summary g;

	memset(s, 0, sizeof(*s));
	if (!a->n)
		return false;
	s->n = a->n;
	s->tso = a->tso;
	s->bytes_mean = (double)a->bytes_sum / a->n;
	s->bytes_min = a->bytes_min;
	s->bytes_max = a->bytes_max;
	/* per-CPU rings deliver out of time order: sort before differencing */
	qsort(a->tsc, a->ntsc, sizeof(a->tsc[0]), cmp_u64);
	ns_stats_init(&gaps, 0);
	for (size_t i = 1; i < a->ntsc; i++)
		ns_stats_add(&gaps, a->tsc[i] - a->tsc[i - 1]);
	if (tsc_khz && ns_stats_summary(&gaps, 1000.0 / tsc_khz, &g)) {
		s->gaps = g.n;
		s->gap_mean_us = g.mean;
		s->gap_cv = g.cv;
	}
	ns_stats_free(&gaps);
	return true;
}

/* The journey's order: TCP's and UDP's events hold the same place. */
const uint8_t ns_magnet_order[NSL_EV_MAX - 1] = {
	NSL_EV_SOCK_SEND, NSL_EV_TCP_SEND, NSL_EV_UDP_SEND, NSL_EV_IP_SEND,
	NSL_EV_DEV_SEND, NSL_EV_DEV_RECV, NSL_EV_IP_RECV, NSL_EV_TCP_RECV,
	NSL_EV_UDP_RECV, NSL_EV_SOCK_RECV,
};

/* ---- text ---- */

void ns_ipv4(uint32_t addr_be, char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)&addr_be;

	snprintf(buf, len, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
}

const char *ns_tcp_state_name(unsigned int state, char *buf, size_t len)
{
	static const char *const names[] = {
		[1] = "ESTABLISHED", [2] = "SYN_SENT", [3] = "SYN_RECV",
		[4] = "FIN_WAIT1", [5] = "FIN_WAIT2", [6] = "TIME_WAIT",
		[7] = "CLOSE", [8] = "CLOSE_WAIT", [9] = "LAST_ACK",
		[10] = "LISTEN", [11] = "CLOSING", [12] = "NEW_SYN_RECV",
	};

	if (state < sizeof(names) / sizeof(names[0]) && names[state])
		return names[state];
	snprintf(buf, len, "%u", state);
	return buf;
}

void ns_tcp_flag_letters(unsigned int flags, char *buf, size_t len)
{
	static const char letters[] = "FSRP.UEW";	/* header bit order */
	size_t n = 0;

	for (int i = 0; i < 8 && n + 1 < len; i++)
		if (flags & (1u << i))
			buf[n++] = letters[i];
	buf[n < len ? n : len - 1] = 0;
}

void ns_event_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"TCP", "IP", "ADDR", "TSO", "ADDR6",
	};
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < 32 && used < len; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (i < 5)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? "," : "", names[i]);
		else
			used += snprintf(buf + used, len - used, "%s0x%x",
					 used ? "," : "", 1u << i);
	}
}

/* "192.0.2.1:80", "[2001:db8::1]:80", "*:80" */
static void endpoint(const struct ns_conn_addr *addr, uint16_t port,
		     char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "*";

	if (addr->family)
		ns_addr_text(addr->family, addr->a, a, sizeof(a));
	snprintf(buf, len, addr->family == AF_INET6 ? "[%s]:%u" : "%s:%u",
		 a, port);
}

void ns_conn_endpoint(const struct ns_conn *c, bool local, char *buf,
		      size_t len)
{
	if (local)
		endpoint(&c->laddr, c->lport, buf, len);
	else
		endpoint(&c->raddr, c->rport, buf, len);
}

void ns_event_endpoints(const struct ns_magnet *m,
			const struct nsl_event_rec *ev, char *buf, size_t len)
{
	const struct ns_conn *c = m ? ns_magnet_find(m, ev->conn) : NULL;
	bool send = ns_event_is_send(ev->type);
	struct ns_conn_addr laddr, raddr;
	char l[INET6_ADDRSTRLEN + 8], r[INET6_ADDRSTRLEN + 8];

	buf[0] = 0;
	if (!(ev->flags & NSL_EVF_ADDR))
		return;
	event_addrs(ev, &laddr, &raddr);
	if (!laddr.family && c)
		laddr = c->laddr;
	if (!raddr.family && c)
		raddr = c->raddr;
	endpoint(&laddr, ev->tcp.sport, l, sizeof(l));
	endpoint(&raddr, ev->tcp.dport, r, sizeof(r));
	snprintf(buf, len, "%s > %s", send ? l : r, send ? r : l);
}
