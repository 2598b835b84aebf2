// SPDX-License-Identifier: GPL-2.0
/*
 * Registration with the NetSlice core and the collection switch.
 *
 * The core calls deliver() under RCU.  Switching collection off stops new
 * blocks at NSI, and NSIOCSSTATE off returns only after a grace period, so
 * no deliver() started before the switch is still running.  Blocks of skbs
 * that were already instrumented still arrive as those skbs are freed: a
 * reader that wants the final counts drains until nsl_emitted() (NSIOCGINFO
 * emitted) stops moving.
 */

#include <linux/mutex.h>
#include <linux/netslice.h>
#include <linux/rcupdate.h>

#include "agg.h"
#include "filter.h"
#include "receiver.h"
#include "ring.h"

/* Aggregate mode folds a block, or lets it into the ring whole. */
static void nslm_deliver(const struct nsl_item_hdr *item, void *priv)
{
	if (!nslm_agg_take(item))
		nslm_ring_deliver(item, priv);
}

static const struct nsl_receiver receiver = {
	.admit = nslm_filter_admit,
	.deliver = nslm_deliver,
};

static DEFINE_MUTEX(collect_mutex);
static bool collecting;		/* collect_mutex */

void nslm_receiver_collect(bool on)
{
	mutex_lock(&collect_mutex);
	if (on != collecting) {
		nsl_set_active(on);
		if (!on)
			synchronize_rcu();
		collecting = on;
	}
	mutex_unlock(&collect_mutex);
}

int nslm_receiver_init(bool collect)
{
	int ret;

	ret = nsl_register(&receiver);
	if (ret)
		return ret;
	nslm_receiver_collect(collect);
	return 0;
}

void nslm_receiver_uninit(void)
{
	nslm_receiver_collect(false);
	/* Waits for every deliver() still running. */
	nsl_unregister(&receiver);
}
