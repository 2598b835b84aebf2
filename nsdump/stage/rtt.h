/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NS_RTT_H
#define _NS_RTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"
#include "source/calib.h"
#include "stage/correct.h"
#include "stage/stats.h"

/*
 * The user-level round trip of a ping-pong (NetSlice section 2.3 and
 * formula 5), from the blocks themselves; see rtt.c for exactly what
 * is derived.  Feed every block and loss item in any order, then finish.
 */
struct ns_rtt_block {
	uint64_t tsc0;
	uint64_t conn;
	uint64_t overhead;	/* ticks the macros of this block add */
	uint64_t overhead_cold;	/* the same by the cold calibration */
	uint8_t dir;
	bool retrans;
};

struct ns_rtt {
	struct ns_rtt_block *b;
	size_t n, cap;
	uint64_t *loss_tsc;
	size_t nloss, loss_cap;
	bool oom;
	/* the cold calibration (nsdump --cold), or NULL: the other bound */
	const struct ns_calib_set *cold;
	/* results of ns_rtt_finish() */
	struct ns_stats raw, corrected, corrected_cold;
	uint64_t spanning_loss;	/* samples dropped: a loss inside them */
	uint64_t clamped, clamped_cold;
};

void ns_rtt_init(struct ns_rtt *t);
void ns_rtt_free(struct ns_rtt *t);
/* @overhead: the block's ns_citem.overhead (0 leaves it uncorrected). */
void ns_rtt_block(struct ns_rtt *t, const struct nsl_block *b,
		  uint64_t overhead);
void ns_rtt_loss(struct ns_rtt *t, const struct nsl_loss *l);
void ns_rtt_finish(struct ns_rtt *t);

#endif /* _NS_RTT_H */
