// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: the receive side.  A driver's NAPI poll marks where its
 * work on each packet began, so that a driver without an NSI of its own
 * still shows rx-nic; the stack's taking the skb ends rx-nic and opens
 * rx-link; a device whose xmit hands the skb to a receive path (veth)
 * ends the block's nic there.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/export.h>

#include "core.h"
#include "record.h"

/*
 * While a driver's NAPI poll runs on this CPU: the TSC at which it began
 * or last got back from handing a packet to the stack; 0 outside a poll
 * (NET_SLICE_POLL_END clears it whether NetSlice is on or not, so a mark
 * never outlives its poll).  Written and read by that CPU only, in the
 * softirq that runs the poll.
 */
DEFINE_PER_CPU(u64, nsl_poll_mark);
EXPORT_PER_CPU_SYMBOL_GPL(nsl_poll_mark);

void __nsl_poll_begin(void)
{
	this_cpu_write(nsl_poll_mark, nsl_now());
}
EXPORT_SYMBOL_GPL(__nsl_poll_begin);

/* A hand-off returned: the driver's work on its next packet starts. */
void __nsl_rx_done(void)
{
	if (this_cpu_read(nsl_poll_mark))
		this_cpu_write(nsl_poll_mark, nsl_now());
}
EXPORT_SYMBOL_GPL(__nsl_rx_done);

/*
 * A packet from a driver without an NSI of its own (any NAPI driver but
 * e1000, and e1000 when NSI chooses): its rx-nic is what the poll did
 * since it began or last handed a packet over (or since e1000's NSI) --
 * reading the descriptor, building the skb.  Duration mode only: counters
 * cannot be read back in time.
 */
static void nsl_rx_nic_since_poll(struct nsl_skb_block *b)
{
	u64 mark = this_cpu_read(nsl_poll_mark);

	if (!mark || b->blk.nevents ||
	    !test_bit(NSL_ST_ELIGIBLE, &b->state))
		return;
	b->blk.tsc0 = mark;
	nsl_start_block(b, NSL_R_RX_NIC, mark);
}

/*
 * The stack takes a received skb.  Drivers that are not instrumented give
 * it no block: it gets one here.  Over loopback the sent skb's block
 * carries on into the receive path.
 */

void __nsl_rx(struct sk_buff *skb)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_block_of(skb);
	struct nsl_block *blk;
	u8 picked;

	if (!b) {
		if (!nsl_pick_rx(skb, &picked))
			return;
		b = nsl_init_block(skb, NSL_DIR_RX, picked);
		if (!b)
			return;
		/*
		 * Its NSI read the TSC after @now: its steps start there,
		 * not before it (a step before NSI has no entry in a log).
		 */
		now = b->blk.tsc0;
		nsl_rx_nic_since_poll(b);
	} else if (!b->picked) {
		/*
		 * A driver's own NSI made it before the headers were known
		 * (e1000): the choice is made now, and a packet passed over
		 * loses its block before anything else is written to it.
		 */
		if (!nsl_pick_rx(skb, &picked)) {
			clear_bit(NSL_ST_ELIGIBLE, &b->state);
			skb_ext_del(skb, SKB_EXT_NETSLICE);
			return;
		}
		b->picked = picked;
	}
	if (!test_bit(NSL_ST_ELIGIBLE, &b->state))
		return;
	blk = &b->blk;
	blk->flags |= NSL_BF_RX;
	if (blk->dir == NSL_DIR_RX) {
		blk->ifindex = skb->dev ? skb->dev->ifindex : 0;
		blk->len = skb->len;
	}
	nsl_stop_block(b, NSL_R_RX_NIC, now);
	nsl_start_dev(b, NSL_R_RX_LINK, now,
		      nsl_join_dev(b, skb->dev, NSL_DIR_RX));
}
EXPORT_SYMBOL_GPL(__nsl_rx);

/*
 * A driver hands a new skb to the stack by a way the stack also uses for
 * skbs it already knows (netif_receive_skb() from a bridge, a tunnel):
 * only an skb without a block, and not passed over at send, is a driver's
 * new packet (as NET_SLICE_RX() tests it, nsl_rx_hook()).
 */
void __nsl_rx_new(struct sk_buff *skb)
{
	if (!nsl_block_of(skb) && !nsl_passed(skb))
		__nsl_rx(skb);
}
EXPORT_SYMBOL_GPL(__nsl_rx_new);

/*
 * A device's xmit hands @skb to a receive path (veth, dev_forward_skb):
 * the skb goes on, its block with it, as over loopback; the driver's part
 * (nic) ends here, and __nsl_rx() opens the receive side.
 */
void __nsl_forward(struct sk_buff *skb)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_owned_block(skb);

	if (!b)
		return;
	nsl_stop_block(b, NSL_R_NIC, now);
	b->blk.flags |= NSL_BF_FORWARDED;
}
EXPORT_SYMBOL_GPL(__nsl_forward);

void __nsl_coalesced(struct sk_buff *skb)
{
	struct nsl_skb_block *b = nsl_owned_block(skb);

	if (b)
		b->blk.flags |= NSL_BF_COALESCED;
}
EXPORT_SYMBOL_GPL(__nsl_coalesced);

/*
 * TCP collapsed the queue @skb was in, its data copied into a new skb
 * that has no block: the queue region ends, and the block is COALESCED,
 * with no copy of its own.
 */
void __nsl_collapsed(struct sk_buff *skb)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_owned_block(skb);

	if (!b)
		return;
	nsl_stop_block(b, NSL_R_QUEUE, now);
	b->blk.flags |= NSL_BF_COALESCED;
}
EXPORT_SYMBOL_GPL(__nsl_collapsed);
