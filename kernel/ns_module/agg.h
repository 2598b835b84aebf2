/* SPDX-License-Identifier: GPL-2.0 */
/* Aggregate mode: per-layer histograms folded at NSE, and /dev/ns-hist. */
#ifndef _NSLM_AGG_H
#define _NSLM_AGG_H

#include <linux/netslice.h>
#include <linux/rcupdate.h>
#include <linux/types.h>

int nslm_agg_init(void);
void nslm_agg_uninit(void);

int nslm_agg_set(const struct nsl_agg *conf);
int nslm_agg_read(struct nsl_agg_read __user *arg);

/* What aggregate mode folds into, NULL while it is off (agg.c). */
extern struct nslm_agg __rcu *nslm_agg_now;

/*
 * Called for every block delivered while aggregating (nslm_agg_on(),
 * tested inline: off, a block costs no call): folds it.  Returns whether
 * the block goes no further (folded, not an exemplar); false when it is
 * to be delivered whole as before.
 */
bool nslm_agg_take(const struct nsl_item_hdr *item);

static inline bool nslm_agg_on(void)
{
	return rcu_access_pointer(nslm_agg_now);
}

#endif /* _NSLM_AGG_H */
