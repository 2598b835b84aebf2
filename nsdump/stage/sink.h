/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The end of nsdump's pipeline (pipeline.h): a sink takes the items one
 * at a time and says at the finish what it made of them.  The text and
 * JSON reports (view/report.h), the HTML page, the Chrome trace and the
 * trace file (source/writer.h) are sinks; a new view is one more, added
 * where main.c starts the pipeline.
 */
#ifndef _NS_SINK_H
#define _NS_SINK_H

#include <stddef.h>
#include "source/decode.h"
#include "stage/correct.h"

/* Whether to go on reading, from any stage or sink. */
enum ns_flow {
	NS_FLOW_MORE,	/* go on */
	NS_FLOW_DONE,	/* stop, no error: -c reached, the output closed */
	NS_FLOW_FAIL,	/* stop on an error, already said */
};

static inline enum ns_flow ns_flow_worst(enum ns_flow a, enum ns_flow b)
{
	return a > b ? a : b;
}

struct ns_sink;

struct ns_sink_ops {
	/* One item (corrected, and for views filtered and accumulated). */
	enum ns_flow (*item)(struct ns_sink *s, const struct ns_citem *ci);
	/*
	 * Optional: a run of items taken whole (ns_decode_run()), instead
	 * of them one by one, by a pipeline's only view when nothing else
	 * reads them (ns_pipeline_runs()).
	 */
	enum ns_flow (*run)(struct ns_sink *s, const struct ns_run *r);
	/*
	 * With .run: the runs lent (ns_run.lent) are wanted back, and none
	 * of their bytes may be read once it returns.  Optional for a sink
	 * that keeps no run's bytes past .run.
	 */
	enum ns_flow (*give_back)(struct ns_sink *s);
	/* The input went quiet: print what is held for order.  Optional. */
	void (*idle)(struct ns_sink *s);
	/* End of input: 0, or -1 with one line in @why. */
	int (*finish)(struct ns_sink *s, char *why, size_t len);
	void (*free)(struct ns_sink *s);	/* optional */
};

struct ns_sink {
	const struct ns_sink_ops *ops;
	struct ns_sink *next;	/* the pipeline's list */
};

#endif /* _NS_SINK_H */
