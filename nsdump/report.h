/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What nsdump says about the blocks: per-packet lines and the per-layer
 * table.  report.c accumulates and holds the plain printer; json.c holds
 * the JSON printer, paired with it as bpftool pairs its printers.
 */
#ifndef _NS_REPORT_H
#define _NS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "calib.h"
#include "events.h"
#include "evorder.h"
#include "magnet.h"
#include "netslice.h"
#include "stats.h"

struct ns_report;

/* The report works out the corrected values and times; a printer formats. */
struct ns_printer {
	void (*block)(struct ns_report *r, const struct nsl_block *b,
		      const struct ns_rec_corr *corr);
	void (*loss)(struct ns_report *r, const struct nsl_loss *l);
	void (*table)(struct ns_report *r);
	void (*event)(struct ns_report *r, const struct nsl_event_rec *ev,
		      const char *when);
	void (*sysinfo)(struct ns_report *r, const struct nsl_sysinfo *s,
			const char *when);
	void (*conns)(struct ns_report *r);	/* Table III */
};

extern const struct ns_printer ns_plain_printer;
extern const struct ns_printer ns_json_printer;

#define NS_EV_STATS_LIMIT	(NS_STATS_LIMIT / 4)

/* Values are corrected for macro overhead when the report has a calib. */
struct ns_region_acc {
	struct ns_stats ticks;	/* one value per block: its records summed */
	double raw_sum;		/* the same sums uncorrected, for raw_mean */
	double self_sum;	/* the sums less the regions nested inside */
	uint64_t records;	/* records of this region seen */
	uint64_t open;		/* of which NSL_RF_OPEN: excluded */
	uint64_t invalid;	/* NSL_RF_INVALID: counters excluded */
	uint64_t shared;	/* NSL_RF_SHARED: counted in another block */
	struct ns_stats ev[NSL_MAX_EVENTS];	/* counter deltas per block */
	double ev_sum[NSL_MAX_EVENTS];	/* their exact sums, for IPC */
	uint64_t ev_n[NSL_MAX_EVENTS];	/* blocks with valid deltas */
};

struct ns_report {
	const struct ns_printer *pr;
	FILE *out;		/* NULL: accumulate only */
	int verbose;
	bool quiet;		/* no per-packet lines */
	uint32_t tsc_khz;
	bool have_t0;
	uint64_t t0;		/* tsc0 of the first block: time origin */
	unsigned int nevents;	/* largest nevents seen */
	char event_name[NSL_MAX_EVENTS][NS_EVENT_NAME];	/* "": "ev<i>" */
	int ev_cycles, ev_instr;	/* which count[] is which, -1: none */
	const struct ns_calib_set *calib;	/* NULL: report raw values */
	struct ns_rtt *rtt;	/* NULL unless --rtt */
	struct ns_magnet *mag;	/* NULL unless -M: event lines, Table III */
	struct ns_evorder evq;	/* event lines waiting to print in time order */
	struct ns_clock clock;	/* TSC to wall clock for event records */
	uint64_t event_recs, sysinfos;	/* handed to the report */
	uint64_t blocks, lost, loss_items;
	uint64_t invalid;	/* records whose counters were excluded */
	uint64_t shared;	/* copies made by a split, counted once */
	uint64_t clamped_ticks;	/* corrected durations clamped to 0 */
	uint64_t clamped_counts;	/* corrected counter values clamped */
	struct ns_region_acc region[NSL_R_MAX];
};

void ns_report_init(struct ns_report *r, const struct ns_printer *pr,
		    FILE *out, uint32_t tsc_khz);
void ns_report_free(struct ns_report *r);
/* Event names (for labels) and which ones are cycles and instructions. */
void ns_report_set_events(struct ns_report *r, const struct ns_evsel *sel);
void ns_report_block(struct ns_report *r, const struct nsl_block *b);
void ns_report_loss(struct ns_report *r, const struct nsl_loss *l);
/* Printed and counted into Table III only with r->mag. */
void ns_report_event(struct ns_report *r, const struct nsl_event_rec *ev);
/* Print the event lines held for time order (idle, end of input). */
void ns_report_flush_events(struct ns_report *r);
/* How long an event line waits for older ones from other CPUs. */
#define NS_EV_HORIZON_MS	500
/* Replaces the clock; printed with r->mag. */
void ns_report_sysinfo(struct ns_report *r, const struct nsl_sysinfo *s);
void ns_report_table(struct ns_report *r);

/* helpers shared by the printers */
double ns_report_us(const struct ns_report *r, uint64_t ticks);
double ns_report_time_us(const struct ns_report *r, const struct nsl_block *b);
bool ns_report_summary(struct ns_report *r, unsigned int region,
		       struct ns_summary *s);
/* Instructions per cycle of a region, or a negative value if unknown. */
double ns_report_ipc(const struct ns_report *r, unsigned int region);
/* The table's first line after "per-layer latency": RAW or corrected. */
void ns_report_correction(const struct ns_report *r, char *buf, size_t len);
const char *ns_event_label(const struct ns_report *r, unsigned int e,
			   char *buf, size_t len);
/* "RETRANS,GSO" / "OPEN,MERGED"; unknown bits in hex; "" for none */
void ns_block_flags(uint32_t flags, char *buf, size_t len);
void ns_record_flags(uint32_t flags, char *buf, size_t len);

#endif /* _NS_REPORT_H */
