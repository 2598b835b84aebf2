/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Two hosts, one journey: a segment's send block on one host matched
 * with its receive block on the other, and the two hosts' clocks
 * aligned from the matches (doc/design.md, "Two hosts").
 *
 * Matching, without any clock:
 *   TCP  the packet's flow (addresses when every block has them, else
 *        ports), sequence number and payload length.  A TSO send block
 *        (segs > 1) matches the receive blocks that tile its bytes; a
 *        receive block is always one frame (GRO merges leave each frame
 *        its block, flagged ABSORBED).  One send and one receive block
 *        of a segment: joined.  Copies (retransmissions, duplicates):
 *        decided by the clock below.
 *   UDP  the flow and the datagram's length only: the blocks carry no
 *        IP ID.  Every datagram is decided by the clock.
 * Clock: host 0's time (the first file's) is the reference.  From the
 * pairs joined without the clock, the offset of host 1's clock is the
 * NTP estimate by minimum filtering: d = recv - send over 0>1 pairs is
 * owd + offset, over 1>0 pairs owd - offset, so offset = (min d01 -
 * min d10) / 2, exact when the two minimum one-way times are equal and
 * biased by half their difference otherwise; it lies for certain within
 * half the minimum round trip (min d01 + min d10) / 2 of that, the
 * uncertainty reported.  With the pairs spanning NS_JOIN_DRIFT_SPAN_NS
 * or more, the drift is the weighted fit of the offsets of
 * NS_JOIN_WINDOWS windows, and the offset and uncertainty are then of
 * the minima less the drift.
 * Decided by the clock: a receive block is joined to the one send block
 * of its segment (or flow and length) whose wire time lies in [-U, W +
 * U] (U the uncertainty, W the largest wire time of the pairs joined
 * without the clock in that direction), if it is the only one there and
 * no other receive block picks it (a datagram with --join-window: in
 * [-U, window] instead);
 * one send block picked by several
 * copies is joined to the first, the others are duplicates.
 */
#ifndef _NS_JOIN_H
#define _NS_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"
#include "lib/clock.h"
#include "stage/correct.h"

#define NS_JOIN_WINDOWS		4
#define NS_JOIN_DRIFT_SPAN_NS	2000000000ll	/* 2 s */

/* Why a block is not joined (NS_JW_JOINED: it is). */
enum ns_join_why {
	NS_JW_JOINED,
	NS_JW_LOCAL,		/* loopback, veth: its block has the journey */
	NS_JW_NO_WIRE,		/* no closed nic or rx-nic, not TCP/UDP, no data */
	NS_JW_NO_PEER,		/* no block of the other host has its flow */
	NS_JW_NOT_SEEN,		/* its flow is there, this segment is not */
	NS_JW_AMBIGUOUS,	/* copies the clock cannot tell apart */
	NS_JW_DUPLICATE,	/* a second copy of a send joined to the first */
	NS_JW_PARTIAL,		/* a TSO send whose frames are not all there */
	NS_JW_EARLY,		/* arrived before it was sent, by the clock */
	NS_JW_MAX
};

/* The reason's word, as the text and JSON say it. */
const char *ns_join_why_name(enum ns_join_why why);

/* One block of one host, as the join keeps it. */
struct ns_jblock {
	struct nsl_block b;
	struct ns_rec_corr corr[NSL_MAX_RECORDS];
	double t;		/* wire end: tx nic start, rx rx-nic start; ns */
	uint32_t plen;		/* payload bytes */
	uint8_t host;		/* 0: the first file, 1: the second */
	uint8_t why;		/* enum ns_join_why */
	bool tx;		/* a send block (else a receive block) */
	int rec;		/* the record t is of */
	size_t peer;		/* joined: (first) block of the other host */
};

/*
 * What the views know of a joined block (ns_citem.join): the block runs
 * the sender's records, the wire, then the receiver's, on host 0's TSC.
 */
struct ns_joined {
	uint8_t from, to;	/* sending and receiving host */
	uint16_t part, parts;	/* a TSO send's frames: part of parts */
	uint8_t wire;		/* the wire record's index */
	uint8_t rx_first;	/* the receiver's first record's index */
	double wire_ns;		/* the wire's length (may be < 0) */
	double uncert_ns;	/* the clock's uncertainty, hence the wire's */
	size_t tx, rx;		/* the two blocks, in struct ns_join's b */
};

/* One host's clock: its trace's anchor, the first guess. */
struct ns_jhost {
	struct ns_clock clock;
	const char *name;
	uint64_t blocks;
};

/* The clock estimate: host 1's time = host 0's + offset + drift (t - t_mid). */
struct ns_jclock {
	bool known;		/* pairs in both directions */
	double offset_ns;	/* at t_mid, host 0's time */
	double uncert_ns;	/* half the minimum round trip */
	double drift_ppm;	/* 0 unless fitted */
	double drift_uncert_ppm;
	bool drift;		/* fitted (pairs spanned long enough) */
	double t_mid;		/* ns, host 0's time */
	uint64_t pairs[2];	/* pairs the estimate used, per direction */
	uint64_t span_ns;
};

struct ns_join {
	struct ns_jhost host[2];
	struct ns_jblock *b;	/* both hosts' blocks */
	size_t n, cap;
	bool by_addr;		/* flows compared with their addresses */
	double window_ns;	/* a datagram's longest wire time; 0: W + U */
	struct ns_jclock clock;
	uint64_t why[2][2][NS_JW_MAX];	/* [host][tx][why] */
	uint64_t joined[2];	/* joined blocks (receive side), by sender */
	uint64_t tso[2];	/* TSO sends joined to several frames */
};

void ns_join_init(struct ns_join *j);
void ns_join_free(struct ns_join *j);
/* Keeps block @ci of @host (its corrections too); 0, or -1: no memory. */
int ns_join_add(struct ns_join *j, unsigned int host, const struct ns_citem *ci);
/* Matches the blocks and aligns the clocks. 0, or -1: no memory. */
int ns_join_match(struct ns_join *j);
/* Host 1's clock less host 0's at host 0's time @t (ns), as estimated. */
double ns_join_offset_at(const struct ns_join *j, double t);
/*
 * Host 1's TSC less host 0's at the same instant (the pairs' middle),
 * in ticks, if host 1's clock is @offset_ns ahead (the estimate, or 0:
 * the anchors' first guess).
 */
int64_t ns_join_tsc_offset(const struct ns_join *j, double offset_ns);
/* A block's time @tsc on its host's clock, ns from host 0's anchor. */
double ns_join_host_ns(const struct ns_join *j, unsigned int host,
		       uint64_t tsc);

#endif /* _NS_JOIN_H */
