/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A packet's flow as nsdump shows it and as the filter expression sees
 * it: family, protocol, ports, addresses, length and TCP sequence, in
 * the packet's own direction (source first).  A block carries its flow
 * (ABI 2); an event record is given its connection's (tuple_from_event).
 */
#ifndef _NS_TUPLE_H
#define _NS_TUPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

struct ns_conn;

struct ns_tuple {
	uint16_t family;	/* AF_INET, AF_INET6; 0: no IP flow known */
	uint8_t proto;		/* IPPROTO_* */
	uint16_t sport, dport;	/* host order */
	uint8_t saddr[16];	/* network order, IPv4 in the first 4 bytes, */
	uint8_t daddr[16];	/* all zero when not known */
	uint32_t len;		/* bytes from the network header on */
	uint32_t tcp_seq;
};

/* @b's flow; false for a block without one (family 0: ABI 1, not IP). */
bool ns_tuple_from_block(const struct nsl_block *b, struct ns_tuple *t);

/*
 * An event record as a packet of its connection @c (NULL: none known):
 * family, protocol and addresses from the connection's blocks, ports
 * from the record when it has them (NSL_EVF_ADDR), the direction from
 * its type, the length its bytes.  False while the connection's flow is
 * not known.
 */
bool ns_tuple_from_event(const struct nsl_event_rec *ev,
			 const struct ns_conn *c, struct ns_tuple *t);

/* Source and destination exchanged (a receive seen from the socket). */
void ns_tuple_reverse(struct ns_tuple *t);

/* Either address non-zero. */
bool ns_tuple_has_addr(const struct ns_tuple *t);
/* TCP or UDP: the ports mean something. */
bool ns_tuple_has_ports(const struct ns_tuple *t);

/* "tcp", "udp", "icmp", "icmp6", else "proto <n>" into @buf. */
const char *ns_proto_name(unsigned int proto, char *buf, size_t len);
/* "192.0.2.1", "2001:db8::1" (inet_ntop's); @addr network order. */
void ns_addr_text(uint16_t family, const uint8_t *addr, char *buf,
		  size_t len);
/*
 * "192.0.2.1:43210 > 192.0.2.2:5201", "[2001:db8::1]:80 > [...]:43211";
 * without ports "192.0.2.1 > 198.51.100.7".  Needs the addresses.
 */
void ns_tuple_text(const struct ns_tuple *t, char *buf, size_t len);

#endif /* _NS_TUPLE_H */
