// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include "view/nest.h"

bool ns_region_is_receive(unsigned int region)
{
	switch (region) {
	case NSL_R_RX_NIC: case NSL_R_RX_LINK: case NSL_R_BACKLOG:
	case NSL_R_RX_IP: case NSL_R_RX_TCP: case NSL_R_RX_UDP:
	case NSL_R_SK_BACKLOG: case NSL_R_QUEUE: case NSL_R_COPY:
		return true;
	default:
		return false;
	}
}

const unsigned char ns_region_path_order[NS_R_MAX - 1] = {
	NSL_R_WRITE, NSL_R_SNDQ, NSL_R_TCP, NSL_R_UDP, NSL_R_IP, NSL_R_LINK,
	NSL_R_QDISC, NSL_R_NIC, NS_R_WIRE, NSL_R_RX_NIC, NSL_R_RX_LINK, NSL_R_BACKLOG,
	NSL_R_RX_IP, NSL_R_RX_TCP, NSL_R_RX_UDP, NSL_R_SK_BACKLOG, NSL_R_QUEUE,
	NSL_R_COPY,
};

static const struct {
	const char *layer, *colour;
} style[NS_R_MAX] = {
	[NSL_R_WRITE]	= { "socket", "#2f6db5" },
	[NSL_R_QUEUE]	= { "socket", "#b3cdee" },
	[NSL_R_COPY]	= { "socket", "#6f9fd8" },
	[NSL_R_TCP]	= { "tcp/udp", "#2e8b3e" },
	[NSL_R_UDP]	= { "tcp/udp", "#1b7f76" },
	[NSL_R_RX_TCP]	= { "tcp/udp", "#8fd19a" },
	[NSL_R_RX_UDP]	= { "tcp/udp", "#86d4cb" },
	[NSL_R_IP]	= { "ip", "#d9822b" },
	[NSL_R_RX_IP]	= { "ip", "#f4c181" },
	[NSL_R_LINK]	= { "link", "#8256b3" },
	[NSL_R_RX_LINK]	= { "link", "#c6abe4" },
	[NSL_R_NIC]	= { "nic", "#c23b32" },
	[NSL_R_RX_NIC]	= { "nic", "#ef9f98" },
	[NSL_R_SNDQ]	= { "wait", "#6e655c" },
	[NSL_R_QDISC]	= { "wait", "#978b7e" },
	[NSL_R_BACKLOG]	= { "wait", "#b9ada0" },
	[NSL_R_SK_BACKLOG] = { "wait", "#d6cdc2" },
	[NS_R_WIRE]	= { "wire", "#222222" },
};

const char *ns_region_layer(unsigned int region)
{
	return region < NS_R_MAX && style[region].layer ?
	       style[region].layer : "";
}

const char *ns_region_colour(unsigned int region)
{
	return region < NS_R_MAX && style[region].colour ?
	       style[region].colour : "#999999";
}

/* The last record before @j one level up, or -1. */
static int parent_of(const struct nsl_block *b, unsigned int j)
{
	if (!b->rec[j].depth)
		return -1;
	for (int i = (int)j - 1; i >= 0; i--)
		if (b->rec[i].depth + 1 == b->rec[j].depth)
			return i;
	return -1;
}

/* Where record @k must have ended: where a later one at its depth or
 * above started, if that is before its own end. */
static uint64_t order_end(const struct nsl_block *b, unsigned int k,
			  uint64_t end)
{
	for (unsigned int j = k + 1; j < b->nrec; j++) {
		if (b->rec[j].depth > b->rec[k].depth)
			continue;
		return b->rec[j].start < end ? b->rec[j].start : end;
	}
	return end;
}

static void clip(struct ns_span *s, uint64_t lo, uint64_t hi)
{
	uint64_t start = s->start < lo ? lo : s->start > hi ? hi : s->start;
	uint64_t end = s->end > hi ? hi : s->end < start ? start : s->end;

	s->cut |= start != s->start || end != s->end;
	s->start = start;
	s->end = end;
}

/* An OPEN parent has no span: its own parent bounds the child. */
static int drawn_parent(const struct ns_nest *n, int p)
{
	while (p >= 0 && n->span[p].open)
		p = n->span[p].parent;
	return p;
}

static void spans(const struct nsl_block *b, struct ns_nest *n)
{
	for (unsigned int k = 0; k < b->nrec; k++) {
		const struct nsl_record *r = &b->rec[k];
		struct ns_span *s = &n->span[k];
		/* a corrupt file's ticks may not fit */
		bool wraps = r->ticks > UINT64_MAX - r->start;
		uint64_t end = wraps ? UINT64_MAX : r->start + r->ticks;

		s->start = r->start;
		/* parents come first: theirs are final by now */
		s->parent = drawn_parent(n, parent_of(b, k));
		s->level = s->parent < 0 ? 0 : n->span[s->parent].level + 1;
		s->open = r->flags & NSL_RF_OPEN;
		s->end = s->open ? r->start : order_end(b, k, end);
		s->cut = !s->open && (wraps || s->end != end);
	}
	for (unsigned int k = 0; k < b->nrec; k++) {
		int p = n->span[k].parent;

		if (p >= 0 && !n->span[k].open)
			clip(&n->span[k], n->span[p].start, n->span[p].end);
		if (!n->span[k].open && n->span[k].end > n->end)
			n->end = n->span[k].end;
	}
}

static void parts(const struct nsl_block *b, struct ns_nest *n)
{
	for (unsigned int k = 0; k < b->nrec; k++) {
		bool rx = ns_region_is_receive(b->rec[k].region);
		struct ns_part *cur = n->nparts ? &n->part[n->nparts - 1] : NULL;

		/* a part starts at a depth-0 record of the other side */
		if (!cur || (!b->rec[k].depth && cur->receive != rx)) {
			cur = &n->part[n->nparts++];
			cur->first = k;
			cur->receive = rx;
		}
		cur->end = k + 1;
		n->span[k].part = n->nparts - 1;
	}
}

void ns_nest_block(const struct nsl_block *b, struct ns_nest *n)
{
	memset(n, 0, sizeof(*n));
	n->nrec = b->nrec;	/* decode.c checked it */
	spans(b, n);
	parts(b, n);
}

static bool has_addresses(const struct nsl_block *b)
{
	static const uint8_t zero[16];

	return memcmp(b->saddr, zero, 16) || memcmp(b->daddr, zero, 16);
}

/* "192.0.2.1.43210", "[2001:db8::1].43210" or "43210" */
static void endpoint(const struct nsl_block *b, const uint8_t *addr,
		     uint16_t port, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!has_addresses(b)) {
		snprintf(buf, len, "%u", port);
		return;
	}
	inet_ntop(b->family, addr, a, sizeof(a));
	snprintf(buf, len, b->family == AF_INET6 ? "[%s].%u" : "%s.%u", a,
		 port);
}

void ns_block_flow_text(const struct nsl_block *b, char *buf, size_t len)
{
	char src[64], dst[64];
	const char *proto = b->proto == IPPROTO_TCP ? "tcp" :
			    b->proto == IPPROTO_UDP ? "udp" :
			    b->proto == IPPROTO_UDPLITE ? "udplite" : NULL;

	if (b->family != AF_INET && b->family != AF_INET6) {
		snprintf(buf, len, "%s", "");
		return;
	}
	if (!proto) {
		snprintf(buf, len, "proto %u", b->proto);
		return;
	}
	endpoint(b, b->saddr, b->sport, src, sizeof(src));
	endpoint(b, b->daddr, b->dport, dst, sizeof(dst));
	snprintf(buf, len, "%s %s > %s", proto, src, dst);
}
