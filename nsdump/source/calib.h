/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profiler's own cost (NSIOCGCALIB, one struct nsl_calib per CPU), as
 * the device measures it and a trace file keeps it (CALIB, CALIB_COLD):
 * the set of a capture's CPUs, and its table (--calibrate).  The
 * correction of measured values by it is a stage of the pipeline
 * (stage/correct.h).
 */
#ifndef _NS_CALIB_H
#define _NS_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "netslice.h"

struct ns_calib_set {
	uint32_t ncpus;		/* entries of cpu[] and valid[] */
	struct nsl_calib *cpu;	/* indexed by CPU number */
	bool *valid;		/* cpu[i] was measured */
	uint32_t tsc_khz;
	char model[64];		/* /proc/cpuinfo "model name", or "" */
	bool cold;		/* measured with NSL_CALIB_COLD (CALIB_COLD) */
};

/* An empty set for CPUs 0 .. @ncpus - 1; 0 or -1 (out of memory). */
int ns_calib_alloc(struct ns_calib_set *cs, uint32_t ncpus);
void ns_calib_free(struct ns_calib_set *cs);
/* Store @c as the calibration of CPU c->cpu (must be < ncpus). */
void ns_calib_put(struct ns_calib_set *cs, const struct nsl_calib *c);
/* CPUs measured. */
uint32_t ns_calib_count(const struct ns_calib_set *cs);
/* The calibration for @cpu: its own, else the first CPU's; NULL if none. */
const struct nsl_calib *ns_calib_get(const struct ns_calib_set *cs,
				     uint32_t cpu);
/* This machine's "model name" into cs->model. */
void ns_calib_read_model(struct ns_calib_set *cs, const char *cpuinfo);

/* A row of Table 2: NSI, ..., NSA, its symbol in the paper ("-"), what. */
struct ns_cost_row {
	const char *macro, *symbol, *what;
};

/* Row @m (NSL_C_*). */
const struct ns_cost_row *ns_cost_row(int m);
/* @ticks in ns at the set's tsc_khz (0 if unknown). */
double ns_calib_ns(const struct ns_calib_set *cs, double ticks);

/*
 * nsdump --calibrate: the Table 2 analogue.  @names: labels of the
 * events in count[] (nevents of them), NULL for "ev<i>".
 */
void ns_calib_print(FILE *out, const struct ns_calib_set *cs,
		    const char *const *names, unsigned int nevents);

/* "tau_o=12.3ns, tau_beta=40.1ns" (ranges when the CPUs differ). */
void ns_calib_summary(const struct ns_calib_set *cs, char *buf, size_t len);

#endif /* _NS_CALIB_H */
