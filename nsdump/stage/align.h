/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Clock alignment of two hosts from packets sent both ways (join.h):
 * NTP's minimum filtering, and with pairs spanning long enough a drift
 * fitted over windows.  A sample is one packet: @d the receive time on
 * the receiver's clock less the send time on the sender's, @t when on
 * host 0's clock, @dir 0 for host 0 to host 1.
 */
#ifndef _NS_ALIGN_H
#define _NS_ALIGN_H

#include <stddef.h>
#include <stdint.h>
#include "stage/join.h"

struct ns_align_sample {
	double t, d;
	uint8_t dir;
};

/* @c from @n samples (any order); c->known false without both ways. */
void ns_align(const struct ns_align_sample *s, size_t n, struct ns_jclock *c);

#endif /* _NS_ALIGN_H */
