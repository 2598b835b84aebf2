// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: the transmit side.  TCP's write-queue skb carries a
 * template, forked onto the clone each transmission hands to IP; a
 * datagram's first skb gets a block of its own.  At the device: a copy's
 * own block (a mirror, a bridge's flood), the hand-off to the driver, and
 * one block per segment where software GSO splits a packet.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/export.h>
#include <linux/string.h>
#include <linux/in.h>
#include <linux/socket.h>
#include <linux/sock_diag.h>
#include <net/flow.h>
#include <net/tcp.h>

#include "core.h"
#include "record.h"

/* __nsl_init_sk() where a filter, sampling or a pause chooses. */
static noinline void nsl_init_sk_chosen(struct sk_buff *skb, struct sock *sk)
{
	u8 picked;

	if (nsl_pick_sk(sk, &picked))
		nsl_init_block(skb, NSL_DIR_TX, picked);
	else
		nsl_pass(skb);
}

/*
 * A socket's new skb to send: a block if the filter and sampling say so.
 * Where every packet gets one, nsl_pick_sk()'s answer is known with no
 * call and no frame.
 */
void __nsl_init_sk(struct sk_buff *skb, struct sock *sk)
{
	if (likely(!nsl_pick_on()))
		nsl_init_block(skb, NSL_DIR_TX, NSL_PK_SEEN | NSL_PK_SAMPLE);
	else
		nsl_init_sk_chosen(skb, sk);
}
EXPORT_SYMBOL_GPL(__nsl_init_sk);

/*
 * @skb enters a device's queue holding a block another skb holds too, and
 * is not the skb that block went to a driver with: a copy (a tc mirred
 * mirror, a bridge or bond flooding clones, netfilter's TEE) on its own
 * way to a driver.  It gets a private copy of the block before writing
 * anything, so that the two transmissions never write one block: flagged
 * COPY, what was closed before the copy SHARED (counted in the other
 * block), the regions still open going on in each, each copy emitted by
 * its own skb.  The copy inherits the other skb's hand-off to an upper
 * device (a bridge's nic region), which its own hand-off ends.
 *
 * skb_ext_add()'s copy-on-write hands the emission to one of the two
 * (nsl_ext_cow()); here both keep their own.  The other holder may be
 * freed meanwhile on another CPU (a multicast's looped-back clone), so
 * the old extension is held across the copy: the copy is always made,
 * and @ob is ours to write until the hold is put back -- which emits it
 * if the other holder has gone.
 */
struct nsl_skb_block *nsl_copy_at_link(struct sk_buff *skb,
				       struct nsl_skb_block *ob)
{
	bool emitted = test_bit(NSL_ST_EMITTED, &ob->state);
	struct skb_ext *old = skb->extensions;
	bool handed = ob->owner;
	struct nsl_skb_block *b;

	refcount_inc(&old->refcnt);
	b = skb_ext_add(skb, SKB_EXT_NETSLICE);
	if (unlikely(!b)) {
		__skb_ext_put(old);
		this_cpu_inc(nsl_nomem_count);
		return NULL;
	}
	if (!emitted)
		clear_bit(NSL_ST_EMITTED, &ob->state);
	__skb_ext_put(old);
	nsl_share(b);
	b->blk.flags |= NSL_BF_COPY;
	b->state = BIT(NSL_ST_ELIGIBLE);
	b->owner = handed ? skb : NULL;
	return b;
}

/*
 * The data waited in the TCP write queue from the end of its first copy in
 * sendmsg() until now: a GAP record (nsl_gap_record()), or in a log the
 * step the replay makes it from.
 */
static void nsl_sndq_gap(struct nsl_skb_block *b, u64 now)
{
	if (nsl_log_put_other(b, NSL_LOG_GAP, NSL_R_SNDQ, now))
		return;
	nsl_records_now(b);
	nsl_gap_record(&b->blk, b->nopen, NET_SLICE_CONF,
		       raw_smp_processor_id(), now);
}

/*
 * Whether the first transmission may take the template itself rather than
 * a copy: @skb is the write-queue skb's fast clone, and the two are all
 * that hold the extension, which holds the block alone.  The write
 * queue's skb then keeps it only for SENT and RETRANS, which no record
 * needs; a later transmission starts a block of its own.
 */
static bool nsl_can_lend(const struct sk_buff *skb)
{
	return skb->fclone == SKB_FCLONE_CLONE &&
	       skb->active_extensions == BIT(SKB_EXT_NETSLICE) &&
	       refcount_read(&skb->extensions->refcnt) == 2;
}

/*
 * A block of its own for @skb, a later transmission of a template the
 * first one took (NSL_ST_LENT): that block may still be on its way, and
 * the write queue's hold must not hand it over.  @skb lets go of it and
 * gets a new one, with what NSI decided for the packet.
 */
static struct nsl_skb_block *nsl_unlend(struct sk_buff *skb,
					const struct nsl_skb_block *tmpl)
{
	u8 picked = tmpl->picked;

	/*
	 * Another extension came since: a copy, as for a template not
	 * lent.  (Only the write queue's skb could have added one, after
	 * its clone was freed; TCP adds none there.)
	 */
	if (skb->active_extensions != BIT(SKB_EXT_NETSLICE))
		return skb_ext_add(skb, SKB_EXT_NETSLICE);
	__skb_ext_del(skb, SKB_EXT_NETSLICE);
	return nsl_init_block(skb, NSL_DIR_TX, picked);
}

/*
 * @skb is the skb TCP hands to IP (a clone of the write-queue skb, sharing
 * its template).  The first transmission takes the template itself where
 * it can (nsl_can_lend()); else, and for every later one, @skb gets a
 * private copy.  That block is what gets emitted; its tcp region starts.
 */
void __nsl_tx_fork(struct sk_buff *skb, struct sock *sk)
{
	struct nsl_skb_block *tmpl = nsl_block_known(skb);
	struct nsl_skb_block *b;
	bool sent, retrans;
	unsigned long flow;
	u64 now;

	sent = test_and_set_bit(NSL_ST_SENT, &tmpl->state);
	retrans = test_and_clear_bit(NSL_ST_RETRANS, &tmpl->state);
	if (!sent && !retrans && nsl_can_lend(skb))
		b = tmpl;
	else if (test_bit(NSL_ST_LENT, &tmpl->state))
		b = nsl_unlend(skb, tmpl);
	else
		b = skb_ext_add(skb, SKB_EXT_NETSLICE);
	if (unlikely(!b)) {
		this_cpu_inc(nsl_nomem_count);
		return;
	}
	now = nsl_now();
	if (!sent && !retrans)
		nsl_sndq_gap(b, now);
	if (sent || retrans) {
		/*
		 * A retransmission, or a new attempt after a transmission
		 * that failed (a qdisc drop, say), which TCP does not count
		 * as one: its own block, timed from now.
		 */
		nsl_records_reset(b);
		b->blk.flags = retrans ? NSL_BF_RETRANS : NSL_BF_RESENT;
		b->blk.tsc0 = now;
		b->blk.hdr.cpu = raw_smp_processor_id();
		nsl_start_block(b, NSL_R_WRITE, now);
	}
	b->blk.conn = nsl_conn(sk);
	b->blk.tcp_seq = TCP_SKB_CB(skb)->seq;
	b->blk.proto = IPPROTO_TCP;
	flow = nsl_flow_sk(&b->blk, sk) ? BIT(NSL_ST_FLOW) : 0;
	b->owner = NULL;
	/* The write queue's hold reads SENT and LENT; no one else does. */
	b->state = (b == tmpl ? BIT(NSL_ST_ELIGIBLE) | BIT(NSL_ST_SENT) |
				BIT(NSL_ST_LENT) : BIT(NSL_ST_ELIGIBLE)) | flow;
	nsl_seal(b);
	if (unlikely(nsl_records_on()) && skb->len)
		nsl_event(sk, NULL, NSL_EV_TCP_SEND, skb->len, now,
			  b->blk.conn, tcp_skb_pcount(skb) > 1 ? NSL_EVF_TSO : 0);
	/* tcp_transmit_skb() builds the header next: the tcp region. */
	if (!nsl_stage_stops_macro())
		nsl_start_block(b, NSL_R_TCP, NSL_NOW);
}
EXPORT_SYMBOL_GPL(__nsl_tx_fork);

/* @skb (a write-queue skb) is retransmitted next, as TCP counts it. */
void __nsl_tx_retrans(struct sk_buff *skb)
{
	struct nsl_skb_block *tmpl = nsl_block_of(skb);

	if (tmpl)
		set_bit(NSL_ST_RETRANS, &tmpl->state);
}
EXPORT_SYMBOL_GPL(__nsl_tx_retrans);

/*
 * @skb is a copy of a packet whose block went to another driver already
 * (a bridge's flooded clone, a tc mirror): its own block from here on.
 * What was measured before the copy is counted in the other block
 * (SHARED); a nic region the other transmission left running is its, not
 * this one's, and is closed here as shared.
 */
static struct nsl_skb_block *nsl_copy_for(struct sk_buff *skb)
{
	struct nsl_skb_block *b = skb_ext_add(skb, SKB_EXT_NETSLICE);
	unsigned int i;

	if (unlikely(!b)) {
		this_cpu_inc(nsl_nomem_count);
		return NULL;
	}
	nsl_records_now(b);
	for (i = 0; i < b->blk.nrec; i++) {
		struct nsl_record *r = &b->blk.rec[i];

		if (r->region != NSL_R_NIC || !(r->flags & NSL_RF_OPEN))
			continue;
		r->flags &= ~NSL_RF_OPEN;
		r->ticks = 0;
	}
	nsl_recount_open(b);
	nsl_block_share(&b->blk);
	b->blk.flags |= NSL_BF_COPY;
	b->state = BIT(NSL_ST_ELIGIBLE);
	b->owner = NULL;
	return b;
}

/*
 * @skb enters the driver of @dev: the stack's part is over.  Besides the
 * plain case:
 *  - the skb that reached a driver comes again to the same device: it was
 *    requeued (NETDEV_TX_BUSY) and keeps its first nic START;
 *  - it comes to another device with its nic region running: an upper
 *    device (vlan, bond, bridge) handed it down, and the upper's nic ends
 *    here, the lower device's link having run inside it;
 *  - another skb than the one that reached a driver first: a copy, with a
 *    block of its own (nsl_copy_for());
 *  - a received packet (or one that crossed a veth) sent on: its receive
 *    path's link region ends here (bridging, forwarding).
 */
void __nsl_xmit(struct sk_buff *skb, struct net_device *dev)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_block_known(skb);
	struct nsl_block *blk;
	int off;

	if (!test_bit(NSL_ST_ELIGIBLE, &b->state))
		return;
	if (b->owner && b->owner != skb) {
		b = nsl_copy_for(skb);
		if (!b)
			return;
	} else if (b->owner == skb && nsl_region_open(b, NSL_R_NIC)) {
		if (b->blk.ifindex == dev->ifindex)
			return;
		nsl_stop_block(b, NSL_R_QDISC, now);
		nsl_stop_block(b, NSL_R_LINK, now);
		nsl_stop_block(b, NSL_R_NIC, now);
	}
	blk = &b->blk;
	nsl_stop_block(b, NSL_R_QDISC, now);
	/*
	 * Every queue the skb was in ends at its hand-off: a copy made in
	 * another device's queue (a mirror) carries that device's open
	 * link too.
	 */
	while (nsl_stop_block(b, NSL_R_LINK, now))
		;
	nsl_stop_block(b, NSL_R_WRITE, now);
	nsl_stop_block(b, NSL_R_RX_LINK, now);
	b->owner = skb;
	blk->ifindex = dev->ifindex;
	/* From the network header on, as a received packet's length is. */
	off = skb_network_offset(skb);
	blk->len = off > 0 && off < skb->len ? skb->len - off : skb->len;
	blk->gso_segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	if (test_bit(NSL_ST_FLOW, &b->state)) {
		/* The socket's flow (the fork's): the headers' lengths. */
		blk->nhlen = skb_network_header_len(skb);
		blk->thlen = tcp_hdrlen(skb);
	} else {
		nsl_flow(blk, skb);
	}
	if (dev->flags & IFF_LOOPBACK)
		blk->flags |= NSL_BF_LOOPBACK;
	if (unlikely(nsl_records_on()) && blk->conn)
		nsl_event(skb->sk, skb, NSL_EV_DEV_SEND, skb->len, now,
			  blk->conn, skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	nsl_start_block(b, NSL_R_NIC, NSL_NOW);
}
EXPORT_SYMBOL_GPL(__nsl_xmit);

/*
 * Software GSO made @segs out of @orig: one block per segment, a copy
 * (nsl_ext_copy(), a log where the super-packet kept one), what was
 * closed before SHARED in all but the first (nsl_share()).
 */
void __nsl_gso_segmented(struct sk_buff *orig, struct sk_buff *segs)
{
	struct nsl_skb_block *ob = nsl_block_of(orig);
	struct sk_buff *seg;
	bool first = true;

	if (!ob || !test_bit(NSL_ST_ELIGIBLE, &ob->state))
		return;
	skb_list_walk_safe(segs, seg, segs) {
		struct nsl_skb_block *b = nsl_block_of(seg);

		if (b != ob)
			continue;
		b = skb_ext_add(seg, SKB_EXT_NETSLICE);
		if (unlikely(!b)) {
			this_cpu_inc(nsl_nomem_count);
			continue;
		}
		/* Each segment's copy is emitted, whatever the copying did. */
		b->state = BIT(NSL_ST_ELIGIBLE);
		b->blk.flags |= NSL_BF_GSO;
		/*
		 * Segmented before the driver (a qdisc, validate_xmit_skb):
		 * __nsl_xmit() gives each segment its owner.  Segmented by
		 * the driver itself, or on receive (udp_rcv_segment): each
		 * segment owns its copy now, the nic region still open.
		 */
		b->owner = ob->owner ? seg : NULL;
		/* The first segment carries what the super-packet measured. */
		if (!first)
			nsl_share(b);
		first = false;
	}
	/* The super-packet itself never reaches a driver. */
	set_bit(NSL_ST_DEAD, &ob->state);
}
EXPORT_SYMBOL_GPL(__nsl_gso_segmented);

/*
 * The first skb of a datagram (UDP over IPv4 or IPv6; its later fragments,
 * if any, travel in its frag_list): a block that is emitted itself -- no
 * write queue, no template -- with write open from here to the driver.
 * Its flow is the route's (@f), which a connected socket's peer need not
 * be: sendto() names its own.
 */
static void nsl_dgram(struct sk_buff *skb, struct sock *sk,
		      const struct nsl_filter_flow *f)
{
	struct nsl_skb_block *b;
	u8 picked;

	if (!nsl_pick_flow(f, &picked)) {
		nsl_pass(skb);
		return;
	}
	b = nsl_init_block(skb, NSL_DIR_TX, picked);
	if (!b)
		return;
	b->blk.conn = nsl_conn(sk);
	b->blk.proto = sk->sk_protocol;
	b->state = BIT(NSL_ST_ELIGIBLE);
	nsl_start_block(b, NSL_R_WRITE, b->blk.tsc0);
}

static bool nsl_udp(const struct sock *sk)
{
	return sk->sk_protocol == IPPROTO_UDP ||
	       sk->sk_protocol == IPPROTO_UDPLITE;
}

/* The route's flow of a datagram, @alen bytes of address (4 or 16). */
static void nsl_dgram_route(struct sk_buff *skb, struct sock *sk, u16 family,
			    const void *saddr, const void *daddr,
			    unsigned int alen, __be16 sport, __be16 dport)
{
	struct nsl_filter_flow f = {
		.family = family,
		.proto = sk->sk_protocol,
		.sport = ntohs(sport),
		.dport = ntohs(dport),
	};

	if (!nsl_udp(sk))
		return;
	memcpy(f.saddr, saddr, alen);
	memcpy(f.daddr, daddr, alen);
	nsl_dgram(skb, sk, &f);
}

void __nsl_dgram(struct sk_buff *skb, struct sock *sk,
		 const struct flowi4 *fl4)
{
	nsl_dgram_route(skb, sk, AF_INET, &fl4->saddr, &fl4->daddr, 4,
			fl4->fl4_sport, fl4->fl4_dport);
}
EXPORT_SYMBOL_GPL(__nsl_dgram);

void __nsl_dgram6(struct sk_buff *skb, struct sock *sk,
		  const struct flowi6 *fl6)
{
	nsl_dgram_route(skb, sk, AF_INET6, &fl6->saddr, &fl6->daddr, 16,
			fl6->fl6_sport, fl6->fl6_dport);
}
EXPORT_SYMBOL_GPL(__nsl_dgram6);
