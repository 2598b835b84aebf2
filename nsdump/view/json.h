/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump's JSON besides a capture's lines (those are the report's JSON
 * printer, report.h): an error as {"error": ...} (msg.h), --version, -L
 * and --calibrate, a line each, as bpftool's -j.  json.c writes them.
 */
#ifndef _NS_JSON_H
#define _NS_JSON_H

#include <stdio.h>
#include "source/calib.h"
#include "source/counters.h"
#include "source/version.h"

/* {"error": @msg} as one line. */
void ns_json_error(FILE *out, const char *msg);

/* --version as one line. */
void ns_json_version(FILE *out, const struct ns_build *b);

/* -L as JSON lines (counters.h's lister). */
struct ns_json_lister {
	struct ns_counter_lister lister;
	FILE *out;
	const char *kind, *pmu;	/* of the section being listed */
};

void ns_json_lister_init(struct ns_json_lister *jl, FILE *out);

/* Table 2 (--calibrate): one line. */
void ns_json_calib(FILE *out, const struct ns_calib_set *cs,
		   const char *const *names, unsigned int nevents);

#endif /* _NS_JSON_H */
