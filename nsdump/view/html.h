/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump --html FILE: the capture as one self-contained HTML page (CSS,
 * JavaScript and SVG inline, nothing fetched): what was captured, each
 * region's latency distribution, a waterfall of packets, the counters
 * per layer, and MAGNeT's Table III.  A view at the end of the pipeline
 * (sink.h) that writes the page at the finish, from the accumulator's
 * statistics and the blocks it kept to draw (shortlist.h).
 */
#ifndef _NS_HTML_H
#define _NS_HTML_H

#include <stddef.h>
#include "netslice.h"
#include "stage/pipeline.h"

/* Blocks the waterfall draws: the first ones, and the slowest others. */
#define NS_HTML_FIRST	100
#define NS_HTML_SLOWEST	100

/*
 * A view writing @path ("-": stdout) at the finish, of what @p
 * accumulates; @source names the input ("file x.ns", "/dev/ns"), @info
 * is its INFO and @live says it is /dev/ns on this host (devices by name
 * where they resolve, devname.h).  NULL with @why set if the file cannot
 * be created or memory ran out.  The caller adds it with
 * ns_pipeline_add_view(); the pipeline frees it.
 */
struct ns_sink *ns_html_open(const char *path, struct ns_pipeline *p,
			     const char *source, const struct nsl_info *info,
			     bool live, char *why, size_t len);

#endif /* _NS_HTML_H */
