/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader's block filter (NSIOCSFILTER), run before a block is queued,
 * or at NSI when it reads only the flow.
 */
#ifndef _NSLM_FILTER_H
#define _NSLM_FILTER_H

#include <linux/netslice.h>
#include <linux/types.h>

bool nslm_filter_admit(const struct nsl_filter_flow *flow, void *priv);
int nslm_filter_set(const struct nsl_filter *f);
/* No filter, nothing counted: at open and release. */
void nslm_filter_reset(void);
/* Blocks refused since the last reset. */
u64 nslm_filter_rejected(void);

#endif /* _NSLM_FILTER_H */
