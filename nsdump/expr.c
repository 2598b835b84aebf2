// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "expr.h"

void ns_expr_init(struct ns_expr *e)
{
	memset(e, 0, sizeof(*e));
}

void ns_expr_free(struct ns_expr *e)
{
	if (e->text)
		pcap_freecode(&e->prog);
	free(e->text);
	ns_expr_init(e);
}

bool ns_expr_active(const struct ns_expr *e)
{
	return e->text != NULL;
}

static bool blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

int ns_expr_compile(struct ns_expr *e, const char *text, char *err,
		    size_t len)
{
	pcap_t *p;
	int ret = 0;

	ns_expr_free(e);
	if (blank(text))
		return 0;
	/* No device: libpcap compiles for a link type it is told, raw IP. */
	p = pcap_open_dead(DLT_RAW, NS_EXPR_SNAPLEN);
	if (!p) {
		snprintf(err, len, "libpcap: cannot make a handle to compile with");
		return -1;
	}
	if (pcap_compile(p, &e->prog, text, 1, PCAP_NETMASK_UNKNOWN)) {
		snprintf(err, len, "%s", pcap_geterr(p));
		ret = -1;
	} else {
		e->text = strdup(text);
		if (!e->text) {
			pcap_freecode(&e->prog);
			snprintf(err, len, "out of memory");
			ret = -1;
		}
	}
	pcap_close(p);
	return ret;
}

/*
 * The packet of NSIOCSFILTER (include/netslice.h), which the kernel makes
 * for the same program: DLT_RAW, starting with the IP header.
 */
size_t ns_expr_packet(const struct ns_tuple *t,
		      uint8_t pkt[NS_EXPR_PACKET_MAX])
{
	struct nsl_filter_flow f = {
		.family = t->family == AF_INET6 ? 10 : 2,
		.proto = t->proto,
		.sport = t->sport,
		.dport = t->dport,
		.len = t->len,
		.tcp_seq = t->tcp_seq,
	};

	memcpy(f.saddr, t->saddr, sizeof(f.saddr));
	memcpy(f.daddr, t->daddr, sizeof(f.daddr));
	return nsl_filter_packet(&f, pkt);
}

bool ns_expr_match(const struct ns_expr *e, const struct ns_tuple *t)
{
	uint8_t pkt[NS_EXPR_PACKET_MAX];
	size_t n;

	if (!e->text)
		return true;
	if (t->family != AF_INET && t->family != AF_INET6)
		return false;
	n = ns_expr_packet(t, pkt);
	return bpf_filter(e->prog.bf_insns, pkt,
			  t->len > n ? t->len : (uint32_t)n, n) != 0;
}

char *ns_expr_join(int argc, char **argv, int first)
{
	size_t len = 1;
	char *text;

	for (int i = first; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	text[0] = 0;
	for (int i = first; i < argc; i++) {
		if (i > first)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	return text;
}
