/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -p lport.rport (as pmgraph's) and --dir: which blocks and event
 * records the reports see.  A connection's ports come from any event
 * record with NSL_EVF_ADDR (nsl_tcp_state sport = local, dport =
 * remote); a block belongs to the connection block.conn names.
 *
 * Per-CPU rings do not keep a connection's items in order, so an item of
 * a connection whose ports are not known yet is held (up to
 * NS_FILTER_HOLD items) and decided when a record names them; what is
 * still undecided at the end is left out and counted.
 */
#ifndef _NS_FILTER_H
#define _NS_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include "decode.h"
#include "magnet.h"

#define NS_FILTER_PORTS	16
#define NS_FILTER_HOLD	(1u << 15)
#define NS_DIR_ANY	(-1)

struct ns_filter {
	struct { uint16_t local, remote; } port[NS_FILTER_PORTS];	/* 0: any */
	unsigned int nports;
	int dir;		/* NSL_DIR_TX, NSL_DIR_RX or NS_DIR_ANY */
	const struct ns_magnet *conns;	/* who has which ports */
	struct ns_item **held;	/* in arrival order */
	size_t nheld, cap;
	uint64_t undecided_blocks, undecided_events;	/* left out at the end */
};

/* What ns_filter_offer() did with an item. */
enum ns_filter_verdict {
	NS_FILTER_PASS,		/* hand it on now */
	NS_FILTER_DROP,
	NS_FILTER_HELD,		/* copied; comes back from release/finish */
};

typedef void (*ns_filter_emit)(void *ctx, const struct ns_item *it);

/* "43210.5201", "0.5201" (any local port); 0 or -1 if malformed/full. */
int ns_filter_add_ports(struct ns_filter *f, const char *arg);
/* "tx" / "rx"; 0 or -1. */
int ns_filter_set_dir(struct ns_filter *f, const char *arg);
void ns_filter_init(struct ns_filter *f, const struct ns_magnet *conns);
void ns_filter_free(struct ns_filter *f);
bool ns_filter_active(const struct ns_filter *f);

/*
 * Blocks and event records only.  With NS_FILTER_HOLD items waiting, the
 * oldest is left out (counted in undecided_*) to make room.
 */
enum ns_filter_verdict ns_filter_offer(struct ns_filter *f,
				       const struct ns_item *it);
/* @conn's ports just became known: emit its held items that match. */
void ns_filter_release(struct ns_filter *f, uint64_t conn,
		       ns_filter_emit emit, void *ctx);
/* End of input: what is still held is left out and counted. */
void ns_filter_finish(struct ns_filter *f);

#endif /* _NS_FILTER_H */
