// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: a block's life.  NSI makes it in the skb's extension;
 * an skb split off another gets a copy, its records closed before the
 * split flagged SHARED (counted once, in the other block); an skb TCP
 * merges into another gives that one its records; and the extension's
 * own copy and copy-on-write leave exactly one copy to be emitted.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/export.h>
#include <linux/string.h>
#include <linux/in.h>

#include "core.h"
#include "headers.h"
#include "record.h"

/*
 * nsl_init_block()'s block, returned so that the caller need not look it
 * up again; NULL without memory.
 */
struct nsl_skb_block *nsl_new_block(struct sk_buff *skb, int dir, u8 picked)
{
	struct nsl_skb_block *b;
	struct nsl_block *blk;

	b = skb_ext_add(skb, SKB_EXT_NETSLICE);
	if (unlikely(!b)) {
		this_cpu_inc(nsl_nomem_count);
		return NULL;
	}
	blk = &b->blk;
	/* Not dev[]: each entry is written whole as it joins (nsl_join_dev()). */
	memset(blk, 0, offsetof(struct nsl_block, dev));
	blk->hdr.kind = NSL_ITEM_BLOCK;
	blk->tsc0 = nsl_now();
	blk->dir = dir;
	blk->gso_segs = 1;
	blk->hdr.cpu = raw_smp_processor_id();
	/* A received skb is its own block's owner from the start. */
	b->owner = dir == NSL_DIR_RX ? skb : NULL;
	b->state = dir == NSL_DIR_RX ? BIT(NSL_ST_ELIGIBLE) : 0;
	b->picked = picked;
	b->gen = 0;
	blk->nevents = nsl_counters_nevents(&b->gen);
	blk->mode = blk->nevents ? NSL_MODE_COUNT : NSL_MODE_DURATION;
	/* After nevents: a log, unless in count mode. */
	nsl_records_reset(b);
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

/*
 * @dev takes the packet (NSL_DIR_TX: queued to it; RX: from it): it joins
 * the block's devices.  Its index, its records to begin with the next one
 * opened (nsl_start_dev(), which says so); or -1 where no device joins:
 * none, the same device again (a requeue, the same crossing), or one past
 * NSL_MAX_DEVS.  A leaf.
 */
int nsl_join_dev(struct nsl_skb_block *b, const struct net_device *dev, u8 dir)
{
	struct nsl_block *blk = &b->blk;
	struct nsl_dev *d;
	u32 netns;

	if (!dev)
		return -1;
	netns = dev_net(dev)->ns.inum;
	if (blk->ndev) {
		d = &blk->dev[blk->ndev - 1];
		if (d->ifindex == dev->ifindex && d->netns == netns &&
		    d->dir == dir)
			return -1;
	}
	if (unlikely(blk->ndev >= NSL_MAX_DEVS)) {
		blk->flags |= NSL_BF_DEVTRUNC;
		return -1;
	}
	/*
	 * Whole, its padding 0: nsl_init_block() leaves dev[] as it was.
	 * In a log, the replay finds the device's first record.
	 */
	blk->dev[blk->ndev] = (struct nsl_dev){
		.ifindex = dev->ifindex,
		.netns = netns,
		.first = b->nlog != NSL_NOLOG ? 0 : blk->nrec,
		.dir = dir,
	};
	return blk->ndev++;
}

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
	memcpy(b, src, nsl_block_used(src));
	b->owner = NULL;
	/*
	 * Of a block TCP's first transmission took, the write queue's skb
	 * holds only SENT and RETRANS: so does the copy, a template.
	 */
	if (test_bit(NSL_ST_LENT, &src->state))
		b->state = src->state & (BIT(NSL_ST_SENT) |
					 BIT(NSL_ST_RETRANS));
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
	/* Records moved: where the open ones are now, and the last. */
	nsl_recount_open(b);
	nsl_merge_last(b);
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
		nsl_records_now(b);
		nsl_block_share(&b->blk);
		nsl_fold_shared(b);
	}
}
EXPORT_SYMBOL_GPL(__nsl_copy);

/*
 * TCP moved all of @src's data into @dst (tcp_grow_skb(), an MTU probe)
 * and frees @src, a template that is never emitted.  What @src measured
 * (its copy from user space) goes with the data, so that it is neither
 * lost nor counted twice; its open write region ends with it.  In the
 * logs where the replay gives the same (nsl_log_eat(): the common case,
 * one copy eaten by the skb before it), else on records.
 */
void __nsl_eat(struct sk_buff *dst, const struct sk_buff *src)
{
	struct nsl_skb_block *s = nsl_block_of(src);
	struct nsl_skb_block *d;

	if (!s)
		return;
	d = nsl_block_of(dst);
	if (!d) {
		/* A new skb (an MTU probe) takes over the block. */
		nsl_block_dup(dst, s);
		return;
	}
	if (!nsl_log_eat(d, s))
		nsl_fold_closed(d, s);
}
EXPORT_SYMBOL_GPL(__nsl_eat);

/*
 * The flow of @skb from its network and transport headers: family,
 * protocol, header lengths, ports, addresses, and the TCP sequence.
 * Headers not in the linear data leave their fields as they were.  Read
 * straight into the block: what else the headers say is not read.
 */
static __always_inline struct nsl_hdr_dst nsl_block_dst(struct nsl_block *blk)
{
	return (struct nsl_hdr_dst) {
		.family = &blk->family, .proto = &blk->proto,
		.nhlen = &blk->nhlen, .thlen = &blk->thlen,
		.sport = &blk->sport, .dport = &blk->dport,
		.tcp_seq = &blk->tcp_seq,
		.saddr = blk->saddr, .daddr = blk->daddr, .addrs = true,
	};
}

void nsl_flow(struct nsl_block *blk, const struct sk_buff *skb)
{
	nsl_read_headers(skb, skb_network_header(skb), nsl_block_dst(blk));
}

/*
 * The flow of what @sk sends, known before any header is built (TCP's
 * fork): the family, protocol, ports and addresses nsl_flow() would read
 * at the driver, where only the header lengths are left to read.  False,
 * with nothing written, if @sk has no peer.
 */
bool nsl_flow_sk(struct nsl_block *blk, const struct sock *sk)
{
	return nsl_read_sk(sk, nsl_block_dst(blk));
}

/*
 * skb_ext_reset() where the stack scrubs an skb for another namespace or
 * a tunnel: every extension but the block goes, so that the block follows
 * its packet across the crossing.  The mark of a packet passed over at
 * send goes: a tunnel's inner packet is a new one to its receive path,
 * and the choice there (nsl_pick_rx()) knows a relayed packet anyway.
 */
void __nsl_ext_reset(struct sk_buff *skb)
{
	int id;

	skb->nsl_passed = 0;

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

	/* A private copy: no write queue holds it (send.c). */
	clear_bit(NSL_ST_LENT, &nb->state);
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
 * written.  Another holder may be adding a record or a step on another
 * CPU (a looped-back clone's receive path): the count is read once, and
 * the copy holds what it copied.  A log stays a log where its counts
 * are its entries' (nsl_log_counted()); what writes the copy's records
 * in bulk (a split's copy: nsl_copy_for(), __nsl_copy()) replays it then.
 */
void nsl_ext_copy(void *dst, const void *src)
{
	const struct nsl_skb_block *s = src;
	struct nsl_skb_block *d = dst;
	u8 nlog = READ_ONCE(s->nlog);
	u8 nrec = min_t(u8, READ_ONCE(s->blk.nrec), NET_SLICE_CONF);

	/* The count first, then what it counts (nsl_log_store()). */
	smp_rmb();

	/*
	 * A log fits the records' room, its reader, and its count's byte;
	 * at the paper's NET_SLICE_CONF, with room to resume records.
	 */
	BUILD_BUG_ON(NSL_LOG_ROOM * sizeof(u64) >
		     NET_SLICE_CONF * sizeof(struct nsl_record) ||
		     NSL_LOG_ROOM > NSL_LOG_MAX || NSL_LOG_ROOM >= NSL_NOLOG ||
		     NSL_LOG_RESUMES < 0 ||
		     (NET_SLICE_CONF == 16 && NSL_LOG_RESUMES != 8));
	if (nlog != NSL_NOLOG) {
		nlog = min_t(u8, nlog, NSL_LOG_ROOM);
		memcpy(d, s, offsetof(struct nsl_skb_block, blk.rec) +
		       nlog * sizeof(u64));
		d->nlog = nlog;
		/*
		 * The counts copied may postdate the entries, where the other
		 * CPU made a step meanwhile: the entries are replayed then.
		 */
		if (!nsl_log_counted(d))
			nsl_records_now(d);
		return;
	}
	memcpy(d, s, offsetof(struct nsl_skb_block, blk.rec) +
	       nrec * sizeof(struct nsl_record));
	d->blk.nrec = nrec;
	/* The counts copied may predate a record the other CPU opened. */
	nsl_recount_open(d);
}
