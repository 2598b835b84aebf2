// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: the measurement block of an skb and its regions.
 *
 * A block lives in the skb extension SKB_EXT_NETSLICE.  On the send path
 * tcp_sendmsg() gives a new skb a block (NSI); that block is a template
 * that stays with the skb in the write queue.  Each transmission of the
 * skb forks it: the clone handed to IP gets the block that is eventually
 * emitted, exactly once, when the skb that reached the driver is freed
 * (NSE) -- or, failing that, when the last reference to the extension
 * goes away.  The first transmission takes the template itself (the
 * write queue keeps only its SENT and RETRANS bits: NSL_ST_LENT), a later
 * one a block of its own.
 *
 * Writers never copy-on-write: between forks a block has a single writer
 * (the socket owner before transmission, the transmitting context after),
 * and clones made by taps only read it.
 *
 * This file holds what every layer runs, START and STOP (whose common
 * case, a step in the block's log, is inline at the hook sites:
 * linux/netslice.h), and the stage a block's life stops at; the rest is
 * split by job:
 *  - record.h, record.c: a block's records and its log, and what the
 *    inline steps fall back on;
 *  - block.c: a block's life, from NSI through the copies and merges of
 *    its skb to the extension's own copies;
 *  - send.c: the transmit side, from TCP's fork or a datagram's first skb
 *    to the driver, software GSO included;
 *  - receive.c: the receive side, from a driver's NAPI poll to the stack;
 *  - emit.c: NSE, the hand-over to the registered receiver, and its
 *    registration;
 * and beside them pick.c (which packets get a block), headers.h (where a
 * packet's headers are), events.c (MAGNeT's records), counters.c (PMU
 * counters) and calib.c (what the macros cost).
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/mutex.h>
#include <linux/export.h>
#include <linux/in.h>
#include <linux/timex.h>
#ifdef CONFIG_X86_TSC
#include <asm/tsc.h>
#endif

#include "core.h"
#include "record.h"

/*
 * The stage a block's life stops at (enum nsl_stage).  The key is off,
 * each test of it a NOP, unless a bench set a stage short of the full
 * one; nsl_stage_lock serialises setters, readers read it once per test.
 * The hooks' inline steps test the key (linux/netslice.h).
 */
struct static_key_false nsl_staged = STATIC_KEY_FALSE_INIT;
EXPORT_SYMBOL_GPL(nsl_staged);
static DEFINE_MUTEX(nsl_stage_lock);
enum nsl_stage nsl_stage = NSL_STAGE_FULL;

DEFINE_PER_CPU_READ_MOSTLY(u32, nsl_log_cpu);
EXPORT_PER_CPU_SYMBOL_GPL(nsl_log_cpu);

static int __init nsl_log_cpu_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		per_cpu(nsl_log_cpu, cpu) = nsl_log_high(0, 0, cpu);
	return 0;
}
core_initcall(nsl_log_cpu_init);

u32 nsl_tsc_khz(void)
{
#ifdef CONFIG_X86_TSC
	return tsc_khz;
#else
	return 0;
#endif
}
EXPORT_SYMBOL_GPL(nsl_tsc_khz);

/*
 * Whether START has more to do than open a record: the link's device
 * (and a copy of a block still shared with the write queue), or the ip
 * region's MAGNeT send event while records are on.  Tested inline, done
 * out of line; count mode's counters are record.h's.
 */
static __always_inline bool nsl_region_slow(int region)
{
	return region == NSL_R_LINK ||
	       (region == NSL_R_IP && nsl_records_on());
}

/*
 * The link's START: first a copy of a block still shared with the write
 * queue (none if no memory), then the device the link hands to, whose
 * records begin with the link's.
 */
static __always_inline void nsl_link_start(struct sk_buff *skb,
					   struct nsl_skb_block *b)
{
	/*
	 * Shared by more than the write queue's hold on a block TCP's first
	 * transmission took (NSL_ST_LENT): a copy.  That hold lasts until
	 * the data is acknowledged, which the transmission and the copies
	 * made on its way down come before -- all but one held in a queue
	 * past an RTO while a retransmission got through, then copied (a
	 * bridge with a qdisc flooding it): taken for no copy.
	 */
	if (b->owner != skb &&
	    refcount_read(&skb->extensions->refcnt) >
	    1 + test_bit(NSL_ST_LENT, &b->state) &&
	    test_bit(NSL_ST_ELIGIBLE, &b->state)) {
		b = nsl_copy_at_link(skb, b);
		if (!b)
			return;
	}
	nsl_start_dev(b, NSL_R_LINK, NSL_NOW,
		      nsl_join_dev(b, skb->dev, NSL_DIR_TX));
}

/*
 * START's rare cases, out of line: the link's START where it comes
 * another way than its hook (calibration), and UDP's MAGNeT send event.
 */
static noinline void nsl_start_slow(int region, struct sk_buff *skb,
				    struct nsl_skb_block *b)
{
	if (region == NSL_R_LINK) {
		nsl_link_start(skb, b);
		return;
	}
	/* UDP hands the datagram it built to IP: MAGNeT's UDP send event. */
	if (region == NSL_R_IP && unlikely(nsl_records_on()) &&
	    (b->blk.proto == IPPROTO_UDP || b->blk.proto == IPPROTO_UDPLITE) &&
	    test_bit(NSL_ST_ELIGIBLE, &b->state))
		nsl_event(skb->sk, skb, NSL_EV_UDP_SEND, nsl_udp_payload(skb),
			  nsl_now(), b->blk.conn,
			  skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	nsl_start_block(b, region, NSL_NOW);
}

/*
 * The TSC is read last (record.h): the lookups are not in the region.
 * Most STARTs take the first path, which calls nothing (under QEMU TCG
 * it ran 99 instructions a call with the cases above inline, most of
 * them saving and restoring registers for calls it seldom made).
 */
void __nsl_start(int region, struct sk_buff *skb)
{
	struct nsl_skb_block *b;

	if (nsl_stage_stops_macro())
		return;
	b = nsl_block_of(skb);
	if (!b)
		return;
	if (unlikely(nsl_region_slow(region)))
		nsl_start_slow(region, skb, b);
	else
		nsl_start_block(b, region, NSL_NOW);
}
EXPORT_SYMBOL_GPL(__nsl_start);

/* The link's START, from its hook, which found the block. */
void __nsl_start_link(struct sk_buff *skb)
{
	if (nsl_stage_stops_macro())
		return;
	nsl_link_start(skb, nsl_block_known(skb));
}
EXPORT_SYMBOL_GPL(__nsl_start_link);

/* STOP's rare case: MAGNeT's IP send event. */
static noinline void nsl_stop_slow(int region, struct sk_buff *skb,
				   struct nsl_skb_block *b, u64 now)
{
	nsl_stop_block(b, region, now);
	/* The IP header is built: MAGNeT's IP send event. */
	if (region == NSL_R_IP && unlikely(nsl_records_on()) &&
	    test_bit(NSL_ST_ELIGIBLE, &b->state))
		nsl_event(skb->sk, skb, NSL_EV_IP_SEND, skb->len, now,
			  b->blk.conn, skb_is_gso(skb) ? NSL_EVF_TSO : 0);
}

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
	/*
	 * The link's device came at its START: its STOP is a plain one.
	 * Count mode's counters are record.h's.
	 */
	if (unlikely(region == NSL_R_IP && nsl_records_on()))
		nsl_stop_slow(region, skb, b, now);
	else
		nsl_stop_block(b, region, now);
}
EXPORT_SYMBOL_GPL(__nsl_stop);

/*
 * START and STOP of a region with no case of its own
 * (nsl_region_own_case()), where the hook's inline step in the log
 * (linux/netslice.h) could not be one, or a stage short of the full one
 * is set: count mode and a block that keeps records go out of line in
 * record.h.
 */
void __nsl_start_on(int region, struct sk_buff *skb)
{
	if (nsl_stage_stops_macro())
		return;
	nsl_start_block(nsl_block_known(skb), region, NSL_NOW);
}
EXPORT_SYMBOL_GPL(__nsl_start_on);

/* A STOP's first step, the TSC in *@now: false if it does no more. */
static __always_inline bool nsl_stop_head(u64 *now)
{
	if (nsl_stage_stops_macro())
		return false;
	*now = nsl_now();
	return true;
}

void __nsl_stop_on(int region, struct sk_buff *skb)
{
	u64 now;

	if (nsl_stop_head(&now))
		nsl_stop_block(nsl_block_known(skb), region, now);
}
EXPORT_SYMBOL_GPL(__nsl_stop_on);

void nsl_log_unstart(struct nsl_skb_block *b, int region)
{
	b->open.last[region]--;
	b->nstart--;
}
EXPORT_SYMBOL_GPL(nsl_log_unstart);

/*
 * STOP where the hook's inline step could not be a step in the log
 * (nsl_stop_on()): on the records, at the time the hook read.
 */
void __nsl_stop_at(int region, struct sk_buff *skb, u64 now)
{
	nsl_stop_records(nsl_block_known(skb), region, now);
}
EXPORT_SYMBOL_GPL(__nsl_stop_at);

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
