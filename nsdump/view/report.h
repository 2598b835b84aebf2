/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What nsdump says about the items: per-packet lines, event lines and,
 * at the end, the per-layer table and Table III.  A report is a sink at
 * the end of the pipeline (sink.h) that reads the accumulator (accum.h)
 * for the tables; report.c holds the sink and the plain printer, json.c
 * the JSON printer, paired with it as bpftool pairs its printers.
 */
#ifndef _NS_REPORT_H
#define _NS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "netslice.h"
#include "source/calib.h"
#include "stage/accum.h"
#include "stage/correct.h"
#include "stage/magnet.h"
#include "stage/sink.h"
#include "view/evorder.h"
#include "view/joinrep.h"
#include "view/tstamp.h"

struct ns_report;

/*
 * The accumulator works out the values; a printer formats.  The report
 * orders the lines of blocks, loss items and event records by time
 * (evorder.h) and, for a printer that @stamps, starts each block's and
 * event's line with its time stamp (tstamp.h).  @event and @sysinfo get
 * the time as ns_clock_format() gives it.
 */
struct ns_printer {
	bool stamps;
	void (*block)(struct ns_report *r, const struct ns_citem *ci);
	void (*loss)(struct ns_report *r, const struct nsl_loss *l);
	void (*table)(struct ns_report *r);
	void (*event)(struct ns_report *r, const struct nsl_event_rec *ev,
		      const char *when);
	void (*sysinfo)(struct ns_report *r, const struct nsl_sysinfo *s,
			const char *when);
	void (*conns)(struct ns_report *r);	/* Table III */
	void (*join)(struct ns_report *r);	/* the join's clock, unmatched */
};

extern const struct ns_printer ns_plain_printer;
extern const struct ns_printer ns_json_printer;

struct ns_report {
	struct ns_sink sink;
	const struct ns_printer *pr;
	FILE *out;
	struct ns_acc *acc;	/* read only (its statistics sort on a read) */
	struct ns_magnet *mag;	/* -M: event lines and Table III; else NULL */
	/* the kernel's sampling, its counts final at the finish; NULL: none */
	const struct nsl_sample *sample;
	int verbose;
	bool quiet;		/* no per-packet or event lines */
	bool live;		/* from /dev/ns: devices named (devname.h) */
	struct ns_tstamper ts;	/* -t ...: set after ns_report_init() */
	struct ns_evorder lines;	/* lines waiting to print in time order */
	int err;		/* errno of the first failed write, or 0 */
	/* -r twice: a table per direction (journey: its hosts), the join */
	struct ns_joinrep *join;
	const char *journey[2];
};

/* A sink printing to @out (not NULL) what @acc holds and the items. */
void ns_report_init(struct ns_report *r, const struct ns_printer *pr,
		    FILE *out, struct ns_acc *acc);
void ns_report_free(struct ns_report *r);
/* How long a line waits for older ones from other CPUs. */
#define NS_EV_HORIZON_MS	500

#endif /* _NS_REPORT_H */
