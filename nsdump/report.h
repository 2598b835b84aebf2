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
#include "netslice.h"
#include "stats.h"

struct ns_report;

struct ns_printer {
	void (*block)(struct ns_report *r, const struct nsl_block *b);
	void (*loss)(struct ns_report *r, const struct nsl_loss *l);
	void (*table)(struct ns_report *r);
};

extern const struct ns_printer ns_plain_printer;
extern const struct ns_printer ns_json_printer;

struct ns_region_acc {
	struct ns_stats ticks;	/* one value per block: its records summed */
	uint64_t records;	/* records of this region seen */
	uint64_t open;		/* of which NSL_RF_OPEN: excluded */
	double ev_sum[NSL_MAX_EVENTS];	/* counter deltas, per block summed */
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
	const char *event_name[NSL_MAX_EVENTS];	/* NULL: "ev<i>" */
	uint64_t blocks, lost, loss_items;
	struct ns_region_acc region[NSL_R_MAX];
};

void ns_report_init(struct ns_report *r, const struct ns_printer *pr,
		    FILE *out, uint32_t tsc_khz);
void ns_report_free(struct ns_report *r);
void ns_report_block(struct ns_report *r, const struct nsl_block *b);
void ns_report_loss(struct ns_report *r, const struct nsl_loss *l);
void ns_report_table(struct ns_report *r);

/* helpers shared by the printers */
double ns_report_us(const struct ns_report *r, uint64_t ticks);
double ns_report_time_us(const struct ns_report *r, const struct nsl_block *b);
bool ns_report_summary(struct ns_report *r, unsigned int region,
		       struct ns_summary *s);
const char *ns_event_label(const struct ns_report *r, unsigned int e,
			   char *buf, size_t len);
/* "RETRANS,GSO" / "OPEN,MERGED"; unknown bits in hex; "" for none */
void ns_block_flags(uint32_t flags, char *buf, size_t len);
void ns_record_flags(uint32_t flags, char *buf, size_t len);

#endif /* _NS_REPORT_H */
