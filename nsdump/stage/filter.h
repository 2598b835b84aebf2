/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter stage of nsdump's pipeline (pipeline.h): which blocks and
 * event records the views see; loss and SYSINFO items always pass.  The
 * conditions, all of which an item must meet:
 *
 *   expression  a pcap-filter expression (expr.h) over the item's flow:
 *               a block's own (ABI 2); a block without one (family 0)
 *               never matches.  An event record is matched as a packet
 *               of its connection, whose flow its blocks tell.
 *   -i          a device the block crossed (ABI 6: any of its devices
 *               with that ifindex in that namespace), or one of an older
 *               module's by its ifindex; event records have none and
 *               pass.  A name is of nsdump's own namespace; devname.h's
 *               "if<ifindex>@<netns>" names any (a file's from elsewhere).
 *   -p l.r      the connection's ports (pmgraph's), from any event
 *               record with NSL_EVF_ADDR (nsl_tcp_state sport = local,
 *               dport = remote); a block belongs to the connection
 *               block.conn names.
 *   --dir       tx or rx.
 *
 * Per-CPU rings do not keep a connection's items in order, so an item
 * whose connection's ports (-p) or flow (an event record under an
 * expression) are not known yet is held (up to NS_FILTER_HOLD items)
 * and decided when they are; what is still undecided at the end is
 * left out and counted.
 */
#ifndef _NS_FILTER_H
#define _NS_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "source/decode.h"
#include "stage/correct.h"
#include "stage/expr.h"
#include "stage/magnet.h"

#define NS_FILTER_PORTS	16
#define NS_FILTER_HOLD	(1u << 15)
#define NS_DIR_ANY	(-1)

struct ns_filter {
	struct { uint16_t local, remote; } port[NS_FILTER_PORTS];	/* 0: any */
	unsigned int nports;
	int dir;		/* NSL_DIR_TX, NSL_DIR_RX or NS_DIR_ANY */
	unsigned int ifindex;	/* -i: 0 any */
	uint32_t netns;		/* -i's namespace inode; 0: any */
	struct ns_expr expr;	/* the expression, if any (ns_expr_active) */
	struct ns_magnet *conns;	/* who has which ports: learnt here */
	struct ns_held **held;	/* in arrival order */
	size_t nheld, cap;
	uint64_t undecided_blocks, undecided_events;	/* left out at the end */
};

/* An item waiting for its connection's ports or flow, and its corrections. */
struct ns_held {
	struct ns_item item;
	struct ns_citem ci;	/* ci.it is &item */
};

typedef void (*ns_filter_emit)(void *ctx, const struct ns_citem *ci);

/* "43210.5201", "0.5201" (any local port); 0 or -1 if malformed/full. */
int ns_filter_add_ports(struct ns_filter *f, const char *arg);
/* "tx" / "rx"; 0 or -1. */
int ns_filter_set_dir(struct ns_filter *f, const char *arg);
/*
 * -i: "any", the name of an interface here, or "if<ifindex>[@<netns>]";
 * 0 or -1 (no such one).
 */
int ns_filter_set_interface(struct ns_filter *f, const char *name);
void ns_filter_init(struct ns_filter *f, struct ns_magnet *conns);
/* Its held items and its expression. */
void ns_filter_free(struct ns_filter *f);
bool ns_filter_active(const struct ns_filter *f);

/*
 * The stage: every item, once.  An event record first tells @f's
 * connections its ports, a block (under an expression) its flow, which
 * may release items held for them; then the item is emitted now,
 * dropped, or held (copied) to be emitted by a later call.  With NS_FILTER_HOLD items waiting, the oldest is left
 * out (counted in undecided_*) to make room.
 */
void ns_filter_item(struct ns_filter *f, const struct ns_citem *ci,
		    ns_filter_emit emit, void *ctx);
/* End of input: what is still held is left out and counted. */
void ns_filter_finish(struct ns_filter *f);

#endif /* _NS_FILTER_H */
