/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pcap-filter expressions, as tcpdump takes them (`nsdump 'tcp port
 * 5201 and host 192.0.2.2'`).  libpcap compiles the expression to a
 * classic BPF program for raw IP packets (DLT_RAW); a flow matches when
 * the program accepts the packet ns_expr_packet() makes up from it: an
 * IP header and a TCP or UDP header, nothing else.  Fields no block
 * carries (TCP flags, ICMP type, payload) read as zero or beyond the
 * packet, as a truncated capture's do.
 *
 * Capturing, the kernel runs the same program (ns_expr.prog, handed in
 * with NSIOCSFILTER) over the same packet: both sides build it with
 * include/netslice.h's nsl_filter_packet().
 */
#ifndef _NS_EXPR_H
#define _NS_EXPR_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "stage/tuple.h"

/* The longest made-up packet: IPv6 header and TCP header. */
#define NS_EXPR_PACKET_MAX	NSL_FILTER_PKT_MAX
/* What the program returns for a match, as tcpdump's default -s. */
#define NS_EXPR_SNAPLEN		262144

struct ns_expr {
	char *text;			/* NULL: no expression */
	struct bpf_program prog;	/* libpcap's compiled program */
};

/* No expression: ns_expr_match() takes everything. */
void ns_expr_init(struct ns_expr *e);
/*
 * Compile @text; 0, or -1 with libpcap's reason in @err.  An empty or
 * blank expression is no expression, as for tcpdump.
 */
int ns_expr_compile(struct ns_expr *e, const char *text, char *err,
		    size_t len);
void ns_expr_free(struct ns_expr *e);
bool ns_expr_active(const struct ns_expr *e);

/* The packet the program runs over for @t; its length in bytes. */
size_t ns_expr_packet(const struct ns_tuple *t,
		      uint8_t pkt[NS_EXPR_PACKET_MAX]);
/* Does the expression take @t?  (Always, without an expression.) */
bool ns_expr_match(const struct ns_expr *e, const struct ns_tuple *t);

/*
 * Is the verdict of @p, over the packets nsl_filter_packet() makes, the
 * same for every packet of a flow, whatever its lengths, TCP sequence
 * number and BPF_LEN?  True only when proved over every path of the
 * program (NSL_FILTER_FLOW may then be promised to the kernel); false
 * also when the proof was not found within a bound on the work.
 */
bool ns_expr_flow_only(const struct bpf_program *p);

/* The words of argv[@first..] joined by spaces (tcpdump's copy_argv). */
char *ns_expr_join(int argc, char **argv, int first);

#endif /* _NS_EXPR_H */
