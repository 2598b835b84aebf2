/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve: aggregate mode switched on in the kernel (NSIOCSAGG, then
 * collection on) and its histograms served over HTTP (view/http.h) as
 * Prometheus metrics (view/metrics.h), from one poll() loop.
 *
 * Without --exemplars the device is let go once set up: snapshots come
 * from /dev/ns-hist alone (source/histograms.h), so the module
 * can be reloaded under nsdump.  A new load (another load_id) or the
 * device gone (netslice_up 0) is said on stderr; a module that does
 * not aggregate (conf.flags 0: a new load) is set up again, once per
 * load.  With --exemplars the device stays open (main.c's capture) and
 * its items, the exemplars, go through the pipeline in the same loop.
 */
#ifndef _NS_SERVE_H
#define _NS_SERVE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "opts.h"
#include "source/capture.h"
#include "source/histograms.h"
#include "source/source.h"
#include "stage/exemplar.h"
#include "stage/pipeline.h"
#include "view/http.h"

#define NS_SERVE_READ_MS	1000	/* a snapshot at least this often */

struct ns_serve {
	const struct ns_opts *o;
	struct ns_http http;
	const char *path;	/* the snapshots' file */
	struct nsl_agg conf;	/* NSIOCSAGG: ON and --exemplars */
	struct ns_dev *dev;	/* held (--exemplars), or NULL */
	struct ns_exemplars *ex;	/* --exemplars, or NULL */
	struct ns_agg_snap snap;	/* the last read */
	bool have;		/* snap holds one; false: netslice_up 0 */
	bool seen;		/* a snapshot was tried; load_id: the last read */
	uint64_t load_id;
	uint64_t set_for;	/* the load NSIOCSAGG was last tried on */
	int64_t next_read;	/* ms, CLOCK_MONOTONIC */
};

/*
 * Listen, switch aggregation on (on @dev if held, with @ex its
 * exemplars' sink, else on o->dev let go after) and read a first
 * snapshot: 0, or -1 once said why.  Without $NSDUMP_AGG a device that
 * cannot be set up is an error; with it, a note.
 */
int ns_serve_open(struct ns_serve *s, const struct ns_opts *o,
		  struct ns_dev *dev, struct ns_exemplars *ex);
/*
 * Serve until @stop, @src's items (NULL: none) through @p meanwhile:
 * NS_FLOW_DONE, or the source's or the pipeline's end.
 */
enum ns_flow ns_serve_loop(struct ns_serve *s, struct ns_source *src,
			   struct ns_pipeline *p, volatile sig_atomic_t *stop);
void ns_serve_close(struct ns_serve *s);

#endif /* _NS_SERVE_H */
