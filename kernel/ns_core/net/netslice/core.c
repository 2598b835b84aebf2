// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: the measurement block of an skb and its regions.
 *
 * A block lives in the skb extension SKB_EXT_NETSLICE.  On the send path
 * tcp_sendmsg() gives a new skb a block (NSI); that block is a template
 * that stays with the skb in the write queue.  Each transmission of the
 * skb forks it: the clone handed to IP gets a private copy, which is the
 * block that is eventually emitted, exactly once, when the skb that
 * reached the driver is freed (NSE) -- or, failing that, when the last
 * reference to the extension goes away.
 *
 * Writers never copy-on-write: between forks a block has a single writer
 * (the socket owner before transmission, the transmitting context after),
 * and clones made by taps only read it.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/export.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/timex.h>
#include <net/tcp.h>
#ifdef CONFIG_X86_TSC
#include <asm/tsc.h>
#endif
#include <linux/sock_diag.h>
#include <net/flow.h>

#include "core.h"
#include "record.h"

/* On while a receiver is registered and collection is enabled. */
struct static_key_false nsl_active = STATIC_KEY_FALSE_INIT;
EXPORT_SYMBOL_GPL(nsl_active);

/* Registered receiver; written under nsl_reg_lock, read under RCU. */
static const struct nsl_receiver __rcu *nsl_rcv;
static DEFINE_MUTEX(nsl_reg_lock);

static DEFINE_PER_CPU(u64, nsl_emit_count);
static DEFINE_PER_CPU(u64, nsl_nomem_count);

/*
 * The stage a block's life stops at (enum nsl_stage).  The key is off,
 * each test of it a NOP, unless a bench set a stage short of the full
 * one; nsl_stage_lock serialises setters, readers read it once per test.
 */
static DEFINE_STATIC_KEY_FALSE(nsl_staged);
static DEFINE_MUTEX(nsl_stage_lock);
static enum nsl_stage nsl_stage = NSL_STAGE_FULL;

/* Whether blocks stop short of @stage (only ever in the cost bench). */
static __always_inline bool nsl_stage_below(enum nsl_stage stage)
{
	return static_branch_unlikely(&nsl_staged) &&
	       READ_ONCE(nsl_stage) < stage;
}

/*
 * An NSS or NST in a stage short of records does nothing more (true),
 * having read the TSC in the clock stage.
 */
static __always_inline bool nsl_stage_stops_macro(void)
{
	if (!nsl_stage_below(NSL_STAGE_RECORDS))
		return false;
	if (!nsl_stage_below(NSL_STAGE_CLOCK))
		nsl_now();
	return true;
}

u32 nsl_tsc_khz(void)
{
#ifdef CONFIG_X86_TSC
	return tsc_khz;
#else
	return 0;
#endif
}
EXPORT_SYMBOL_GPL(nsl_tsc_khz);

static inline struct nsl_skb_block *nsl_block_of(const struct sk_buff *skb)
{
	return skb_ext_find(skb, SKB_EXT_NETSLICE);
}

/*
 * A new block for @skb, with what NSI decided of it (@picked, NSL_PK_*),
 * returned so that the caller need not look it up again; NULL without
 * memory.
 */
static struct nsl_skb_block *nsl_init_block(struct sk_buff *skb, int dir,
					    u8 picked)
{
	struct nsl_skb_block *b;
	struct nsl_block *blk;

	if (nsl_stage_below(NSL_STAGE_CARRY))
		return NULL;
	b = skb_ext_add(skb, SKB_EXT_NETSLICE);
	if (unlikely(!b)) {
		this_cpu_inc(nsl_nomem_count);
		return NULL;
	}
	blk = &b->blk;
	memset(blk, 0, offsetof(struct nsl_block, rec));
	blk->hdr.kind = NSL_ITEM_BLOCK;
	blk->tsc0 = nsl_now();
	blk->dir = dir;
	blk->gso_segs = 1;
	b->gen = 0;
	blk->nevents = nsl_counters_nevents(&b->gen);
	blk->mode = blk->nevents ? NSL_MODE_COUNT : NSL_MODE_DURATION;
	blk->hdr.cpu = raw_smp_processor_id();
	/* A received skb is its own block's owner from the start. */
	b->owner = dir == NSL_DIR_RX ? skb : NULL;
	b->state = dir == NSL_DIR_RX ? BIT(NSL_ST_ELIGIBLE) : 0;
	b->nopen = 0;
	memset(b->open_cnt, 0, sizeof(b->open_cnt));
	b->sealed = false;
	b->picked = picked;
	return b;
}

void __nsl_init(struct sk_buff *skb, int dir)
{
	/*
	 * A driver's NSI (e1000's) comes before the headers are known.  When
	 * a filter or sampling chooses at NSI, a block made here would be
	 * made for the frames passed over too, an allocation each: the frame
	 * gets only the poll's mark, and __nsl_rx() makes the block of one
	 * picked, its rx-nic from this mark, as for any NAPI driver.
	 */
	if (dir == NSL_DIR_RX && nsl_pick_on()) {
		this_cpu_write(nsl_poll_mark, nsl_now());
		return;
	}
	nsl_init_block(skb, dir, 0);
}
EXPORT_SYMBOL_GPL(__nsl_init);

/* A socket's new skb to send: a block if the filter and sampling say so. */
void __nsl_init_sk(struct sk_buff *skb, struct sock *sk)
{
	u8 picked;

	if (nsl_pick_sk(sk, &picked))
		nsl_init_block(skb, NSL_DIR_TX, picked);
}
EXPORT_SYMBOL_GPL(__nsl_init_sk);

/*
 * A copy of a block for one part of a split skb.  The records closed
 * before the split are one measurement: the copy flags them SHARED so that
 * a sum over blocks counts each once.  Records still open go on in each
 * part and end separately.
 */
static void nsl_mark_shared(struct nsl_block *blk)
{
	unsigned int i;

	for (i = 0; i < blk->nrec; i++)
		if (!(blk->rec[i].flags & NSL_RF_OPEN))
			blk->rec[i].flags |= NSL_RF_SHARED;
}

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
static struct nsl_skb_block *nsl_copy_at_link(struct sk_buff *skb,
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
	nsl_mark_shared(&b->blk);
	b->blk.flags |= NSL_BF_COPY;
	b->state = BIT(NSL_ST_ELIGIBLE);
	b->owner = handed ? skb : NULL;
	return b;
}

/*
 * @dev takes the packet (NSL_DIR_TX: queued to it; RX: from it): it joins
 * the block's devices, its records starting with the next one opened.
 * The same device again (a requeue) is the same crossing.
 */
static void nsl_add_dev(struct nsl_skb_block *b, const struct net_device *dev,
			u8 dir)
{
	struct nsl_block *blk = &b->blk;
	struct nsl_dev *d;
	u32 netns;

	if (!dev)
		return;
	netns = dev_net(dev)->ns.inum;
	if (blk->ndev) {
		d = &blk->dev[blk->ndev - 1];
		if (d->ifindex == dev->ifindex && d->netns == netns &&
		    d->dir == dir)
			return;
	}
	if (unlikely(blk->ndev >= NSL_MAX_DEVS)) {
		blk->flags |= NSL_BF_DEVTRUNC;
		return;
	}
	d = &blk->dev[blk->ndev++];
	d->ifindex = dev->ifindex;
	d->netns = netns;
	d->first = blk->nrec;
	d->dir = dir;
	d->pad = 0;
	d->pad2 = 0;
}

/* The TSC is read last (record.h): the lookups are not in the region. */
void __nsl_start(int region, struct sk_buff *skb)
{
	struct nsl_skb_block *b;

	if (nsl_stage_stops_macro())
		return;
	b = nsl_block_of(skb);
	if (!b)
		return;
	if (region == NSL_R_LINK && b->owner != skb &&
	    refcount_read(&skb->extensions->refcnt) > 1 &&
	    test_bit(NSL_ST_ELIGIBLE, &b->state)) {
		b = nsl_copy_at_link(skb, b);
		if (!b)
			return;
	}
	/* UDP hands the datagram it built to IP: MAGNeT's UDP send event. */
	if (region == NSL_R_IP && unlikely(nsl_records_on()) &&
	    (b->blk.proto == IPPROTO_UDP || b->blk.proto == IPPROTO_UDPLITE) &&
	    test_bit(NSL_ST_ELIGIBLE, &b->state))
		nsl_event(skb->sk, skb, NSL_EV_UDP_SEND, nsl_udp_payload(skb),
			  nsl_now(), b->blk.conn,
			  skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	if (region == NSL_R_LINK)
		nsl_add_dev(b, skb->dev, NSL_DIR_TX);
	nsl_start_block(b, region, NSL_NOW);
}
EXPORT_SYMBOL_GPL(__nsl_start);

void __nsl_stop(int region, struct sk_buff *skb)
{
	struct nsl_skb_block *b;
	u64 now;

	if (nsl_stage_stops_macro())
		return;
	now = nsl_now();
	b = nsl_block_of(skb);
	if (!b)
		return;
	nsl_stop_block(b, region, now);
	/* The IP header is built: MAGNeT's IP send event. */
	if (region == NSL_R_IP && unlikely(nsl_records_on()) &&
	    test_bit(NSL_ST_ELIGIBLE, &b->state))
		nsl_event(skb->sk, skb, NSL_EV_IP_SEND, skb->len, now,
			  b->blk.conn, skb_is_gso(skb) ? NSL_EVF_TSO : 0);
}
EXPORT_SYMBOL_GPL(__nsl_stop);

/*
 * The data waited in the TCP write queue from the end of its first copy in
 * sendmsg() until now, less the copies that came later (sendmsg() can wait
 * for memory between two copies into an skb already queued): a GAP record,
 * since no macro pair timed it, of those waits summed.
 */
static void nsl_sndq_gap(struct nsl_skb_block *b, u64 now)
{
	struct nsl_block *blk = &b->blk;
	struct nsl_record *first = NULL, *r;
	u64 at = now - blk->tsc0, copied = 0;
	unsigned int i, n = 0;

	if (!blk->nrec || blk->nrec >= NET_SLICE_CONF ||
	    (blk->rec[blk->nrec - 1].flags & NSL_RF_OPEN))
		return;
	for (i = 0; i < blk->nrec; i++) {
		r = &blk->rec[i];
		if (r->region != NSL_R_TCP || (r->flags & NSL_RF_OPEN))
			continue;
		if (!first || r->start < first->start)
			first = r;
		copied += r->ticks;
		n++;
	}
	if (!first || at < first->start + copied)
		return;
	r = &blk->rec[blk->nrec++];
	memset(r, 0, sizeof(*r));
	r->region = NSL_R_SNDQ;
	r->depth = b->nopen;
	/* No counter was read for a gap: nothing to trust. */
	r->flags = NSL_RF_GAP | (n > 1 ? NSL_RF_MERGED : 0) |
		   (blk->nevents ? NSL_RF_INVALID : 0);
	r->nmerged = n;
	r->cpu = raw_smp_processor_id();
	r->start = first->start + first->ticks;
	r->ticks = at - first->start - copied;
}

/*
 * @skb is the skb TCP hands to IP (a clone of the write-queue skb, sharing
 * its template).  Give it a private copy: that copy is what gets emitted.
 */
void __nsl_tx_fork(struct sk_buff *skb, struct sock *sk)
{
	struct nsl_skb_block *tmpl = nsl_block_of(skb);
	struct nsl_skb_block *b;
	bool sent, retrans;
	u64 now;

	if (!tmpl)
		return;
	sent = test_and_set_bit(NSL_ST_SENT, &tmpl->state);
	retrans = test_and_clear_bit(NSL_ST_RETRANS, &tmpl->state);
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
		b->blk.nrec = 0;
		b->blk.flags = retrans ? NSL_BF_RETRANS : NSL_BF_RESENT;
		b->blk.tsc0 = now;
		b->blk.hdr.cpu = raw_smp_processor_id();
		b->nopen = 0;
		memset(b->open_cnt, 0, sizeof(b->open_cnt));
		nsl_start_block(b, NSL_R_WRITE, now);
	}
	b->blk.conn = sock_gen_cookie(sk);
	b->blk.tcp_seq = TCP_SKB_CB(skb)->seq;
	b->blk.proto = IPPROTO_TCP;
	b->owner = NULL;
	b->state = BIT(NSL_ST_ELIGIBLE);
	b->sealed = true;
	if (unlikely(nsl_records_on()) && skb->len)
		nsl_event(sk, NULL, NSL_EV_TCP_SEND, skb->len, now,
			  b->blk.conn, tcp_skb_pcount(skb) > 1 ? NSL_EVF_TSO : 0);
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

/* @to, an skb with no block, gets a copy of @src; NULL without memory. */
static struct nsl_skb_block *nsl_block_dup(struct sk_buff *to,
					   const struct nsl_skb_block *src)
{
	struct nsl_skb_block *b = skb_ext_add(to, SKB_EXT_NETSLICE);

	if (unlikely(!b)) {
		this_cpu_inc(nsl_nomem_count);
		return NULL;
	}
	/* the records written so far: the rest of the copy is never read */
	memcpy(b, src, NSL_SKB_BLOCK_USED(src));
	b->owner = NULL;
	return b;
}

/*
 * Whether @r, closed and SHARED, can be summed into @p before it.  On any
 * CPU: the splits run where the sender or the ACK that opens the window
 * does, and alternate between them (a record per CPU change ran a block
 * out of records).  A SHARED record's ticks are summed in another block,
 * so the merged record's CPU (its first interval's) corrects nothing.
 */
static bool nsl_shared_pair(const struct nsl_record *p,
			    const struct nsl_record *r)
{
	const u16 shut = NSL_RF_SHARED | NSL_RF_OPEN;

	return (p->flags & shut) == NSL_RF_SHARED &&
	       (r->flags & shut) == NSL_RF_SHARED &&
	       p->region == r->region && p->depth == r->depth &&
	       p->nmerged + r->nmerged <= U16_MAX;
}

/*
 * Back-to-back SHARED records of one region are one measurement counted
 * in another block: summed into one.  Else a TCP skb split again and
 * again while its sender appends to it (tso_fragment() at each send, the
 * tail going back to the write queue) gains a SHARED record per split
 * and runs out of records (NSL_BF_TRUNC).  Only before the skb reached a
 * device: the devices' first records stay where they are.
 */
static void nsl_fold_shared(struct nsl_skb_block *b)
{
	struct nsl_block *blk = &b->blk;
	unsigned int i, j, k;

	if (blk->ndev || blk->nrec < 2)
		return;
	for (i = 1, j = 0; i < blk->nrec; i++) {
		struct nsl_record *p = &blk->rec[j], *r = &blk->rec[i];

		if (nsl_shared_pair(p, r)) {
			p->ticks += r->ticks;
			p->nmerged += r->nmerged;
			p->flags |= NSL_RF_MERGED |
				    (r->flags & (NSL_RF_MIGRATED | NSL_RF_INVALID));
			for (k = 0; k < blk->nevents; k++)
				p->count[k] += r->count[k];
			continue;
		}
		if (++j != i)
			blk->rec[j] = *r;
	}
	if (j + 1 == blk->nrec)
		return;
	blk->nrec = j + 1;
	/* Records moved: START and STOP find the open ones by search. */
	memset(b->open_hint, 0, sizeof(b->open_hint));
}

/* @to (a new skb split off @from) gets its own copy of @from's block. */
void __nsl_copy(struct sk_buff *to, const struct sk_buff *from)
{
	struct nsl_skb_block *src = nsl_block_of(from);
	struct nsl_skb_block *b;

	if (!src)
		return;
	b = nsl_block_dup(to, src);
	if (b) {
		nsl_mark_shared(&b->blk);
		nsl_fold_shared(b);
	}
}
EXPORT_SYMBOL_GPL(__nsl_copy);

/*
 * Add @r, a closed record of another skb's template, to the record of the
 * same region and depth in @b: the data it measured now travels in @b's
 * skb, so its intervals are @b's too.  Without such a record, append it.
 */
static void nsl_fold_record(struct nsl_skb_block *b,
			    const struct nsl_skb_block *from,
			    const struct nsl_record *r)
{
	struct nsl_block *blk = &b->blk;
	bool same_set = blk->nevents == from->blk.nevents &&
			b->gen == from->gen;
	struct nsl_record *d;
	int i, e;

	for (i = blk->nrec - 1; i >= 0; i--) {
		d = &blk->rec[i];
		if (d->region != r->region || d->depth != r->depth ||
		    (d->flags & (NSL_RF_OPEN | NSL_RF_SHARED | NSL_RF_GAP)))
			continue;
		d->ticks += r->ticks;
		d->nmerged += r->nmerged;
		d->flags |= NSL_RF_MERGED |
			    (r->flags & (NSL_RF_INVALID | NSL_RF_MIGRATED));
		if (!same_set && blk->nevents)
			d->flags |= NSL_RF_INVALID;
		for (e = 0; same_set && e < blk->nevents; e++)
			d->count[e] += r->count[e];
		return;
	}
	if (unlikely(blk->nrec >= NET_SLICE_CONF)) {
		blk->flags |= NSL_BF_TRUNC;
		return;
	}
	d = &blk->rec[blk->nrec++];
	*d = *r;
	d->start = from->blk.tsc0 + r->start - blk->tsc0;
	if (!same_set && blk->nevents)
		d->flags |= NSL_RF_INVALID;
}

/*
 * TCP moved all of @src's data into @dst (tcp_grow_skb(), an MTU probe)
 * and frees @src, a template that is never emitted.  What @src measured
 * (its copy from user space) goes with the data, so that it is neither
 * lost nor counted twice; its open write region ends with it.
 */
void __nsl_eat(struct sk_buff *dst, const struct sk_buff *src)
{
	struct nsl_skb_block *s = nsl_block_of(src);
	struct nsl_skb_block *d;
	unsigned int i;

	if (!s)
		return;
	d = nsl_block_of(dst);
	if (!d) {
		/* A new skb (an MTU probe) takes over the block. */
		nsl_block_dup(dst, s);
		return;
	}
	for (i = 0; i < s->blk.nrec; i++) {
		const struct nsl_record *r = &s->blk.rec[i];

		/* A SHARED record is counted in another block already. */
		if (!(r->flags & (NSL_RF_OPEN | NSL_RF_SHARED)))
			nsl_fold_record(d, s, r);
	}
}
EXPORT_SYMBOL_GPL(__nsl_eat);

/*
 * The flow of @skb from its network and transport headers: family,
 * protocol, header lengths, ports, addresses, and the TCP sequence.
 * Headers not in the linear data leave their fields as they were.
 */
static void nsl_flow(struct nsl_block *blk, const struct sk_buff *skb)
{
	struct nsl_hdrs h;

	if (!nsl_parse(skb, skb_network_header(skb), &h))
		return;
	blk->family = h.f.family;
	blk->proto = h.f.proto;
	blk->nhlen = h.nhlen;
	memcpy(blk->saddr, h.f.saddr, sizeof(blk->saddr));
	memcpy(blk->daddr, h.f.daddr, sizeof(blk->daddr));
	if (!h.ports)
		return;
	blk->sport = h.f.sport;
	blk->dport = h.f.dport;
	blk->thlen = h.thlen;
	if (h.f.proto == IPPROTO_TCP)
		blk->tcp_seq = h.f.tcp_seq;
}

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
	for (i = 0; i < b->blk.nrec; i++) {
		struct nsl_record *r = &b->blk.rec[i];

		if (r->region != NSL_R_NIC || !(r->flags & NSL_RF_OPEN))
			continue;
		r->flags &= ~NSL_RF_OPEN;
		r->ticks = 0;
		if (b->nopen)
			b->nopen--;
	}
	nsl_recount_open(b);
	nsl_mark_shared(&b->blk);
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
	struct nsl_skb_block *b = nsl_block_of(skb);
	struct nsl_block *blk;
	int off;

	if (!b || !test_bit(NSL_ST_ELIGIBLE, &b->state))
		return;
	if (b->owner && b->owner != skb) {
		b = nsl_copy_for(skb);
		if (!b)
			return;
	} else if (b->owner == skb && nsl_open_record(b, NSL_R_NIC)) {
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
	while (nsl_open_record(b, NSL_R_LINK))
		nsl_stop_block(b, NSL_R_LINK, now);
	nsl_stop_block(b, NSL_R_WRITE, now);
	nsl_stop_block(b, NSL_R_RX_LINK, now);
	b->owner = skb;
	blk->ifindex = dev->ifindex;
	/* From the network header on, as a received packet's length is. */
	off = skb_network_offset(skb);
	blk->len = off > 0 && off < skb->len ? skb->len - off : skb->len;
	blk->gso_segs = skb_is_gso(skb) ? skb_shinfo(skb)->gso_segs : 1;
	nsl_flow(blk, skb);
	if (dev->flags & IFF_LOOPBACK)
		blk->flags |= NSL_BF_LOOPBACK;
	if (unlikely(nsl_records_on()) && blk->conn)
		nsl_event(skb->sk, skb, NSL_EV_DEV_SEND, skb->len, now,
			  blk->conn, skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	nsl_start_block(b, NSL_R_NIC, NSL_NOW);
}
EXPORT_SYMBOL_GPL(__nsl_xmit);

/* Software GSO made @segs out of @orig: one block per segment. */
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
			nsl_mark_shared(&b->blk);
		first = false;
	}
	/* The super-packet itself never reaches a driver. */
	set_bit(NSL_ST_DEAD, &ob->state);
}
EXPORT_SYMBOL_GPL(__nsl_gso_segmented);

/*
 * The stack takes a received skb.  Drivers that are not instrumented give
 * it no block: it gets one here.  Over loopback the sent skb's block
 * carries on into the receive path.
 */
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
	nsl_add_dev(b, skb->dev, NSL_DIR_RX);
	nsl_start_block(b, NSL_R_RX_LINK, now);
}
EXPORT_SYMBOL_GPL(__nsl_rx);

/*
 * A driver hands a new skb to the stack by a way the stack also uses for
 * skbs it already knows (netif_receive_skb() from a bridge, a tunnel):
 * only an skb without a block is a driver's new packet.
 */
void __nsl_rx_new(struct sk_buff *skb)
{
	if (!nsl_block_of(skb))
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
	struct nsl_skb_block *b = nsl_block_of(skb);

	if (!b || b->owner != skb)
		return;
	nsl_stop_block(b, NSL_R_NIC, now);
	b->blk.flags |= NSL_BF_FORWARDED;
}
EXPORT_SYMBOL_GPL(__nsl_forward);

/*
 * skb_ext_reset() where the stack scrubs an skb for another namespace or
 * a tunnel: every extension but the block goes, so that the block follows
 * its packet across the crossing.
 */
void __nsl_ext_reset(struct sk_buff *skb)
{
	int id;

	if (!static_branch_unlikely(&nsl_active) ||
	    !skb_ext_exist(skb, SKB_EXT_NETSLICE)) {
		skb_ext_reset(skb);
		return;
	}
	for (id = 0; id < SKB_EXT_NUM; id++)
		if (id != SKB_EXT_NETSLICE && skb_ext_exist(skb, id))
			__skb_ext_del(skb, id);
}
EXPORT_SYMBOL_GPL(__nsl_ext_reset);

void __nsl_coalesced(struct sk_buff *skb)
{
	struct nsl_skb_block *b = nsl_block_of(skb);

	if (b && b->owner == skb)
		b->blk.flags |= NSL_BF_COALESCED;
}
EXPORT_SYMBOL_GPL(__nsl_coalesced);

bool __nsl_has_block(const struct sk_buff *skb)
{
	return skb_ext_exist(skb, SKB_EXT_NETSLICE);
}
EXPORT_SYMBOL_GPL(__nsl_has_block);

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

	if (!nsl_pick_flow(f, &picked))
		return;
	b = nsl_init_block(skb, NSL_DIR_TX, picked);
	if (!b)
		return;
	b->blk.conn = sock_gen_cookie(sk);
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

const struct nsl_receiver *nsl_receiver(void)
{
	return rcu_dereference(nsl_rcv);
}

void nsl_deliver(struct nsl_item_hdr *item)
{
	const struct nsl_receiver *rcv;

	rcu_read_lock();
	rcv = rcu_dereference(nsl_rcv);
	if (rcv) {
		this_cpu_inc(nsl_emit_count);
		rcv->deliver(item, rcv->priv);
	}
	rcu_read_unlock();
}

/*
 * A block is chosen with its whole flow (what NSI left undecided), and
 * leaves with its addresses only when the reader asked for them.
 */
static void nsl_deliver_block(struct nsl_skb_block *b)
{
	const struct nsl_receiver *rcv;
	struct nsl_block *blk = &b->blk;

	rcu_read_lock();
	rcv = rcu_dereference(nsl_rcv);
	if (!rcv)
		goto out;
	this_cpu_inc(nsl_emit_count);
	if (!nsl_pick_emit(blk, b->picked))
		goto out;
	if (!nsl_flow_addr_on()) {
		memset(blk->saddr, 0, sizeof(blk->saddr));
		memset(blk->daddr, 0, sizeof(blk->daddr));
	}
	rcv->deliver(&blk->hdr, rcv->priv);
out:
	rcu_read_unlock();
}

static void nsl_emit(struct nsl_skb_block *b)
{
	struct nsl_block *blk = &b->blk;

	if (nsl_stage_below(NSL_STAGE_FULL) ||
	    !test_bit(NSL_ST_ELIGIBLE, &b->state) ||
	    test_bit(NSL_ST_DEAD, &b->state) ||
	    test_and_set_bit(NSL_ST_EMITTED, &b->state))
		return;
	/*
	 * Not transmitted: no driver ever had it, or a device's queue took it
	 * after an upper device's driver had (a stacked device's, a bridge
	 * flood's copy) and dropped it there, its link still open.
	 */
	if (blk->dir == NSL_DIR_TX &&
	    (!b->owner || nsl_open_record(b, NSL_R_LINK)))
		blk->flags |= NSL_BF_NOXMIT;
	blk->hdr.size = NSL_BLOCK_SIZE(blk->nrec);
	nsl_deliver_block(b);
}

/*
 * A received frame freed (@skb) with its link region open ends in link:
 * an IP frame there was merged by GRO into another skb and freed; any
 * other (ARP, say) was consumed by its protocol, which has no region of
 * its own.  With no skb left (@skb NULL) it was GRO's stolen head, the
 * data living on in the merged skb.
 */
static void nsl_rx_absorbed(struct nsl_skb_block *b, u64 now,
			    const struct sk_buff *skb)
{
	if (b->blk.dir != NSL_DIR_RX || !nsl_open_record(b, NSL_R_RX_LINK))
		return;
	nsl_stop_block(b, NSL_R_RX_LINK, now);
	if (!skb || skb->protocol == htons(ETH_P_IP) ||
	    skb->protocol == htons(ETH_P_IPV6))
		b->blk.flags |= NSL_BF_ABSORBED;
}

/*
 * A received packet freed in a backlog (dropped, or coalesced into the one
 * before it) ends there; one TCP consumes itself (an ACK) ends in tcp, one
 * UDP drops (a full receive buffer) in udp.
 */
static void nsl_rx_ends(struct nsl_skb_block *b, u64 now)
{
	if (!(b->blk.flags & NSL_BF_RX))
		return;
	nsl_stop_block(b, NSL_R_BACKLOG, now);
	nsl_stop_block(b, NSL_R_SK_BACKLOG, now);
	nsl_stop_block(b, NSL_R_RX_TCP, now);
	nsl_stop_block(b, NSL_R_RX_UDP, now);
}

/* NSE: the skb is being freed. */
void __nsl_exit(struct sk_buff *skb)
{
	u64 now = nsl_now();
	struct nsl_skb_block *b = nsl_block_of(skb);

	if (!b || b->owner != skb)
		return;
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
	b->blk.hdr.size = NSL_BLOCK_SIZE(b->blk.nrec);
	rcu_read_lock();
	memcpy(dst, &b->blk, b->blk.hdr.size);
	rcu_read_unlock();
	clear_bit(NSL_ST_EMITTED, &b->state);
}

/*
 * skb_ext_add() gave @skb a private copy (@new) of a shared extension
 * (@old, still held by others): the block now exists twice, and only one
 * copy may be emitted.  The copy of the skb that owns the block keeps
 * that duty -- or @skb's, when no skb owns it yet (the one going on down
 * the stack; the others are taps' clones).  Claiming @old uses the bit
 * its holders test and set before they emit, so exactly one copy wins.
 */
void nsl_ext_cow(const struct sk_buff *skb, void *new, void *old)
{
	struct nsl_skb_block *nb = new, *ob = old;

	if (!test_bit(NSL_ST_ELIGIBLE, &ob->state))
		return;		/* a template: never emitted itself */
	if (ob->owner && ob->owner != skb)
		set_bit(NSL_ST_EMITTED, &nb->state);
	else if (test_and_set_bit(NSL_ST_EMITTED, &ob->state))
		set_bit(NSL_ST_EMITTED, &nb->state);
	else
		clear_bit(NSL_ST_EMITTED, &nb->state);
}

/*
 * skb_ext_maybe_cow(): @src's block copied to @dst as far as it is
 * written.  Another holder may be adding a record on another CPU (a
 * looped-back clone's receive path): the count is read once, and the
 * copy holds what it copied.
 */
void nsl_ext_copy(void *dst, const void *src)
{
	const struct nsl_skb_block *s = src;
	struct nsl_skb_block *d = dst;
	u8 nrec = min_t(u8, READ_ONCE(s->blk.nrec), NET_SLICE_CONF);

	memcpy(d, s, offsetof(struct nsl_skb_block, blk.rec) +
	       nrec * sizeof(struct nsl_record));
	d->blk.nrec = nrec;
	/* The counts copied may predate a record the other CPU opened. */
	nsl_recount_open(d);
}

/* The last reference to the extension holding @ptr is going away. */
void nsl_ext_release(struct skb_ext *ext, void *ptr)
{
	struct nsl_skb_block *b = ptr;
	u64 now = nsl_now();

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
					    lockdep_is_held(&nsl_reg_lock)))
		static_branch_enable(&nsl_active);
	else
		static_branch_disable(&nsl_active);
	mutex_unlock(&nsl_reg_lock);
}
EXPORT_SYMBOL_GPL(nsl_set_active);

int nsl_stage_set(enum nsl_stage stage)
{
	if ((unsigned int)stage > NSL_STAGE_FULL)
		return -EINVAL;
	mutex_lock(&nsl_stage_lock);
	WRITE_ONCE(nsl_stage, stage);
	if (stage == NSL_STAGE_FULL)
		static_branch_disable(&nsl_staged);
	else
		static_branch_enable(&nsl_staged);
	mutex_unlock(&nsl_stage_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(nsl_stage_set);

enum nsl_stage nsl_stage_get(void)
{
	return READ_ONCE(nsl_stage);
}
EXPORT_SYMBOL_GPL(nsl_stage_get);

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
