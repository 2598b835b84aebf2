/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Aggregate mode (ABI 7; include/netslice.h above NSL_AGG_SUB): the
 * kernel's histograms as one snapshot, read whole from NSL_AGG_DEV,
 * /dev/ns-hist (or the file $NSDUMP_AGG names, for a test
 * without the module) and checked; and --exemplars' SPEC as NSIOCSAGG
 * takes it.  --serve (serve.c) reads a snapshot per scrape.
 */
#ifndef _NS_HISTOGRAMS_H
#define _NS_HISTOGRAMS_H

#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

#define NS_AGG_ABI	7	/* the first ABI with aggregate mode */

struct ns_agg_snap {
	struct nsl_agg_head head;
	struct nsl_agg_hist *hist;	/* head.nhist, malloc'd */
};

enum ns_agg_status {
	NS_AGG_OK,
	NS_AGG_ABSENT,		/* no such file: the module is not loaded */
	NS_AGG_BAD,		/* unreadable or malformed: @why says so */
};

/* $NSDUMP_AGG if set and not empty, else NSL_AGG_DEV. */
const char *ns_agg_path(void);
/* The snapshot in @path into @s (ns_agg_free() after NS_AGG_OK). */
enum ns_agg_status ns_agg_read(const char *path, struct ns_agg_snap *s,
			       char *why, size_t len);
/*
 * The snapshot in @buf (@len bytes: a head, then its histograms; bytes
 * past them are ignored) checked into @s: 0, or -1 with @why set.
 */
int ns_agg_parse(const void *buf, size_t len, struct ns_agg_snap *s,
		 char *why, size_t wlen);
void ns_agg_free(struct ns_agg_snap *s);
/* A histogram's count: the sum of its buckets. */
uint64_t ns_agg_count(const struct nsl_agg_hist *h);
/* "span" for NSL_AGG_SPAN, else the region's name; NULL past the ABI. */
const char *ns_agg_region_name(unsigned int region);
/*
 * --exemplars SPEC into @a's exemplar flags, region and threshold (ON
 * is the caller's): "all", "REGION>p99" or "REGION>N[ns|us|ms|s]"
 * (nanoseconds by default), REGION a region's name or "span".  0 or -1.
 */
int ns_agg_spec(const char *spec, struct nsl_agg *a);

#endif /* _NS_HISTOGRAMS_H */
