/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice core internals shared by the files of net/netslice.
 */
#ifndef _NSL_CORE_H
#define _NSL_CORE_H

#include <linux/netslice.h>
#include <linux/sock_diag.h>
#include <linux/timex.h>
#ifdef CONFIG_X86_TSC
#include <asm/msr.h>
#endif

struct sock;

/*
 * A block's conn: @sk's cookie, which is made once and then only read.
 * Read inline; sock_gen_cookie() is a call even when it only reads.
 */
static inline u64 nsl_conn(struct sock *sk)
{
	u64 cookie = atomic64_read(&sk->sk_cookie);

	return cookie ? cookie : sock_gen_cookie(sk);
}

/* The block @skb carries, if any. */
static inline struct nsl_skb_block *nsl_block_of(const struct sk_buff *skb)
{
	return skb_ext_find(skb, SKB_EXT_NETSLICE);
}

/*
 * The block @skb carries, if @skb is its owner: another skb that shares
 * the extension (the write queue's template, a clone) leaves it alone.
 */
static inline struct nsl_skb_block *nsl_owned_block(const struct sk_buff *skb)
{
	struct nsl_skb_block *b = nsl_block_of(skb);

	return b && b->owner == skb ? b : NULL;
}

/* The stage a block's life stops at (core.c); its key is nsl_staged. */
extern enum nsl_stage nsl_stage;

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

/* Blocks lost for want of an skb extension, per CPU (emit.c). */
DECLARE_PER_CPU(u64, nsl_nomem_count);

/* A block's life (block.c). */
struct nsl_skb_block *nsl_new_block(struct sk_buff *skb, int dir, u8 picked);

/*
 * A new block for @skb, with what NSI decided of it (@picked, NSL_PK_*);
 * NULL without memory, or in the cost bench's stage that makes none.
 * The stage is tested here, before any call: a packet NSI passes over
 * makes none either, and the stage stands for it, marked as one
 * (nsl_pass()).
 */
static __always_inline struct nsl_skb_block *
nsl_init_block(struct sk_buff *skb, int dir, u8 picked)
{
	if (nsl_stage_below(NSL_STAGE_CARRY)) {
		nsl_pass(skb);
		return NULL;
	}
	return nsl_new_block(skb, dir, picked);
}

int nsl_join_dev(struct nsl_skb_block *b, const struct net_device *dev, u8 dir);
void nsl_flow(struct nsl_block *blk, const struct sk_buff *skb);
bool nsl_flow_sk(struct nsl_block *blk, const struct sock *sk);

/* The transmit side (send.c). */
struct nsl_skb_block *nsl_copy_at_link(struct sk_buff *skb,
				       struct nsl_skb_block *ob);

/*
 * Hands @item to the registered receiver, if any (emit.c): an event
 * record as it is (@b NULL), or the block @b, @item its header, if it
 * passes what NSI left undecided.
 */
void nsl_deliver(struct nsl_item_hdr *item, struct nsl_skb_block *b);
/* The registered receiver; the caller holds rcu_read_lock(). */
const struct nsl_receiver *nsl_receiver(void);

/* What a packet's headers say (nsl_parse()). */
struct nsl_hdrs {
	struct nsl_filter_flow f;	/* len 0: not read from them */
	u16 nhlen;		/* network header */
	u16 thlen;		/* transport header, 0 if not read */
	u32 payload;		/* transport payload (TCP, UDP) */
	u32 iplen;		/* as the IP header says (wrong for BIG TCP) */
	u16 ip_id;		/* IPv4 only, host order */
	u16 frag_off;		/* IPv4 only, host order, flags included */
	u8 tos;			/* IPv4 TOS, IPv6 traffic class */
	u8 ttl;			/* IPv4 TTL, IPv6 hop limit */
	bool ports;		/* the transport header was read */
};

bool nsl_parse(const struct sk_buff *skb, const u8 *nh, struct nsl_hdrs *h);

/*
 * Which packets get a block (pick.c).  Each returns false for a packet
 * passed over (filtered out or not sampled) and sets *picked to what it
 * decided, for the block to keep; nsl_pick_emit() decides the rest before
 * the ring, under rcu_read_lock().
 */
bool nsl_pick_sk(const struct sock *sk, u8 *picked);
bool nsl_pick_flow(const struct nsl_filter_flow *f, u8 *picked);
bool nsl_pick_rx(const struct sk_buff *skb, u8 *picked);
bool nsl_pick_emit(const struct nsl_block *blk, u8 picked);
/* Collection paused (nsl_pick_pause()): read without a lock. */
extern bool nsl_paused;

static inline bool nsl_collect_paused(void)
{
	return READ_ONCE(nsl_paused);
}

/* Nothing is chosen and nothing paused: read without a lock (pick.c). */
extern bool nsl_pick_every;

/* Whether anything is chosen at NSI: a filter there, sampling, a pause. */
static inline bool nsl_pick_on(void)
{
	return !READ_ONCE(nsl_pick_every);
}

/*
 * Event records (events.c).  NSL_REC_* as nsl_records_set() last set
 * them, read without a lock: inline, for START and STOP test them.
 */
extern u32 nsl_rec_flags;

static inline bool nsl_records_on(void)
{
	return READ_ONCE(nsl_rec_flags) & NSL_REC_ON;
}

/* Blocks keep their flow's addresses (NSL_REC_FLOWADDR). */
static inline bool nsl_flow_addr_on(void)
{
	return READ_ONCE(nsl_rec_flags) & NSL_REC_FLOWADDR;
}

u32 nsl_udp_payload(const struct sk_buff *skb);
void nsl_event(const struct sock *sk, const struct sk_buff *skb, int type,
	       u32 bytes, u64 tsc, u64 conn, u32 evflags);

/*
 * Events counted in blocks started now (0 in duration mode); *gen names
 * the counter set, so a block never mixes readings of two sets.
 */
u8 nsl_counters_nevents(u32 *gen);

/*
 * At START / STOP of @r: account this CPU's readings of the set @gen.
 * Each returns the TSC read next to the counters, interrupts off.
 */
u64 nsl_counters_start(struct nsl_record *r, u8 nevents, u32 gen);
u64 nsl_counters_stop(struct nsl_record *r, u8 nevents, u32 gen);

/* NSE, with the block copied to @dst instead of delivered. */
void nsl_exit_copy(struct sk_buff *skb, struct nsl_block *dst);

#endif /* _NSL_CORE_H */
