/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's answer to GET /metrics: a snapshot of the kernel's
 * histograms (source/histograms.h) and the exemplars nsdump kept
 * (stage/exemplar.h) as the Prometheus text format 0.0.4, or as
 * OpenMetrics 1.0 text (exemplars only there) when the scraper's Accept
 * asks for it.  A pure function of its input: the HTTP side (view/http.h)
 * sends what it returns.
 *
 * The metric families, each named once below:
 *   netslice_build_info{version,abi}       1
 *   netslice_up                           1: a snapshot was read
 *   netslice_start_time_seconds           when the histograms began
 *   netslice_blocks_total, _truncated_blocks_total, _open_blocks_total,
 *   _exemplars_total, _other_blocks_total, _emitted_blocks_total
 *   netslice_correction_seconds{tau}      tau_o, tau_b taken off
 *   netslice_exemplar_threshold_seconds{region}
 *   netslice_region_latency_seconds{region,dir,dev,family,proto}
 *                                          histogram, the kernel's buckets
 */
#ifndef _NS_METRICS_H
#define _NS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "source/histograms.h"
#include "stage/exemplar.h"

enum ns_metrics_format {
	NS_METRICS_PROM,	/* text/plain; version=0.0.4 */
	NS_METRICS_OPENMETRICS,	/* application/openmetrics-text; 1.0.0 */
};

struct ns_metrics_in {
	const struct ns_agg_snap *snap;	/* NULL: none read (netslice_up 0) */
	const struct ns_exemplars *ex;	/* NULL: none */
	const char *version;		/* nsdump's */
	unsigned int abi;		/* NSL_ABI_VERSION */
	bool live;	/* devices named as this host knows them (devname.h) */
};

/* What an Accept header (NULL: none) asks for, by its q-values. */
enum ns_metrics_format ns_metrics_negotiate(const char *accept);
const char *ns_metrics_content_type(enum ns_metrics_format f);
/* The exposition, malloc'd, *@len bytes; NULL if memory ran out. */
char *ns_metrics_text(const struct ns_metrics_in *in,
		      enum ns_metrics_format f, size_t *len);

/*
 * @v as OpenMetrics' canonical numbers are written (Go's %g, shortest
 * round trip, ".0" added to an integer): "0.0001", "1e-05", "100000.0",
 * "1e+06", "+Inf".  @len at least 32.
 */
void ns_metrics_number(double v, char *buf, size_t len);
/*
 * @s made valid UTF-8 and escaped for a label value, or a HELP text:
 * backslash, newline and (but for HELP in 0.0.4) double quote.
 */
void ns_metrics_escape(FILE *f, const char *s, bool help,
		       enum ns_metrics_format fmt);

#endif /* _NS_METRICS_H */
