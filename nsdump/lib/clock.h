/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace's clock: a TSC reading to nanoseconds since the epoch and to
 * text, by the reference pair (TSC, wall clock) the kernel read together
 * (the file's INFO, then each SYSINFO item).  Packet lines, MAGNeT event
 * lines and the views all tell time through it.
 */
#ifndef _NS_CLOCK_H
#define _NS_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

/* TSC to wall clock: from the file's INFO, replaced by each SYSINFO. */
struct ns_clock {
	uint64_t ref_tsc;
	uint64_t ref_ns;	/* ns since the epoch at ref_tsc; 0: unknown */
	uint32_t tsc_khz;
	bool sysinfo;		/* taken from a SYSINFO item */
};

void ns_clock_from_info(struct ns_clock *c, const struct nsl_info *info);
/* A SYSINFO without tsc_khz leaves the rate as it was. */
void ns_clock_from_sysinfo(struct ns_clock *c, const struct nsl_sysinfo *s);
/* Nanoseconds since the epoch at @tsc (ref_ns + elapsed, signed). */
int64_t ns_clock_ns(const struct ns_clock *c, uint64_t tsc);
/*
 * "2026-11-21 23:41:07.123456789" in local time (TZ), or "+S.NNNNNNNNN"
 * seconds from ref_tsc when no wall-clock reference is known.
 */
void ns_clock_format(const struct ns_clock *c, uint64_t tsc, char *buf,
		     size_t len);

#endif /* _NS_CLOCK_H */
