/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A block's records as time spans that nest: what the drawn views (the
 * HTML waterfall, html.h; the Chrome trace, chrome.h) put on a time axis.
 *
 * Records are in START order, and a record's depth is the number of
 * records open around it at its START, so its parent is the last earlier
 * record one level up.  A record is drawn from its start for its ticks,
 * except where that would cross what the order says: a MERGED record's
 * ticks sum intervals that are not contiguous, and the TSCs of two CPUs
 * (MIGRATED) may disagree.  So a span ends no later than the next record
 * at its depth or above starts, and lies inside its parent's span (trace
 * viewers drop slices that do not nest); such a span is marked cut.  An
 * OPEN record (never stopped) has a start but no span.
 *
 * A block is cut into parts by side: each depth-0 record with what nests
 * in it belongs to the send or the receive path, and consecutive ones of
 * one side make a part.  A tx block over a NIC is one send part; over
 * loopback or a veth, a send part then a receive part; a forwarded
 * packet, receive then send.
 */
#ifndef _NS_NEST_H
#define _NS_NEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"
#include "source/decode.h"

struct ns_span {
	uint64_t start, end;	/* ticks from the block's tsc0; end >= start */
	int parent;		/* the enclosing record with a span, or -1 */
	unsigned int level;	/* such records around it: 0 outermost */
	unsigned int part;	/* index into ns_nest.part */
	bool open;		/* NSL_RF_OPEN: start only, not drawn */
	bool cut;		/* shortened or moved to nest */
};

struct ns_part {
	unsigned int first, end;	/* records [first, end) */
	bool receive;
};

struct ns_nest {
	unsigned int nrec, nparts;
	struct ns_span span[NSL_MAX_RECORDS];
	struct ns_part part[NSL_MAX_RECORDS];
	uint64_t end;		/* the latest span end: NSI to the last STOP */
};

void ns_nest_block(const struct nsl_block *b, struct ns_nest *n);

/* rx-nic, rx-link, backlog, rx-ip, rx-tcp, rx-udp, sk-backlog, queue, copy */
bool ns_region_is_receive(unsigned int region);

/* The regions in the order a packet meets them, send path first. */
extern const unsigned char ns_region_path_order[NS_R_MAX - 1];

/*
 * What the drawings colour a region by: its layer ("socket", "tcp/udp",
 * "ip", "link", "nic", or "wait" for the queues) and a colour, one hue per
 * layer, darker on the send path and lighter on the receive path, greys
 * for the waits.  "" and grey outside the ABI.
 */
const char *ns_region_layer(unsigned int region);
const char *ns_region_colour(unsigned int region);

/*
 * The packet as tcpdump names it: "tcp 192.0.2.1.43210 > 192.0.2.2.5201"
 * (IPv6 in brackets), the addresses left out when the block has none
 * (the reader did not ask for them), "proto 47" for another protocol,
 * "" when no IP header was seen.
 */
void ns_block_flow_text(const struct nsl_block *b, char *buf, size_t len);

#endif /* _NS_NEST_H */
