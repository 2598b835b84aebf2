/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice core: per-skb, per-layer measurement blocks.
 *
 * NET_SLICE_INIT gives an skb a block (an skb extension), NET_SLICE_START /
 * NET_SLICE_STOP bracket a region, NET_SLICE_EXIT hands the block to the
 * registered receiver when the skb that reached the driver is freed.
 * Without CONFIG_NETSLICE every macro is empty; with it but no receiver
 * registered each site costs one static-key branch.
 */
#ifndef _LINUX_NETSLICE_H
#define _LINUX_NETSLICE_H

#include <uapi/linux/netslice.h>

struct sk_buff;
struct skb_ext;
struct net_device;
struct sock;
struct flowi4;
struct flowi6;

/*
 * A receiver gets every item (finished blocks, event records) in any
 * context, on the CPU that produced it; item->size says how much to copy.
 * admit(), if set, is asked about each block's flow, addresses included,
 * before the block is delivered -- or at NSI, before there is a block,
 * after nsl_pick_filter_at_init(true): a packet it refuses gets no block
 * or is not delivered.
 */
struct nsl_receiver {
	bool (*admit)(const struct nsl_filter_flow *flow, void *priv);
	void (*deliver)(const struct nsl_item_hdr *item, void *priv);
	void *priv;
};

#ifdef CONFIG_NETSLICE

#include <linux/jump_label.h>
#include <linux/percpu.h>
#include <linux/skbuff.h>
#include <linux/smp.h>
#include <linux/timex.h>
#ifdef CONFIG_X86_TSC
#include <asm/msr.h>
#endif

/* nsl_skb_block.state bits */
enum nsl_state_bit {
	NSL_ST_ELIGIBLE,	/* this copy is to be emitted */
	NSL_ST_EMITTED,		/* it has been */
	NSL_ST_DEAD,		/* superseded (software GSO): never emit */
	NSL_ST_SENT,		/* template: transmitted at least once */
	NSL_ST_RETRANS,		/* template: TCP counts the next one as resent */
	/*
	 * TCP's first transmission took the template itself (send.c): the
	 * write queue's skb holds it too, for SENT and RETRANS alone.
	 */
	NSL_ST_LENT,
	/*
	 * The flow came from the socket at TCP's fork: the driver's
	 * hand-off reads the header lengths alone.  Any copy of the block
	 * reads the headers (its state is set anew).
	 */
	NSL_ST_FLOW,
};

/* nsl_skb_block.picked: what was decided at NSI (pick.c) */
#define NSL_PK_SEEN		0x1	/* an NSI decided what it could */
#define NSL_PK_FILTER		0x2	/* the reader's filter passed it */
#define NSL_PK_SAMPLE		0x4	/* sampling took it */

/* The payload of SKB_EXT_NETSLICE. */
struct nsl_skb_block {
	const struct sk_buff *owner;	/* the skb handed to the driver */
	unsigned long state;		/* NSL_ST_* bits */
	u32 gen;			/* counter set of this block */
	/*
	 * The block's log (record.h): its entries, in blk.rec[]'s room, or
	 * NSL_NOLOG while the block keeps records.  nstart counts the
	 * log's STARTs (NSL_NOLOG with records), at most NET_SLICE_CONF:
	 * none of them is a record the replay would have no room for.
	 * nresume counts the STARTs past those that the replay still fits
	 * in the records (merging, or with room: nsl_log_resume()), at
	 * most NSL_LOG_RESUMES.  nother counts its other steps (a seal, a
	 * device, the send queue's gap), at most NSL_LOG_OTHERS.  A STOP
	 * ends a START, so the log never outgrows NSL_LOG_ROOM, and a
	 * START need not look.  nnext counts the NEXTs, each a START in
	 * nstart and the STOP before it in one entry.
	 */
	u8 nlog;
	u8 nstart;
	u8 nresume;
	u8 nother;
	u8 nnext;
	u8 nopen;			/* records open now */
	/*
	 * The last record's region, which a START of that region may merge
	 * into (record.h); NSL_R_NONE once sealed: a new phase, or none yet.
	 */
	u8 merge_region;
	u8 picked;			/* NSL_PK_* */
	/*
	 * The open records of each region (record.h): last[] is 1 + the
	 * index of its latest, 0 if none is open; more[] counts the others
	 * (a region inside itself: a stacked device's link).  Exact: every
	 * change to the records keeps them (nsl_recount_open()).  While
	 * the block keeps a log, last[] counts each region's STARTs not
	 * yet stopped, and more[] is unused.
	 */
	struct {
		u8 last[NSL_R_MAX];
		u8 more[NSL_R_MAX];
	} open;
	/*
	 * What the receiver gets.  Last: the extension has room for
	 * NET_SLICE_CONF records of it (NSL_SKB_BLOCK_SIZE), not for all of
	 * blk.rec[], so never copy or clear this struct by its sizeof.
	 */
	struct nsl_block blk;
};

/*
 * The paper's NET_SLICE_CONF: the records a block has room for, chosen at
 * build time (CONFIG_NETSLICE_RECORDS, 4 .. NSL_MAX_RECORDS); a region
 * more is dropped and the block flagged NSL_BF_TRUNC.
 */
#define NET_SLICE_CONF			CONFIG_NETSLICE_RECORDS
#define NSL_SKB_BLOCK_SIZE \
	(offsetof(struct nsl_skb_block, blk.rec) + \
	 NET_SLICE_CONF * sizeof(struct nsl_record))
/*
 * The entries a block's log has room for: NET_SLICE_CONF STARTs and
 * their STOPs, NSL_LOG_OTHERS more steps (SEAL, DEV, GAP), and as many
 * STARTs past those, with their STOPs, as the rest of the records' room
 * and the reader's NSL_LOG_MAX allow (block.c checks): 8 at
 * NET_SLICE_CONF 16.  A TSO skb's copies into it and a reader's reads
 * of it in parts each START a region again, which the records merge.
 * Last, what a log is while the block keeps records.
 */
#define NSL_LOG_OTHERS			16
#define NSL_LOG_FITS \
	((int)(NET_SLICE_CONF * sizeof(struct nsl_record) / sizeof(u64)))
#define NSL_LOG_CAP			MIN(NSL_LOG_FITS, NSL_LOG_MAX)
#define NSL_LOG_RESUMES \
	((NSL_LOG_CAP - 2 * NET_SLICE_CONF - NSL_LOG_OTHERS) / 2)
#define NSL_LOG_ROOM \
	(2 * (NET_SLICE_CONF + NSL_LOG_RESUMES) + NSL_LOG_OTHERS)
#define NSL_NOLOG			0xff

/* The part of @b written so far, log or records: what a copy must copy. */
static inline size_t nsl_block_used(const struct nsl_skb_block *b)
{
	return offsetof(struct nsl_skb_block, blk.rec) +
	       (b->nlog != NSL_NOLOG ? b->nlog * sizeof(u64) :
		b->blk.nrec * sizeof(struct nsl_record));
}

/*
 * A block a receiver is given keeps its records (blk.nrec of them) or,
 * in duration mode, the log the reader replays them from (record.h,
 * nsl_log_replay()): its entries, in blk.rec[]'s room.  Their count; 0
 * for records.
 */
static inline unsigned int nsl_block_log(const struct nsl_block *blk)
{
	u8 n = container_of_const(blk, struct nsl_skb_block, blk)->nlog;

	return n == NSL_NOLOG ? 0 : n;
}

/*
 * The log's steps, START and STOP's common case, inline at each hook
 * site: a call into the core cost a START 9 of its 37 instructions (the
 * arguments, the call, the block's lookup, the region made a shift), and
 * the code of a site is out of the way of the stack's until NetSlice
 * collects (the static key's branch).  What is not a plain step -- count
 * mode, records, a log with no room or time for the step, a stage short
 * of the full one -- goes to the core, as before: net/netslice/record.h
 * holds the rest, and the reasons for the order of what is done here.
 */

/* The time of a step: the TSC, as NSI's tsc0 is. */
static __always_inline u64 nsl_now(void)
{
#ifdef CONFIG_X86_TSC
	return rdtsc();
#else
	return get_cycles();
#endif
}

/* A START's time: the TSC read last, after the bookkeeping. */
#define NSL_NOW		0

/* The log's @n-th entry. */
static __always_inline u64 *nsl_log_at(struct nsl_skb_block *b,
				       unsigned int n)
{
	return (u64 *)b->blk.rec + n;
}

/*
 * This CPU's part of a log entry's high half, nsl_log_high(0, 0, cpu):
 * one load where the CPU's number takes a load and a shift (core.c sets
 * it for every CPU at boot).
 */
DECLARE_PER_CPU_READ_MOSTLY(u32, nsl_log_cpu);

/*
 * Appends a step at @t ticks after NSI to @b's log, which has room for
 * it: the entry nsl_log_entry() makes, stored as two 32-bit halves where
 * that is its layout in memory -- the time, then the region, step and
 * CPU, where a constant @step and @region fold into one OR.  The entry
 * is stored before the count that takes it in, in program order as on
 * x86, so that a copy made on another CPU (nsl_ext_copy()), which reads
 * the count first, copies whole entries.
 */
static __always_inline void nsl_log_store_high(struct nsl_skb_block *b,
					       u32 high, u32 t)
{
	unsigned int n = b->nlog;
#ifdef __LITTLE_ENDIAN
	u32 *e = (u32 *)nsl_log_at(b, n);

	WRITE_ONCE(e[0], t);
	WRITE_ONCE(e[1], this_cpu_read(nsl_log_cpu) | high);
#else
	WRITE_ONCE(*nsl_log_at(b, n),
		   t | (u64)(high | (u32)raw_smp_processor_id() << 16) << 32);
#endif
	WRITE_ONCE(b->nlog, n + 1);
}

/* The same for a step of @region: its high half less the CPU is constant. */
static __always_inline void nsl_log_store(struct nsl_skb_block *b,
					  unsigned int step, int region, u32 t)
{
	nsl_log_store_high(b, nsl_log_high(step, region, 0), t);
}

/* Appends @e, a whole entry, to @b's log, which has room for it. */
static __always_inline void nsl_log_add(struct nsl_skb_block *b, u64 e)
{
	unsigned int n = b->nlog;

	WRITE_ONCE(*nsl_log_at(b, n), e);
	WRITE_ONCE(b->nlog, n + 1);
}

/* As nsl_log_since() below, for a time @now the caller read. */
static __always_inline u32 nsl_log_split(const struct nsl_skb_block *b,
					 u64 now, u32 *late)
{
	u64 d = now - b->blk.tsc0;

	*late = d >> 32;
	return d;
}

/*
 * The ticks from @b's NSI to the TSC read now: their low half, and in
 * *@late the high one, which is 0 where an entry holds the time.  With
 * the TSC, read and subtracted in three instructions (rdtsc leaves the
 * halves apart, and sub and sbb take tsc0's from memory): the compiler
 * joins and splits them again from C, five more a step.
 */
static __always_inline u32 nsl_log_since(const struct nsl_skb_block *b,
					 u32 *late)
{
#ifdef CONFIG_X86_TSC
	const u32 *t0 = (const u32 *)&b->blk.tsc0;
	u32 lo, hi;

	asm volatile("rdtsc\n\tsub %2, %0\n\tsbb %3, %1"
		     : "=&a" (lo), "=&d" (hi)
		     : "m" (t0[0]), "m" (t0[1])
		     : "cc");
	*late = hi;
	return lo;
#else
	return nsl_log_split(b, nsl_now(), late);
#endif
}

/* The TSC's time of the step nsl_log_since() gave @t and @late for. */
static __always_inline u64 nsl_log_when(const struct nsl_skb_block *b, u32 t,
					u32 late)
{
	return b->blk.tsc0 + ((u64)late << 32 | t);
}

/*
 * A step at @now in the log: false, with nothing written, if the block
 * keeps records (its count NSL_NOLOG, past NSL_LOG_ROOM, which a log
 * never outgrows: nsl_skb_block.nother) or @now is past what an entry
 * holds (2^32 ticks after NSI).
 */
static __always_inline bool nsl_log_put(struct nsl_skb_block *b,
					unsigned int step, int region, u64 now)
{
	u32 late, t = nsl_log_split(b, now, &late);

	if (unlikely(b->nlog >= NSL_LOG_ROOM || late))
		return false;
	nsl_log_store(b, step, region, t);
	return true;
}

/* A START counted in the log but too late for its entry, uncounted. */
void nsl_log_unstart(struct nsl_skb_block *b, int region);

/* The entry's time of a step at @now, or NSL_NOW for the TSC read last. */
static __always_inline u32 nsl_log_start_time(const struct nsl_skb_block *b,
					      u64 now, u32 *late)
{
	if (now != NSL_NOW)
		return nsl_log_split(b, now, late);
	return nsl_log_since(b, late);
}

/*
 * nsl_log_start() below, for an entry whose high half less the CPU is
 * @high: a START's, or a DEV_START's (a START that also says that a
 * device's records begin with it).
 */
static __always_inline bool nsl_log_start_high(struct nsl_skb_block *b,
					       int region, u64 now, u32 high)
{
	u32 t, late;

	if (unlikely(b->nstart >= NET_SLICE_CONF))
		return false;
	b->open.last[region]++;
	b->nstart++;
	t = nsl_log_start_time(b, now, &late);
	if (unlikely(late)) {
		/* 2^32 ticks after NSI: too late for an entry. */
		nsl_log_unstart(b, region);
		return false;
	}
	nsl_log_store_high(b, high, t);
	return true;
}

/*
 * START of @region in @b's log at @now, or NSL_NOW for the TSC read
 * last: false, having changed nothing, where the block keeps records or
 * the START would be one past NET_SLICE_CONF (one the records would have
 * had no room for): either way nstart says so, and the core decides
 * (nsl_start_records(): a START the records still hold goes to the log
 * all the same).  The log has room for it (nsl_skb_block.nother).
 */
static __always_inline bool nsl_log_start(struct nsl_skb_block *b,
					  int region, u64 now)
{
	return nsl_log_start_high(b, region, now,
				  nsl_log_high(NSL_LOG_START, region, 0));
}

/*
 * STOP of @region, open in @b (a START of it not stopped), in the log at
 * the time nsl_log_since() or nsl_log_split() gave (@t, @late): false,
 * having changed nothing, as nsl_log_put().
 */
static __always_inline bool nsl_log_stop_since(struct nsl_skb_block *b,
					       int region, u32 t, u32 late)
{
	if (unlikely(late || b->nlog >= NSL_LOG_ROOM))
		return false;
	nsl_log_store(b, NSL_LOG_STOP, region, t);
	b->open.last[region]--;
	return true;
}

/* The same at @now. */
static __always_inline bool nsl_log_stop(struct nsl_skb_block *b,
					 int region, u64 now)
{
	u32 late, t = nsl_log_split(b, now, &late);

	return nsl_log_stop_since(b, region, t, late);
}

/*
 * The block of @skb, which its hook found there (nsl_block_on()): what
 * skb_ext_find() returns, without testing again that it is there.
 */
static __always_inline struct nsl_skb_block *
nsl_block_known(const struct sk_buff *skb)
{
	const struct skb_ext *ext = skb->extensions;

	/* Unsigned and long: no sign extension of the int a shift makes. */
	return (void *)ext + ((unsigned long)ext->offset[SKB_EXT_NETSLICE] << 3);
}

DECLARE_STATIC_KEY_FALSE(nsl_active);
/*
 * On while a bench stops blocks short of the full stage (core.c): the
 * hooks then leave every step to the core.
 */
DECLARE_STATIC_KEY_FALSE(nsl_staged);
/*
 * On while MAGNeT's event records are kept (nsl_records_set()): only then
 * do the ip region's hooks and the socket hooks have an event to send.
 */
DECLARE_STATIC_KEY_FALSE(nsl_magnet);

/*
 * How far each block's life goes: every stage does what the one before it
 * does and more.  Anything but NSL_STAGE_FULL is for bench/sameboot.sh -L
 * alone, which measures what each stage adds to a round trip.
 */
enum nsl_stage {
	/* NSI makes no block */
	NSL_STAGE_NONE,
	/* blocks made, forked and freed; NSS/NST return; none delivered */
	NSL_STAGE_CARRY,
	/* NSS/NST read the TSC, and record nothing */
	NSL_STAGE_CLOCK,
	/* NSS/NST record; nothing delivered */
	NSL_STAGE_RECORDS,
	/* and every block is delivered: collecting */
	NSL_STAGE_FULL,
};

int nsl_register(const struct nsl_receiver *rcv);
void nsl_unregister(const struct nsl_receiver *rcv);
void nsl_set_active(bool on);
u64 nsl_emitted(void);
u64 nsl_nomem(void);
u32 nsl_tsc_khz(void);
int nsl_counters_set(const struct nsl_events *req);
int nsl_counters_set_mode(u32 mode);
int nsl_calibrate(struct nsl_calib *c);
int nsl_records_set(const struct nsl_record_opts *opts);
/* Process context; -EINVAL for a stage that does not exist. */
int nsl_stage_set(enum nsl_stage stage);
enum nsl_stage nsl_stage_get(void);
/* admit() reads only the flow: run it at NSI too (NSL_FILTER_FLOW). */
void nsl_pick_filter_at_init(bool on);
/* admit() may refuse a flow; off (default on), it is not asked at emit. */
void nsl_pick_filter_set(bool any);
/*
 * No new block (@on) while the hooks stay on: collection stops without
 * patching every hook site, which nsl_set_active(false) does later.
 */
void nsl_pick_pause(bool on);
int nsl_sample_set(u32 rate, u32 flags);
void nsl_sample_get(struct nsl_sample *s);

void __nsl_init(struct sk_buff *skb, int dir);
void __nsl_init_sk(struct sk_buff *skb, struct sock *sk);
void __nsl_start(int region, struct sk_buff *skb);
void __nsl_start_link(struct sk_buff *skb);
void __nsl_stop(int region, struct sk_buff *skb);
void __nsl_start_on(int region, struct sk_buff *skb);
void __nsl_stop_on(int region, struct sk_buff *skb);
void __nsl_stop_at(int region, struct sk_buff *skb, u64 now);
void __nsl_exit(struct sk_buff *skb);
void __nsl_tx_fork(struct sk_buff *skb, struct sock *sk);
void __nsl_tx_retrans(struct sk_buff *skb);
void __nsl_copy(struct sk_buff *to, const struct sk_buff *from);
void __nsl_eat(struct sk_buff *dst, const struct sk_buff *src);
void __nsl_xmit(struct sk_buff *skb, struct net_device *dev);
void __nsl_gso_segmented(struct sk_buff *orig, struct sk_buff *segs);
void __nsl_rx(struct sk_buff *skb);
void __nsl_rx_new(struct sk_buff *skb);
void __nsl_poll_begin(void);
void __nsl_rx_done(void);
DECLARE_PER_CPU(u64, nsl_poll_mark);
void __nsl_rx_sock(struct sk_buff *skb, struct sock *sk);
void __nsl_sock_event(struct sock *sk, int type, int bytes);
void __nsl_dgram(struct sk_buff *skb, struct sock *sk,
		 const struct flowi4 *fl4);
void __nsl_dgram6(struct sk_buff *skb, struct sock *sk,
		  const struct flowi6 *fl6);
void __nsl_forward(struct sk_buff *skb);
void __nsl_ext_reset(struct sk_buff *skb);
void __nsl_coalesced(struct sk_buff *skb);
void __nsl_collapsed(struct sk_buff *skb);
void nsl_ext_release(struct skb_ext *ext, void *blk);
/* Collection stopped: the extensions skbuff.c kept go back to the slab. */
void skb_ext_netslice_drain(void);
void nsl_ext_cow(const struct sk_buff *skb, void *new, void *old);
/* A copy of the block at @src, as far as it is written, to @dst. */
void nsl_ext_copy(void *dst, const void *src);

#define NSL_HOOK(call)						\
	do {							\
		if (static_branch_unlikely(&nsl_active))	\
			call;					\
	} while (0)

/*
 * Whether @skb carries a block while NetSlice collects.  The hooks that
 * act on a block (all but the NSIs) test it inline, so that the packets
 * nobody measures -- ACKs, those passed over at NSI -- pay no call: under
 * QEMU TCG, those calls and their TSC reads were a third of what
 * collecting added to a loopback round trip.
 */
static __always_inline bool nsl_block_on(const struct sk_buff *skb)
{
	return static_branch_unlikely(&nsl_active) &&
	       skb_ext_exist(skb, SKB_EXT_NETSLICE);
}

/*
 * @skb was passed over by the send side's choice on this host (sampled or
 * filtered out, or cost stage none), or not.  A receive path here takes
 * the choice as made: it reads no header and makes no block.  The mark
 * travels in the skb's headers (skb->nsl_passed, patch 0020) and is lost
 * where the skb is scrubbed, which only costs the choice again.
 */
static __always_inline bool nsl_passed(const struct sk_buff *skb)
{
	return skb->nsl_passed;
}

static __always_inline void nsl_pass(struct sk_buff *skb)
{
	skb->nsl_passed = 1;
}

/* A received skb that was not passed over at send: __nsl_rx() on it. */
static __always_inline void nsl_rx_hook(struct sk_buff *skb)
{
	if (static_branch_unlikely(&nsl_active) && !nsl_passed(skb))
		__nsl_rx(skb);
}

static __always_inline bool nsl_magnet_on(void)
{
	return static_branch_unlikely(&nsl_magnet);
}

/*
 * START of @region, from a hook that found the block, for a region with
 * no case of its own (nsl_region_own_case()): a step in the log inline,
 * or the core's entry.
 */
static __always_inline void nsl_start_on(int region, struct sk_buff *skb)
{
	if (static_branch_unlikely(&nsl_staged) ||
	    !nsl_log_start(nsl_block_known(skb), region, NSL_NOW))
		__nsl_start_on(region, skb);
}

/*
 * STOP of @region in @b at the time nsl_log_since() gave (@t, @late), as
 * nsl_start_on(): the step in the log, or the core's entry, at that time.
 */
static __always_inline void nsl_stop_since(struct nsl_skb_block *b,
					   int region, struct sk_buff *skb,
					   u32 t, u32 late)
{
	if (b->open.last[region] &&
	    unlikely(!nsl_log_stop_since(b, region, t, late)))
		__nsl_stop_at(region, skb, nsl_log_when(b, t, late));
}

/*
 * STOP, as nsl_start_on(): the TSC read as soon as the block's address
 * is known (three instructions), the record found after.
 */
static __always_inline void nsl_stop_on(int region, struct sk_buff *skb)
{
	struct nsl_skb_block *b;
	u32 t, late;

	if (static_branch_unlikely(&nsl_staged)) {
		__nsl_stop_on(region, skb);
		return;
	}
	b = nsl_block_known(skb);
	t = nsl_log_since(b, &late);
	nsl_stop_since(b, region, skb, t, late);
}

/*
 * NEXT of @from, open in @b, into @to (below NSL_LOG_NEXT_MAX): one entry
 * at one TSC read, where the log takes a START of @to (nstart has room,
 * so the block keeps a log with room) and the time fits an entry; false,
 * having changed nothing, else.  A copy checks the counts against the
 * entries (nsl_log_counted()): they move in an order, the entry's count
 * last, where no part of the step makes them agree before the whole.
 */
static __always_inline bool nsl_log_next(struct nsl_skb_block *b, int from,
					 int to)
{
	u32 t, late;

	if (unlikely(b->nstart >= NET_SLICE_CONF))
		return false;
	t = nsl_log_since(b, &late);
	if (unlikely(late))
		return false;
	b->nstart++;
	b->open.last[from]--;
	barrier();
	b->open.last[to]++;
	b->nnext++;
	barrier();
	nsl_log_store_high(b, nsl_log_high_arg(NSL_LOG_NEXT, from, to, 0), t);
	return true;
}

/*
 * STOP of @from and START of @to, where one region hands over to the
 * next: one lookup, and where @from is open and the log takes both, one
 * step (NEXT) at one TSC read.  Else a STOP, if @from is open, and a
 * START, the TSC read for each.
 */
static __always_inline void nsl_next_on(int from, int to, struct sk_buff *skb)
{
	struct nsl_skb_block *b;
	u32 t, late;

	if (static_branch_unlikely(&nsl_staged)) {
		__nsl_stop_on(from, skb);
		__nsl_start_on(to, skb);
		return;
	}
	b = nsl_block_known(skb);
	if (b->open.last[from]) {
		if (to < NSL_LOG_NEXT_MAX && likely(nsl_log_next(b, from, to)))
			return;
		t = nsl_log_since(b, &late);
		nsl_stop_since(b, from, skb, t, late);
	}
	if (!nsl_log_start(b, to, NSL_NOW))
		__nsl_start_on(to, skb);
}

/*
 * Whether @b went out already: nothing is left to record or emit.  A
 * TCP skb given back to its CPU (skb_attempt_defer_free()) had its NSE
 * there and meets NSE again as it is freed at last; and the extension's
 * release follows every emission.
 */
static __always_inline bool nsl_emitted_already(const struct nsl_skb_block *b)
{
	return READ_ONCE(b->state) & BIT(NSL_ST_EMITTED);
}

/*
 * NSE: only the skb that took its block to a driver (or a received one)
 * emits it, once.  The others -- the write queue's skb freed at its ACK,
 * a deferred skb's final free -- return here: under QEMU TCG, their calls
 * were two thirds of __nsl_exit()'s, at 20 instructions each.
 */
static __always_inline void nsl_exit_hook(struct sk_buff *skb)
{
	const struct nsl_skb_block *b;

	if (!nsl_block_on(skb))
		return;
	b = nsl_block_known(skb);
	if (b->owner == skb && !nsl_emitted_already(b))
		__nsl_exit(skb);
}

/*
 * Where the stack drops an skb's extensions: all but the block go (one
 * call, at places -- a namespace crossing -- that cost far more).
 */
#define NET_SLICE_EXT_RESET(skb)	__nsl_ext_reset(skb)
/* Whether NetSlice collects: guards a loop of hooks. */
#define NET_SLICE_ON()			static_branch_unlikely(&nsl_active)
/* A NAPI poll ends: unconditional, one per-CPU store per poll. */
#define NET_SLICE_POLL_END()		this_cpu_write(nsl_poll_mark, 0)

#else /* !CONFIG_NETSLICE */

#define NET_SLICE_CONF			0

static inline void __nsl_init(struct sk_buff *skb, int dir) {}
static inline void __nsl_init_sk(struct sk_buff *skb, struct sock *sk) {}
static inline void __nsl_start(int region, struct sk_buff *skb) {}
static inline void __nsl_start_link(struct sk_buff *skb) {}
static inline void __nsl_stop(int region, struct sk_buff *skb) {}
static inline void nsl_start_on(int region, struct sk_buff *skb) {}
static inline void nsl_stop_on(int region, struct sk_buff *skb) {}
static inline void nsl_next_on(int from, int to, struct sk_buff *skb) {}
static inline void __nsl_exit(struct sk_buff *skb) {}
static inline void nsl_exit_hook(struct sk_buff *skb) {}
static inline void __nsl_tx_fork(struct sk_buff *skb, struct sock *sk) {}
static inline void __nsl_tx_retrans(struct sk_buff *skb) {}
static inline void __nsl_copy(struct sk_buff *to,
			      const struct sk_buff *from) {}
static inline void __nsl_eat(struct sk_buff *dst,
			     const struct sk_buff *src) {}
static inline void __nsl_xmit(struct sk_buff *skb, struct net_device *dev) {}
static inline void __nsl_gso_segmented(struct sk_buff *orig,
				       struct sk_buff *segs) {}
static inline void __nsl_rx(struct sk_buff *skb) {}
static inline void __nsl_rx_new(struct sk_buff *skb) {}
static inline void __nsl_poll_begin(void) {}
static inline void __nsl_rx_done(void) {}
static inline void __nsl_rx_sock(struct sk_buff *skb, struct sock *sk) {}
static inline void __nsl_sock_event(struct sock *sk, int type, int bytes) {}
static inline void __nsl_dgram(struct sk_buff *skb, struct sock *sk,
			       const struct flowi4 *fl4) {}
static inline void __nsl_dgram6(struct sk_buff *skb, struct sock *sk,
				const struct flowi6 *fl6) {}
static inline void __nsl_forward(struct sk_buff *skb) {}
static inline void __nsl_coalesced(struct sk_buff *skb) {}
static inline void __nsl_collapsed(struct sk_buff *skb) {}

#define NET_SLICE_EXT_RESET(skb)	skb_ext_reset(skb)
#define NET_SLICE_POLL_END()		do { } while (0)
#define NET_SLICE_ON()			false

/* Compiled out: the calls below are empty inlines. */
#define NSL_HOOK(call)			call

static inline bool nsl_block_on(const struct sk_buff *skb)
{
	return false;
}

static inline bool nsl_magnet_on(void)
{
	return false;
}

#endif /* CONFIG_NETSLICE */

/*
 * The hooks that act on a block: nothing to do for an skb without one.
 * One wrapper per signature; @fn is a constant at every site, so the
 * inlined call is direct.
 */
static __always_inline void nsl_skb_hook(void (*fn)(struct sk_buff *),
					 struct sk_buff *skb)
{
	if (nsl_block_on(skb))
		fn(skb);
}

/*
 * The regions whose START or STOP has a case of its own (core.c): the
 * link's device at its START, MAGNeT's send events at ip while they are
 * kept.  Every other region's step is inline (nsl_start_on() and its
 * kin), the core's plainer entries its way out.
 */
static __always_inline bool nsl_region_own_case(int id)
{
	return id == NSL_R_LINK || (id == NSL_R_IP && nsl_magnet_on());
}

static __always_inline void nsl_start_hook(int id, struct sk_buff *skb)
{
	if (!nsl_block_on(skb))
		return;
	if (id == NSL_R_LINK)
		__nsl_start_link(skb);
	else if (nsl_region_own_case(id))
		__nsl_start(id, skb);
	else
		nsl_start_on(id, skb);
}

static __always_inline void nsl_stop_hook(int id, struct sk_buff *skb)
{
	if (!nsl_block_on(skb))
		return;
	if (nsl_region_own_case(id))
		__nsl_stop(id, skb);
	else
		nsl_stop_on(id, skb);
}

/* @from ends where @to begins: one lookup, where neither has a case. */
static __always_inline void nsl_next_hook(int from, int to,
					  struct sk_buff *skb)
{
	if (nsl_region_own_case(from) || nsl_region_own_case(to)) {
		nsl_stop_hook(from, skb);
		nsl_start_hook(to, skb);
	} else if (nsl_block_on(skb)) {
		nsl_next_on(from, to, skb);
	}
}

static __always_inline void
nsl_sock_hook(void (*fn)(struct sk_buff *, struct sock *),
	      struct sk_buff *skb, struct sock *sk)
{
	if (nsl_block_on(skb))
		fn(skb, sk);
}

/* @from's block goes to (or into) @to's skb. */
static __always_inline void
nsl_from_hook(void (*fn)(struct sk_buff *, const struct sk_buff *),
	      struct sk_buff *to, const struct sk_buff *from)
{
	if (nsl_block_on(from))
		fn(to, from);
}

static __always_inline void nsl_xmit_hook(struct sk_buff *skb,
					  struct net_device *dev)
{
	if (nsl_block_on(skb))
		__nsl_xmit(skb, dev);
}

static __always_inline void nsl_gso_hook(struct sk_buff *orig,
					 struct sk_buff *segs)
{
	if (nsl_block_on(orig))
		__nsl_gso_segmented(orig, segs);
}

#define NET_SLICE_INIT(skb, dir)	NSL_HOOK(__nsl_init(skb, dir))
/* NSI of a socket's new skb to send: its flow is the socket's. */
#define NET_SLICE_INIT_SK(skb, sk)	NSL_HOOK(__nsl_init_sk(skb, sk))
#define NET_SLICE_START(id, skb)	nsl_start_hook(id, skb)
#define NET_SLICE_STOP(id, skb)		nsl_stop_hook(id, skb)
/* STOP of @from and START of @to, at the same place. */
#define NET_SLICE_NEXT(from, to, skb)	nsl_next_hook(from, to, skb)
#define NET_SLICE_EXIT(skb)		nsl_exit_hook(skb)
/*
 * The clone TCP hands to IP becomes the block that is emitted, and its
 * tcp region starts (the header is built next).
 */
#define NET_SLICE_TX_FORK(skb, sk)	nsl_sock_hook(__nsl_tx_fork, skb, sk)
/* Where TCP counts a retransmission: its next fork is one. */
#define NET_SLICE_TX_RETRANS(skb)	nsl_skb_hook(__nsl_tx_retrans, skb)
/* A new skb split off another one gets its own copy of the block. */
#define NET_SLICE_COPY(to, from)	nsl_from_hook(__nsl_copy, to, from)
/* TCP moved all of @src's data into @dst and frees @src. */
#define NET_SLICE_EAT(dst, src)		nsl_from_hook(__nsl_eat, dst, src)
/* The skb that enters the driver: stops link and write, starts nic. */
#define NET_SLICE_XMIT(skb, dev)	nsl_xmit_hook(skb, dev)
#define NET_SLICE_GSO(orig, segs)	nsl_gso_hook(orig, segs)
/* Whether @skb carries a block (UDP then keeps its extensions). */
#define NET_SLICE_HAS_BLOCK(skb)	nsl_block_on(skb)
/* The stack takes a received skb: stops rx-nic, starts rx-link. */
#define NET_SLICE_RX(skb)		nsl_rx_hook(skb)
/* The same, where only an skb without a block is a driver's new one. */
#define NET_SLICE_RX_NEW(skb)		NSL_HOOK(__nsl_rx_new(skb))
/* A driver's NAPI poll begins; a hand-off to the stack returned. */
#define NET_SLICE_POLL_BEGIN()		NSL_HOOK(__nsl_poll_begin())
#define NET_SLICE_RX_DONE()		NSL_HOOK(__nsl_rx_done())
/* A received skb reaches its socket: its connection is known. */
#define NET_SLICE_SK(skb, sk)		nsl_sock_hook(__nsl_rx_sock, skb, sk)
/* The application wrote or read @bytes (MAGNeT socket events). */
#define NET_SLICE_SOCK(sk, type, bytes)				\
	do {								\
		if (nsl_magnet_on())					\
			NSL_HOOK(__nsl_sock_event(sk, type, bytes));	\
	} while (0)

/* A datagram's first skb (UDP, IPv4 or IPv6): its block, write opens. */
#define NET_SLICE_DGRAM(skb, sk, fl4)	NSL_HOOK(__nsl_dgram(skb, sk, fl4))
#define NET_SLICE_DGRAM6(skb, sk, fl6)	NSL_HOOK(__nsl_dgram6(skb, sk, fl6))
/* A device's xmit hands @skb to a receive path (veth): nic ends. */
#define NET_SLICE_FORWARD(skb)		nsl_skb_hook(__nsl_forward, skb)

/*
 * A received skb's data joined another skb (tcp_try_coalesce(), the
 * socket backlog's tail): freed next, it has no queue or copy of its own.
 */
#define NET_SLICE_COALESCED(skb)	nsl_skb_hook(__nsl_coalesced, skb)
/*
 * The same where TCP collapses a queue under memory pressure
 * (tcp_collapse()): the data was copied into a new skb, and its time in
 * the queue ends here.
 */
#define NET_SLICE_COLLAPSED(skb)	nsl_skb_hook(__nsl_collapsed, skb)

#endif /* _LINUX_NETSLICE_H */
