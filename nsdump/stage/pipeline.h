/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump's item pipeline.  Each item a source decodes (a trace file's,
 * or /dev/ns's: source/source.h) goes through the stages in this order,
 * each called once per item, each in its own file:
 *
 *   decode      source/decode.c,   bytes to a struct ns_item
 *               source/file.c
 *   correct     stage/correct.c    the records less the macros' cost
 *   (taps)      any sink that must see every item, filtered or not
 *   filter      stage/filter.c     expression, -i, -p, --dir: pass,
 *                                  drop or hold
 *   accumulate  stage/accum.c      statistics, Table III, round trips
 *   views       view/report.c,     lines in time order, tables at the
 *               view/json.c, ...   finish; the HTML page, the Chrome
 *               source/writer.c    trace; the trace file (-w)
 *
 * A recorder (-w alone: no filter, no -c) skips them: the source hands
 * its runs of compact blocks out whole, counted from their headers
 * (ns_decode_run()), and the trace file copies their bytes -- or writes
 * them from the mapped ring, which lends them until it wants them back.
 *
 * Sinks (sink.h) are added at the end; a new view is one more sink.  A
 * trace file holds what passed the filter, as tcpdump -w does: its
 * trailer counts the blocks it holds.  -c counts the blocks that passed.
 */
#ifndef _NS_PIPELINE_H
#define _NS_PIPELINE_H

#include <stdbool.h>
#include <stdint.h>
#include "source/calib.h"
#include "source/decode.h"
#include "stage/accum.h"
#include "stage/filter.h"
#include "stage/magnet.h"
#include "stage/sink.h"

struct ns_pipeline {
	uint64_t count;		/* -c: stop after this many passed; 0: no */
	const struct ns_calib_set *calib;	/* correct: NULL for raw */
	struct ns_filter *filter;
	struct ns_acc acc;
	struct ns_magnet conns;	/* learnt by the filter; Table III with -M */
	struct ns_sink *taps;	/* every item, before the filter */
	struct ns_sink *views;	/* what passed the filter */
	/*
	 * Whether any stage reads values: false when only the trace file
	 * and the counts take the items (ns_pipeline_record_only()).
	 */
	bool values;
	enum ns_flow flow;	/* the worst a sink said so far */
	uint64_t captured;	/* blocks in */
	uint64_t event_recs;	/* event records in */
	uint64_t passed;	/* blocks that passed the filter */
	uint64_t passed_events;	/* event records that passed */
	uint64_t skipped;	/* items of kinds this build does not know */
};

/*
 * @calib NULL: values are raw.  The filter, -M (ns_pipeline_magnet) and
 * --rtt (acc.rtt) are the caller's to set before the first item.
 */
void ns_pipeline_init(struct ns_pipeline *p, uint32_t tsc_khz,
		      const struct ns_calib_set *calib,
		      struct ns_filter *filter);
/* -M: Table III accounting from the connections the filter learns. */
void ns_pipeline_magnet(struct ns_pipeline *p);
/*
 * Nothing will read a corrected value or a region's statistics (-w
 * alone): items skip the correct stage and the accumulator keeps only
 * its counts.  A recorder that keeps up with the kernel steals less of
 * the CPU the traffic it records runs on.
 */
void ns_pipeline_record_only(struct ns_pipeline *p);
/*
 * Whether no stage reads past a block's header: recording only, no tap,
 * no filter.  The source may then hand blocks out shallow
 * (ns_decode_shallow()), the trace file copying their bytes.
 */
bool ns_pipeline_shallow(const struct ns_pipeline *p);
/*
 * Whether the source may hand out runs of items whole (ns_decode_run()):
 * shallow, no -c, and one view, which takes runs (the trace file).
 */
bool ns_pipeline_runs(const struct ns_pipeline *p);
void ns_pipeline_add_tap(struct ns_pipeline *p, struct ns_sink *s);
void ns_pipeline_add_view(struct ns_pipeline *p, struct ns_sink *s);
/* One decoded item through every stage. */
enum ns_flow ns_pipeline_push(struct ns_pipeline *p, const struct ns_item *it);
/* A run of items (ns_pipeline_runs()), counted as they are one by one. */
enum ns_flow ns_pipeline_push_run(struct ns_pipeline *p,
				  const struct ns_run *r);
/*
 * An item corrected already (a join's block: source/join.h), counted as
 * captured by the caller, through the stages after correct.
 */
enum ns_flow ns_pipeline_push_corrected(struct ns_pipeline *p,
					const struct ns_citem *ci);
/*
 * The source wants its lent runs back (NS_SOURCE_RECLAIM), and before
 * ns_source_done(): each view writes out what it holds of them.
 */
enum ns_flow ns_pipeline_give_back(struct ns_pipeline *p);
/* The source went quiet. */
void ns_pipeline_idle(struct ns_pipeline *p);
/*
 * End of input: the filter's held items are left out, the accumulator
 * finishes, then each tap and view.  0, or -1 after @fail was called
 * with each failing sink's line.
 */
int ns_pipeline_finish(struct ns_pipeline *p,
		       void (*fail)(void *ctx, const char *why), void *ctx);
/* Frees the stages' memory and each sink's (sink ops .free). */
void ns_pipeline_free(struct ns_pipeline *p);

#endif /* _NS_PIPELINE_H */
