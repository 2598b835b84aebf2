// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: a block's end and the way out.  A block is emitted
 * exactly once: by NSE when the skb that owns it is freed, or when the
 * last reference to its extension goes away.  Blocks and event records
 * go to the one registered receiver, under RCU.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/if_ether.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/export.h>
#include <linux/string.h>

#include "core.h"
#include "record.h"

/* On while a receiver is registered and collection is enabled. */
struct static_key_false nsl_active = STATIC_KEY_FALSE_INIT;
EXPORT_SYMBOL_GPL(nsl_active);

/* Registered receiver; written under nsl_reg_lock, read under RCU. */
static const struct nsl_receiver __rcu *nsl_rcv;
static DEFINE_MUTEX(nsl_reg_lock);

/* Each CPU counts its own; nsl_emitted() and nsl_nomem() sum them unlocked. */
static DEFINE_PER_CPU(u64, nsl_emit_count);
DEFINE_PER_CPU(u64, nsl_nomem_count);

const struct nsl_receiver *nsl_receiver(void)
{
	return rcu_dereference(nsl_rcv);
}

/*
 * A block is chosen with its whole flow (what NSI left undecided), and
 * leaves with its addresses only when the reader asked for them.
 */
static __always_inline bool nsl_block_leaves(struct nsl_skb_block *b)
{
	struct nsl_block *blk = &b->blk;

	if (!nsl_pick_emit(blk, b->picked))
		return false;
	if (!nsl_flow_addr_on()) {
		memset(blk->saddr, 0, sizeof(blk->saddr));
		memset(blk->daddr, 0, sizeof(blk->daddr));
	}
	return true;
}

/* nsl_deliver(), inline where the caller knows whether @b is a block. */
static __always_inline void nsl_deliver_item(struct nsl_item_hdr *item,
					     struct nsl_skb_block *b)
{
	const struct nsl_receiver *rcv;

	rcu_read_lock();
	rcv = rcu_dereference(nsl_rcv);
	if (!rcv)
		goto out;
	this_cpu_inc(nsl_emit_count);
	if (b && !nsl_block_leaves(b))
		goto out;
	rcv->deliver(item, rcv->priv);
out:
	rcu_read_unlock();
}

void nsl_deliver(struct nsl_item_hdr *item, struct nsl_skb_block *b)
{
	nsl_deliver_item(item, b);
}

static void nsl_emit(struct nsl_skb_block *b)
{
	const unsigned long st = BIT(NSL_ST_ELIGIBLE) | BIT(NSL_ST_DEAD) |
				 BIT(NSL_ST_EMITTED);
	struct nsl_block *blk = &b->blk;

	/*
	 * The state read once for what needs no atomic: most blocks NSE or
	 * the extension's release sees are emitted already (another holder's).
	 */
	if (nsl_stage_below(NSL_STAGE_FULL) ||
	    (READ_ONCE(b->state) & st) != BIT(NSL_ST_ELIGIBLE) ||
	    test_and_set_bit(NSL_ST_EMITTED, &b->state))
		return;
	/*
	 * Not transmitted: no driver ever had it, or a device's queue took it
	 * after an upper device's driver had (a stacked device's, a bridge
	 * flood's copy) and dropped it there, its link still open.
	 */
	if (blk->dir == NSL_DIR_TX &&
	    (!b->owner || nsl_region_open(b, NSL_R_LINK)))
		blk->flags |= NSL_BF_NOXMIT;
	blk->hdr.size = nsl_block_bytes(b);
	nsl_deliver_item(&blk->hdr, b);
}

/*
 * A received frame freed (@skb) with its link region open ends in link:
 * an IP frame there was merged by GRO into another skb and freed; any
 * other (ARP, say) was consumed by its protocol, which has no region of
 * its own.  With no skb left (@skb NULL) it was GRO's stolen head, the
 * data living on in the merged skb.
 */
static noinline void nsl_rx_absorbed_slow(struct nsl_skb_block *b, u64 now,
					  const struct sk_buff *skb)
{
	if (!nsl_region_open(b, NSL_R_RX_LINK))
		return;
	nsl_stop_block(b, NSL_R_RX_LINK, now);
	if (!skb || skb->protocol == htons(ETH_P_IP) ||
	    skb->protocol == htons(ETH_P_IPV6))
		b->blk.flags |= NSL_BF_ABSORBED;
}

/* Most blocks have no link region open as they go: no call for them. */
static __always_inline void nsl_rx_absorbed(struct nsl_skb_block *b, u64 now,
					    const struct sk_buff *skb)
{
	if (b->blk.dir == NSL_DIR_RX && nsl_region_open(b, NSL_R_RX_LINK))
		nsl_rx_absorbed_slow(b, now, skb);
}

/*
 * A received packet freed in a backlog (dropped, or coalesced into the one
 * before it) ends there; one TCP consumes itself (an ACK) ends in tcp, one
 * UDP drops (a full receive buffer) in udp.
 */
static noinline void nsl_rx_ends_slow(struct nsl_skb_block *b, u64 now)
{
	nsl_stop_block(b, NSL_R_BACKLOG, now);
	nsl_stop_block(b, NSL_R_SK_BACKLOG, now);
	nsl_stop_block(b, NSL_R_RX_TCP, now);
	nsl_stop_block(b, NSL_R_RX_UDP, now);
}

/* Most blocks have none of those regions open: no call for them. */
static __always_inline void nsl_rx_ends(struct nsl_skb_block *b, u64 now)
{
	if ((b->blk.flags & NSL_BF_RX) &&
	    (b->open.last[NSL_R_BACKLOG] | b->open.last[NSL_R_SK_BACKLOG] |
	     b->open.last[NSL_R_RX_TCP] | b->open.last[NSL_R_RX_UDP]))
		nsl_rx_ends_slow(b, now);
}

/*
 * NSE: the skb is being freed, the owner of a block not emitted yet
 * (nsl_exit_hook() tested both).
 */
void __nsl_exit(struct sk_buff *skb)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_block_known(skb);

	nsl_stop_block(b, NSL_R_NIC, now);
	nsl_rx_ends(b, now);
	nsl_rx_absorbed(b, now, skb);
	/* What a received packet was, read from its headers as it goes. */
	if (b->blk.dir == NSL_DIR_RX)
		nsl_flow(&b->blk, skb);
	nsl_emit(b);
}
EXPORT_SYMBOL_GPL(__nsl_exit);

/*
 * NSE as calibration times it: the same steps, with the block copied to
 * @dst instead of delivered.
 */
void nsl_exit_copy(struct sk_buff *skb, struct nsl_block *dst)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_block_of(skb);

	if (!b)
		return;
	nsl_stop_block(b, NSL_R_NIC, now);
	if (test_and_set_bit(NSL_ST_EMITTED, &b->state))
		return;
	b->blk.hdr.size = nsl_block_bytes(b);
	rcu_read_lock();
	memcpy(dst, &b->blk, b->blk.hdr.size);
	rcu_read_unlock();
	clear_bit(NSL_ST_EMITTED, &b->state);
}

/* The last reference to the extension holding @ptr is going away. */
void nsl_ext_release(struct skb_ext *ext, void *ptr)
{
	struct nsl_skb_block *b = ptr;
	u64 now = nsl_now();

	if (nsl_emitted_already(b))
		return;
	if (b->owner)
		nsl_stop_block(b, NSL_R_NIC, now);
	nsl_rx_ends(b, now);
	nsl_rx_absorbed(b, now, NULL);
	nsl_emit(b);
}

int nsl_register(const struct nsl_receiver *rcv)
{
	int ret = 0;

	if (!rcv || !rcv->deliver)
		return -EINVAL;
	mutex_lock(&nsl_reg_lock);
	if (rcu_dereference_protected(nsl_rcv, lockdep_is_held(&nsl_reg_lock)))
		ret = -EBUSY;
	else
		rcu_assign_pointer(nsl_rcv, rcv);
	mutex_unlock(&nsl_reg_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(nsl_register);

void nsl_unregister(const struct nsl_receiver *rcv)
{
	mutex_lock(&nsl_reg_lock);
	if (rcu_dereference_protected(nsl_rcv,
				      lockdep_is_held(&nsl_reg_lock)) == rcv) {
		static_branch_disable(&nsl_active);
		RCU_INIT_POINTER(nsl_rcv, NULL);
	}
	mutex_unlock(&nsl_reg_lock);
	/* Every deliver() in flight has returned after this. */
	synchronize_rcu();
}
EXPORT_SYMBOL_GPL(nsl_unregister);

void nsl_set_active(bool on)
{
	mutex_lock(&nsl_reg_lock);
	if (on && rcu_dereference_protected(nsl_rcv,
					    lockdep_is_held(&nsl_reg_lock))) {
		static_branch_enable(&nsl_active);
	} else if (static_key_enabled(&nsl_active)) {
		/* The extensions kept for blocks are not needed now. */
		static_branch_disable(&nsl_active);
		skb_ext_netslice_drain();
	}
	mutex_unlock(&nsl_reg_lock);
}
EXPORT_SYMBOL_GPL(nsl_set_active);

static u64 nsl_sum(u64 __percpu *counter)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(counter, cpu);
	return sum;
}

u64 nsl_emitted(void)
{
	return nsl_sum(&nsl_emit_count);
}
EXPORT_SYMBOL_GPL(nsl_emitted);

/* Blocks lost because no skb extension could be allocated. */
u64 nsl_nomem(void)
{
	return nsl_sum(&nsl_nomem_count);
}
EXPORT_SYMBOL_GPL(nsl_nomem);
