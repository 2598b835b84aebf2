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
 *
 * Off pauses NSI (nsl_pick_pause()) and leaves the hooks on: turning them
 * off patches every hook site, a cost the reader's drain should not carry.
 * They go off when the reader closes the device, or the module goes,
 * with nothing collecting (nslm_receiver_idle()).
 */

#include <linux/mutex.h>
#include <linux/netslice.h>
#include <linux/rcupdate.h>

#include "agg.h"
#include "filter.h"
#include "receiver.h"
#include "ring.h"

/* Aggregate mode folds a block, or lets it into the ring whole. */
static noinline void nslm_deliver_agg(const struct nsl_item_hdr *item,
				      void *priv)
{
	if (!nslm_agg_take(item))
		nslm_ring_deliver(item, priv);
}

/* Both ways a tail call: a block for the ring saves no register. */
static void nslm_deliver(const struct nsl_item_hdr *item, void *priv)
{
	if (unlikely(nslm_agg_on()))
		nslm_deliver_agg(item, priv);
	else
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
		nsl_pick_pause(!on);
		if (on)
			nsl_set_active(true);
		else
			synchronize_rcu();
		collecting = on;
	}
	mutex_unlock(&collect_mutex);
}

/* The hooks off, if nothing collects: NSI is paused, or was never on. */
void nslm_receiver_idle(void)
{
	mutex_lock(&collect_mutex);
	if (!collecting) {
		nsl_set_active(false);
		nsl_pick_pause(false);
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
	nslm_receiver_idle();
	/* Waits for every deliver() still running. */
	nsl_unregister(&receiver);
}
