/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The accumulate stage of nsdump's pipeline (pipeline.h): what the views
 * summarise at the end, gathered from each item that passed the filter,
 * once: per-region statistics of the corrected values, counts, the round
 * trip samples (--rtt), MAGNeT's Table III (-M), and the clock that
 * SYSINFO items carry.  The views read it; none of them writes it.
 */
#ifndef _NS_ACCUM_H
#define _NS_ACCUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"
#include "source/calib.h"
#include "source/counters.h"
#include "stage/by.h"
#include "stage/correct.h"
#include "stage/magnet.h"
#include "stage/rtt.h"
#include "stage/stats.h"

#define NS_EV_STATS_LIMIT	(NS_STATS_LIMIT / 4)

/* Values are corrected for macro overhead when the accumulator's calib is. */
struct ns_region_acc {
	struct ns_stats ticks;	/* one value per block: its records summed */
	double raw_sum;		/* the same sums uncorrected, for raw_mean */
	double self_sum;	/* the sums less the regions nested inside */
	uint64_t records;	/* records of this region seen */
	uint64_t open;		/* of which NSL_RF_OPEN: excluded */
	uint64_t invalid;	/* NSL_RF_INVALID: counters excluded */
	uint64_t shared;	/* NSL_RF_SHARED: counted in another block */
	uint64_t merged;	/* cut short by a GRO merge: counted apart */
	struct ns_stats ev[NSL_MAX_EVENTS];	/* counter deltas per block */
	double ev_sum[NSL_MAX_EVENTS];	/* their exact sums, for IPC */
	uint64_t ev_n[NSL_MAX_EVENTS];	/* blocks with valid deltas */
};

struct ns_acc {
	uint32_t tsc_khz;
	const struct ns_calib_set *calib;	/* what corrected them; NULL: raw */
	struct ns_rtt *rtt;	/* NULL unless --rtt */
	struct ns_magnet *mag;	/* NULL unless -M: Table III */
	struct ns_by *by;	/* NULL unless --by */
	struct ns_clock clock;	/* TSC to wall clock for event records */
	bool counts_only;	/* no region values: nothing reads them */
	bool have_t0;
	uint64_t t0;		/* tsc0 of the first block: time origin */
	unsigned int nevents;	/* largest nevents seen */
	char event_name[NSL_MAX_EVENTS][NS_COUNTER_NAME];	/* "": "ev<i>" */
	int ev_cycles, ev_instr;	/* which count[] is which, -1: none */
	uint64_t event_recs, sysinfos;
	uint64_t blocks, lost, loss_items;
	uint64_t invalid;	/* records whose counters were excluded */
	uint64_t shared;	/* copies made by a split, counted once */
	uint64_t absorbed;	/* frames GRO merged into another skb */
	uint64_t coalesced;	/* segments whose data joined another skb */
	uint64_t clamped_ticks;	/* corrected durations clamped to 0 */
	uint64_t clamped_counts;	/* corrected counter values clamped */
	struct ns_region_acc region[NS_R_MAX];
};

void ns_acc_init(struct ns_acc *a, uint32_t tsc_khz);
void ns_acc_free(struct ns_acc *a);
/* Event names (for labels) and which ones are cycles and instructions. */
void ns_acc_set_counters(struct ns_acc *a, const struct ns_counters *sel);
/* The stage: one item that passed the filter. */
void ns_acc_item(struct ns_acc *a, const struct ns_citem *ci);
/* A run of compact blocks and losses (ns_decode_run()), counts only. */
void ns_acc_run(struct ns_acc *a, const struct ns_run *r);
/* End of input: what needs every item first (--rtt). */
void ns_acc_finish(struct ns_acc *a);

/* What the views ask of it. */
bool ns_acc_corrected(const struct ns_acc *a);
double ns_acc_us(const struct ns_acc *a, uint64_t ticks);
/* Microseconds from the first block's tsc0 (negative: out of order). */
double ns_acc_time_us(const struct ns_acc *a, const struct nsl_block *b);
bool ns_acc_summary(struct ns_acc *a, unsigned int region,
		    struct ns_summary *s);
/* Instructions per cycle of a region, or a negative value if unknown. */
double ns_acc_ipc(const struct ns_acc *a, unsigned int region);
bool ns_acc_has_ipc(const struct ns_acc *a);
/* The table's first line after "per-layer latency": RAW or corrected. */
void ns_acc_correction(const struct ns_acc *a, char *buf, size_t len);
const char *ns_acc_event_label(const struct ns_acc *a, unsigned int e,
			       char *buf, size_t len);

#endif /* _NS_ACCUM_H */
