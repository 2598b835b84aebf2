/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve --exemplars: the blocks the kernel delivered whole while it
 * aggregates, remembered as the OpenMetrics exemplars of its histograms
 * (view/metrics.c).  A sink of the pipeline (stage/sink.h): for each
 * region of a block, the value the kernel folded (nsl_agg_values() with
 * the snapshot's tau_o and tau_b) names the bucket it went into, and
 * the block becomes that bucket's latest exemplar, keyed as the
 * kernel's histogram is (region, direction, device, family, protocol).
 */
#ifndef _NS_EXEMPLAR_H
#define _NS_EXEMPLAR_H

#include <stdbool.h>
#include <stdint.h>
#include "netslice.h"
#include "stage/sink.h"

/* Histograms with exemplars at most; the kernel has 16 groups x 18. */
#define NS_EX_SERIES	1024

struct ns_exemplar {
	uint64_t ticks;		/* the value folded */
	double time;		/* when it came: Unix seconds; 0: none */
	uint32_t cpu;		/* the ring it came on */
	uint64_t seq;		/* its sequence on that CPU */
	uint64_t block;		/* its number in the -w file, from 1; 0: none */
};

/* A histogram's key, as struct nsl_agg_hist has it. */
struct ns_ex_key {
	uint8_t region, dir;
	uint16_t family, proto;
	uint32_t ifindex, netns;	/* netns 0: not known */
};

struct ns_ex_series {
	struct ns_ex_key key;
	struct ns_exemplar at[NSL_AGG_BUCKETS];
};

struct ns_exemplars {
	struct ns_sink sink;
	uint64_t tau_o, tau_b;	/* the snapshot's correction, ticks */
	bool numbered;		/* blocks are numbered (-w holds them all) */
	uint64_t blocks;	/* blocks seen */
	uint64_t unkept;	/* values past NS_EX_SERIES histograms */
	struct ns_ex_series *series;
	unsigned int n, cap;
};

/* @numbered: each block is also the next of the -w file. */
void ns_exemplars_init(struct ns_exemplars *e, bool numbered);
/* Forget them all (the module was reloaded). */
void ns_exemplars_clear(struct ns_exemplars *e);
void ns_exemplars_free(struct ns_exemplars *e);
/* Block @b, come at Unix time @now, as each of its regions' exemplar. */
void ns_exemplars_add(struct ns_exemplars *e, const struct nsl_block *b,
		      double now);
/* Bucket @bucket's exemplar in histogram @h, or NULL. */
/* The exemplars of @h's series by bucket (time 0: none), or NULL. */
const struct ns_exemplar *ns_exemplars_of(const struct ns_exemplars *e,
					  const struct nsl_agg_hist *h);
const struct ns_exemplar *ns_exemplars_find(const struct ns_exemplars *e,
					    const struct nsl_agg_hist *h,
					    unsigned int bucket);

#endif /* _NS_EXEMPLAR_H */
