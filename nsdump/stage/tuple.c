// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "stage/magnet.h"
#include "stage/tuple.h"

bool ns_tuple_from_block(const struct nsl_block *b, struct ns_tuple *t)
{
	memset(t, 0, sizeof(*t));
	if (b->family != AF_INET && b->family != AF_INET6)
		return false;
	t->family = b->family;
	t->proto = b->proto;
	t->sport = b->sport;
	t->dport = b->dport;
	memcpy(t->saddr, b->saddr, sizeof(t->saddr));
	memcpy(t->daddr, b->daddr, sizeof(t->daddr));
	t->len = b->len;
	t->tcp_seq = b->tcp_seq;
	return true;
}

void ns_tuple_reverse(struct ns_tuple *t)
{
	uint8_t a[16];
	uint16_t p = t->sport;

	t->sport = t->dport;
	t->dport = p;
	memcpy(a, t->saddr, sizeof(a));
	memcpy(t->saddr, t->daddr, sizeof(a));
	memcpy(t->daddr, a, sizeof(a));
}

bool ns_tuple_from_event(const struct nsl_event_rec *ev,
			 const struct ns_conn *c, struct ns_tuple *t)
{
	if (!c || !c->have_flow)
		return false;
	*t = c->flow;
	/*
	 * A capture from before blocks kept addresses: the ones its event
	 * records told (-M --addr).
	 */
	if (!ns_tuple_has_addr(t)) {
		if (c->laddr.family == t->family)
			memcpy(t->saddr, c->laddr.a, 16);
		if (c->raddr.family == t->family)
			memcpy(t->daddr, c->raddr.a, 16);
	}
	t->len = ev->bytes;
	t->tcp_seq = 0;
	if (!ns_event_is_send(ev->type))
		ns_tuple_reverse(t);
	return true;
}

bool ns_tuple_has_addr(const struct ns_tuple *t)
{
	static const uint8_t zero[16];

	return memcmp(t->saddr, zero, 16) || memcmp(t->daddr, zero, 16);
}

bool ns_tuple_has_ports(const struct ns_tuple *t)
{
	return t->proto == IPPROTO_TCP || t->proto == IPPROTO_UDP;
}

const char *ns_proto_name(unsigned int proto, char *buf, size_t len)
{
	switch (proto) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmp6";
	}
	snprintf(buf, len, "proto %u", proto);
	return buf;
}

void ns_addr_text(uint16_t family, const uint8_t *addr, char *buf,
		  size_t len)
{
	if (!inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, buf, len))
		snprintf(buf, len, "?");
}

/* "192.0.2.1:80", "[2001:db8::1]:80", or the address alone. */
static void endpoint_text(const struct ns_tuple *t, const uint8_t *addr,
			  uint16_t port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	bool v6 = t->family == AF_INET6;

	ns_addr_text(t->family, addr, a, sizeof(a));
	if (!ns_tuple_has_ports(t))
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s%s%s:%u", v6 ? "[" : "", a, v6 ? "]" : "",
			 port);
}

void ns_tuple_text(const struct ns_tuple *t, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN + 8], d[INET6_ADDRSTRLEN + 8];

	endpoint_text(t, t->saddr, t->sport, s, sizeof(s));
	endpoint_text(t, t->daddr, t->dport, d, sizeof(d));
	snprintf(buf, len, "%s > %s", s, d);
}
