/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 1 in N sampling in the kernel (NSIOCSSAMPLE): the setting and its
 * counts as struct nsl_sample carries them, whether they come from the
 * device (NSIOCGSAMPLE) or a trace file (INFO's sample_rate and
 * sample_flags, TRAILER's sample_taken and sample_skipped).  Counts of a
 * sampled capture are of the sampled packets; the scale estimates all.
 */
#ifndef _NS_SAMPLE_H
#define _NS_SAMPLE_H

#include <stdbool.h>
#include "netslice.h"

/* Did the kernel pass packets over?  (Rate 0 or 1: it took each.) */
static inline bool ns_sample_active(const struct nsl_sample *s)
{
	return s && s->rate > 1;
}

/* What was picked 1 in N: "packets", or "flows" (NSL_SAMPLE_FLOWS). */
static inline const char *ns_sample_unit(const struct nsl_sample *s)
{
	return s->flags & NSL_SAMPLE_FLOWS ? "flows" : "packets";
}

/*
 * All packets per sampled one: (taken + skipped) / taken, as the kernel
 * counted them; the rate itself while nothing was taken (or counted).
 */
static inline double ns_sample_scale(const struct nsl_sample *s)
{
	if (!s->taken)
		return s->rate;
	return (double)(s->taken + s->skipped) / (double)s->taken;
}

#endif /* _NS_SAMPLE_H */
