// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice core: which packets get a block.
 *
 * A reader that wants one flow, or 1 in N packets, should cost the others
 * nothing: the choice is made where a block would be made (NSI), before
 * the skb extension is allocated.  Two choices are made, in this order:
 *
 *  - the reader's filter, when it reads only the flow (NSL_FILTER_FLOW):
 *    the receiver's admit() over the flow, which NSI knows on the send
 *    side from a TCP socket or a datagram's route (flowi4, flowi6) and on
 *    the receive side from the headers;
 *  - sampling (NSIOCSSAMPLE): 1 in N packets at random, or 1 in N flows
 *    by a hash that is the same for both directions of a flow.
 *
 * Where NSI does not know the flow (a frame whose IP header is not yet in
 * the linear data, or whose VLAN tag is not yet taken off), the block is
 * made and the choice that needs the flow is made
 * before the ring instead (nsl_pick_emit()), with the same function: the
 * outcome for a packet does not depend on where it was decided.  What was
 * decided travels in the block (nsl_skb_block.picked), and so with every
 * copy of it.
 *
 * A packet that crosses loopback or a veth keeps the choice its send side
 * (or its first receive, for one forwarded into a container) made: one
 * that arrives there without a block was passed over already, unless it
 * is one no NSI saw before (a TCP segment without payload: an ACK, a SYN).
 *
 * A receiver that stops collecting pauses NSI (nsl_pick_pause()): no
 * packet gets a block, while the hooks stay on for the blocks in flight
 * until the receiver turns them off, where that costs no one a packet's
 * worth of time (nsl_set_active(false): patching every hook site costs
 * about 150,000 instructions under QEMU TCG, as much as 300 lat_tcp round
 * trips collected).
 *
 * The setting is read without a lock: a packet in flight while it changes
 * is decided by the old setting or the new one.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/spinlock.h>
#include <linux/jhash.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/string.h>
#include <net/sock.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/dsfield.h>
#include <linux/rtnetlink.h>

#include "core.h"
#include "headers.h"

/*
 * Sampling, as set by nsl_sample_set(): rate in the low half, flags in
 * the high half, one word so that a reader never sees a rate with the
 * other setting's flags.  The seed makes the flow hash unguessable from
 * outside (no crafted flow can be sure to be seen or hidden).
 */
static u64 nsl_sample_conf;
static u32 nsl_sample_seed;
static bool nsl_filter_at_init;
/* The receiver's admit() may refuse a flow (nsl_pick_filter_set()). */
static bool nsl_filter_any = true;
/* No packet gets a block (nsl_pick_pause()). */
bool nsl_paused;
/*
 * None of the three above chooses: every packet gets a block.  One byte
 * for a socket's NSI to test, where nsl_pick_way() reads three settings
 * in a call; each setter writes its own and then this, under the lock,
 * so that two setters cannot leave it as neither of them found it.
 */
bool nsl_pick_every = true;
static DEFINE_SPINLOCK(nsl_pick_lock);

/* Packets this CPU may pass over before it takes the next one. */
static DEFINE_PER_CPU(int, nsl_sample_left);
/* The state of this CPU's draws of that length (nsl_sample_draw()). */
static DEFINE_PER_CPU(u64, nsl_sample_rnd);
static DEFINE_PER_CPU(u64, nsl_sample_taken);
static DEFINE_PER_CPU(u64, nsl_sample_skipped);

static inline u32 nsl_conf_rate(u64 conf)
{
	return (u32)conf;
}

static inline bool nsl_conf_flows(u64 conf)
{
	return (conf >> 32) & NSL_SAMPLE_FLOWS;
}

/* Where the headers go in @f. */
static __always_inline struct nsl_hdr_dst
nsl_flow_dst(struct nsl_filter_flow *f)
{
	return (struct nsl_hdr_dst) {
		.family = &f->family, .proto = &f->proto,
		.sport = &f->sport, .dport = &f->dport,
		.tcp_seq = &f->tcp_seq,
		.saddr = f->saddr, .daddr = f->daddr, .addrs = true,
	};
}

/*
 * The headers of @skb, its IP header at @nh (headers.h): the flow, header
 * lengths, the transport payload, and what MAGNeT's IP events keep
 * (length, TOS, TTL, id, fragment offset).  False when no IP header is in
 * the linear data; h->ports false when no transport header is.
 */
bool nsl_parse(const struct sk_buff *skb, const u8 *nh, struct nsl_hdrs *h)
{
	struct nsl_hdr_dst d;
	enum nsl_hdr_found found;

	memset(h, 0, sizeof(*h));
	d = nsl_flow_dst(&h->f);
	d.nhlen = &h->nhlen;
	d.thlen = &h->thlen;
	found = nsl_read_headers(skb, nh, d);
	if (found == NSL_HDR_NONE)
		return false;
	if (h->f.family == AF_INET) {
		const struct iphdr *iph = (const struct iphdr *)nh;

		h->iplen = ntohs(iph->tot_len);
		h->ip_id = ntohs(iph->id);
		h->frag_off = ntohs(iph->frag_off);
		h->tos = iph->tos;
		h->ttl = iph->ttl;
	} else {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)nh;

		h->iplen = sizeof(*ip6) + ntohs(ip6->payload_len);
		h->tos = ipv6_get_dsfield(ip6);
		h->ttl = ip6->hop_limit;
	}
	h->ports = found == NSL_HDR_PORTS;
	if (h->ports)
		h->payload = nsl_payload(skb, nh, h->f.family,
					 h->nhlen + h->thlen);
	return true;
}

/*
 * The flow of a connected socket @sk, as its packets' headers will say;
 * false when the socket has no peer (each datagram names its own).
 */
static bool nsl_sk_flow(const struct sock *sk, struct nsl_filter_flow *f)
{
	memset(f, 0, sizeof(*f));
	return nsl_read_sk(sk, nsl_flow_dst(f));
}

/* The same for both directions: the two ends combine symmetrically. */
static u32 nsl_flow_hash(const struct nsl_filter_flow *f, u32 seed)
{
	u32 a = jhash(f->saddr, sizeof(f->saddr), f->sport ^ seed);
	u32 b = jhash(f->daddr, sizeof(f->daddr), f->dport ^ seed);

	return jhash_3words(a ^ b, a + b, (u32)f->family << 16 | f->proto,
			    seed);
}

/*
 * A number in 0 .. @n - 1 from this CPU's xorshift64 generator (Marsaglia,
 * shifts 13, 7, 17), seeded from the kernel's CRNG by nsl_sample_set().
 * Not get_random_u32_below(): each draw from the CRNG cost a packet about
 * 130 instructions under QEMU TCG (a ChaCha block per 16 words), and a
 * sampling length needs no secrecy -- only no relation to the traffic
 * (the flow hash, which an outsider could aim at, keeps its secret seed).
 * Not prandom_u32_state(): its state is four words that an interrupt
 * could update halfway; this one is a word read and written whole, so a
 * draw interleaved with another at worst repeats a number.
 */
static u32 nsl_sample_draw(u32 n)
{
	u64 x = this_cpu_read(nsl_sample_rnd);

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	this_cpu_write(nsl_sample_rnd, x);
	return reciprocal_scale((u32)(x >> 32), n);
}

/*
 * 1 in @rate at random: a countdown per CPU, reloaded with a length drawn
 * uniformly from 1 .. 2 * rate - 1 (mean @rate), so that no period in the
 * traffic (every other packet an ACK, say) lines up with the sampling.
 */
static bool nsl_sample_packet(u32 rate)
{
	if (this_cpu_dec_return(nsl_sample_left) > 0)
		return false;
	this_cpu_write(nsl_sample_left, nsl_sample_draw(2 * rate - 1) + 1);
	return true;
}

/*
 * The sampling choice for a packet of flow @f (NULL: not known here).
 * Sets NSL_PK_SAMPLE in *@picked when made; false: passed over.
 */
static bool nsl_sample(const struct nsl_filter_flow *f, u8 *picked)
{
	u64 conf = READ_ONCE(nsl_sample_conf);
	u32 rate = nsl_conf_rate(conf);
	bool take;

	if (rate <= 1) {
		*picked |= NSL_PK_SAMPLE;
		return true;
	}
	if (nsl_conf_flows(conf)) {
		if (!f)
			return true;
		take = !reciprocal_scale(nsl_flow_hash(f,
						 READ_ONCE(nsl_sample_seed)),
					 rate);
	} else {
		take = nsl_sample_packet(rate);
	}
	*picked |= NSL_PK_SAMPLE;
	if (take)
		this_cpu_inc(nsl_sample_taken);
	else
		this_cpu_inc(nsl_sample_skipped);
	return take;
}

/* The receiver's verdict on flow @f; the caller holds rcu_read_lock(). */
static bool nsl_admit_flow(const struct nsl_filter_flow *f)
{
	const struct nsl_receiver *rcv = nsl_receiver();

	return !rcv || !rcv->admit || rcv->admit(f, rcv->priv);
}

/*
 * Whether a packet of flow @f (NULL: not known at this NSI) gets a block;
 * *@picked says what was decided (NSL_PK_*), to be kept in its block.
 */
static bool nsl_pick(const struct nsl_filter_flow *f, u8 *picked)
{
	bool ok = true;

	*picked = NSL_PK_SEEN;
	if (f) {
		/*
		 * The flag is read where the program is: a module that turns
		 * it off waits for a grace period before it changes the
		 * program (filter.c), so no other program runs here.
		 */
		rcu_read_lock();
		if (READ_ONCE(nsl_filter_at_init)) {
			ok = nsl_admit_flow(f);
			*picked |= NSL_PK_FILTER;
		}
		rcu_read_unlock();
		if (!ok)
			return false;
	}
	return nsl_sample(f, picked);
}

/* What an NSI has to decide, from the settings read once. */
enum nsl_pick_way {
	NSL_PICK_ALL,		/* nothing: every packet gets a block */
	NSL_PICK_NONE,		/* nothing: collection is paused */
	NSL_PICK_FLOW,		/* on the flow: the filter, or flows sampled */
	NSL_PICK_SAMPLE,	/* 1 in N packets, the flow not needed */
};

static __always_inline enum nsl_pick_way nsl_pick_way(void)
{
	u64 conf = READ_ONCE(nsl_sample_conf);

	if (nsl_collect_paused())
		return NSL_PICK_NONE;
	/* nsl_sample_set() sets flows only with a rate */
	if (READ_ONCE(nsl_filter_at_init) || nsl_conf_flows(conf))
		return NSL_PICK_FLOW;
	return nsl_conf_rate(conf) > 1 ? NSL_PICK_SAMPLE : NSL_PICK_ALL;
}

/* After a setting changed, under nsl_pick_lock. */
static void nsl_pick_every_update(void)
{
	lockdep_assert_held(&nsl_pick_lock);
	WRITE_ONCE(nsl_pick_every, nsl_pick_way() == NSL_PICK_ALL);
}

/* nsl_pick() on @sk's flow, out of line as nsl_pick_rx_flow() is. */
static noinline bool nsl_pick_sk_flow(const struct sock *sk, u8 *picked)
{
	struct nsl_filter_flow f;

	return nsl_pick(nsl_sk_flow(sk, &f) ? &f : NULL, picked);
}

bool nsl_pick_sk(const struct sock *sk, u8 *picked)
{
	/* Sampling off, and any filter left for the ring (nsl_pick_emit()). */
	*picked = NSL_PK_SEEN | NSL_PK_SAMPLE;
	switch (nsl_pick_way()) {
	case NSL_PICK_ALL:
		return true;
	case NSL_PICK_NONE:
		return false;
	case NSL_PICK_FLOW:
		return nsl_pick_sk_flow(sk, picked);
	default:
		return nsl_pick(NULL, picked);
	}
}

bool nsl_pick_flow(const struct nsl_filter_flow *f, u8 *picked)
{
	*picked = NSL_PK_SEEN | NSL_PK_SAMPLE;
	switch (nsl_pick_way()) {
	case NSL_PICK_ALL:
		return true;
	case NSL_PICK_NONE:
		return false;
	default:
		return nsl_pick(f, picked);
	}
}

/*
 * Whether a packet that reaches a receive NSI through @dev without a block
 * came from this host's own send side: it crossed loopback or a veth, or
 * a bridge hands it up to its host.
 */
static bool nsl_dev_relays(const struct net_device *dev)
{
	return dev && (dev->flags & IFF_LOOPBACK ||
		       netif_is_bridge_master(dev) ||
		       (dev->rtnl_link_ops &&
			!strcmp(dev->rtnl_link_ops->kind, "veth")));
}

/*
 * Such a packet was passed over by an NSI before this one if it is one an
 * NSI sees -- a datagram, or a TCP segment with payload (@proto, its
 * headers @hdrs bytes) -- and not if it was sent without one (an ACK, a
 * SYN, an ICMP message, ARP).  Deciding again would count it twice.
 */
static bool nsl_seen_at_nsi(const struct sk_buff *skb, u16 family,
			    u16 proto, u32 hdrs)
{
	return proto != IPPROTO_TCP ||
	       nsl_payload(skb, skb->data, family, hdrs);
}

/*
 * The choice on the flow the headers say, out of line: the flow is built
 * on the stack (and zeroed first, in a kernel that zeroes locals) only
 * where the choice reads it.
 */
static noinline bool nsl_pick_rx_flow(const struct sk_buff *skb,
				      bool relayed, u8 *picked)
{
	struct nsl_filter_flow f;
	struct nsl_hdr_dst d;
	u16 nhlen, thlen;

	memset(&f, 0, sizeof(f));
	d = nsl_flow_dst(&f);
	d.nhlen = &nhlen;
	d.thlen = &thlen;
	switch (nsl_read_headers(skb, skb->data, d)) {
	case NSL_HDR_NONE:
		return nsl_pick(NULL, picked);
	case NSL_HDR_PORTS:
		if (relayed &&
		    nsl_seen_at_nsi(skb, f.family, f.proto, nhlen + thlen))
			return false;
		fallthrough;
	default:
		return nsl_pick(&f, picked);
	}
}

bool nsl_pick_rx(const struct sk_buff *skb, u8 *picked)
{
	u16 family, proto, nhlen, thlen, sport, dport;
	u32 seq;
	/* Without the flow: no addresses, and the ports are dropped. */
	const struct nsl_hdr_dst d = {
		.family = &family, .proto = &proto,
		.nhlen = &nhlen, .thlen = &thlen,
		.sport = &sport, .dport = &dport, .tcp_seq = &seq,
	};
	enum nsl_pick_way way = nsl_pick_way();
	bool relayed;

	/* Sampling off, and any filter left for the ring (nsl_pick_emit()). */
	*picked = NSL_PK_SEEN | NSL_PK_SAMPLE;
	if (way == NSL_PICK_ALL)
		return true;
	if (way == NSL_PICK_NONE)
		return false;
	relayed = nsl_dev_relays(skb->dev);
	if (way == NSL_PICK_FLOW)
		return nsl_pick_rx_flow(skb, relayed, picked);
	if (relayed &&
	    nsl_read_headers(skb, skb->data, d) == NSL_HDR_PORTS &&
	    nsl_seen_at_nsi(skb, family, proto, nhlen + thlen))
		return false;
	/* nsl_pick() reads no flow when it is not wanted. */
	return nsl_pick(NULL, picked);
}

/* nsl_pick_emit()'s decision on the block's flow, built here. */
static noinline bool nsl_pick_emit_flow(const struct nsl_block *blk,
					u8 picked)
{
	struct nsl_filter_flow f = {
		.family = blk->family,
		.proto = blk->proto,
		.sport = blk->sport,
		.dport = blk->dport,
		.len = blk->len,
		.tcp_seq = blk->tcp_seq,
	};

	memcpy(f.saddr, blk->saddr, sizeof(f.saddr));
	memcpy(f.daddr, blk->daddr, sizeof(f.daddr));
	if (!(picked & NSL_PK_FILTER) && !nsl_admit_flow(&f))
		return false;
	if (picked & NSL_PK_SAMPLE)
		return true;
	/* A flow still unknown (no IP header) is a flow of its own. */
	if (!nsl_sample(&f, &picked))
		return false;
	return true;
}

/*
 * Before the ring: what NSI could not decide, decided on the flow the
 * block now has.  Called under rcu_read_lock().  Most blocks were decided
 * whole at NSI, or there is nothing to decide: no flow is built for them
 * (its stack zeroed first, in a kernel that zeroes locals, cost as much).
 */
bool nsl_pick_emit(const struct nsl_block *blk, u8 picked)
{
	if ((picked & NSL_PK_SAMPLE) &&
	    ((picked & NSL_PK_FILTER) || !READ_ONCE(nsl_filter_any)))
		return true;
	return nsl_pick_emit_flow(blk, picked);
}

/*
 * Collection stops (@on) or starts again: while paused, no NSI makes a
 * block and no socket event is kept; the blocks made before go on to NSE.
 */
void nsl_pick_pause(bool on)
{
	spin_lock(&nsl_pick_lock);
	WRITE_ONCE(nsl_paused, on);
	nsl_pick_every_update();
	spin_unlock(&nsl_pick_lock);
}
EXPORT_SYMBOL_GPL(nsl_pick_pause);

void nsl_pick_filter_at_init(bool on)
{
	spin_lock(&nsl_pick_lock);
	WRITE_ONCE(nsl_filter_at_init, on);
	nsl_pick_every_update();
	spin_unlock(&nsl_pick_lock);
}
EXPORT_SYMBOL_GPL(nsl_pick_filter_at_init);

/*
 * Whether the receiver's admit() may refuse anything: off, the blocks NSI
 * decided whole leave without asking it.  A receiver turns it on before
 * it can refuse, and off once it no longer does.
 */
void nsl_pick_filter_set(bool any)
{
	WRITE_ONCE(nsl_filter_any, any);
}
EXPORT_SYMBOL_GPL(nsl_pick_filter_set);

int nsl_sample_set(u32 rate, u32 flags)
{
	int cpu;

	if (flags & ~NSL_SAMPLE_FLOWS || rate > NSL_SAMPLE_RATE_MAX)
		return -EINVAL;
	if (rate <= 1) {
		rate = 0;
		flags = 0;
	}
	WRITE_ONCE(nsl_sample_seed, get_random_u32());
	for_each_possible_cpu(cpu) {
		/* xorshift never leaves 0: a nonzero seed */
		per_cpu(nsl_sample_rnd, cpu) = get_random_u64() | 1;
		per_cpu(nsl_sample_left, cpu) = rate ?
			get_random_u32_below(rate) + 1 : 0;
		per_cpu(nsl_sample_taken, cpu) = 0;
		per_cpu(nsl_sample_skipped, cpu) = 0;
	}
	spin_lock(&nsl_pick_lock);
	WRITE_ONCE(nsl_sample_conf, (u64)flags << 32 | rate);
	nsl_pick_every_update();
	spin_unlock(&nsl_pick_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(nsl_sample_set);

void nsl_sample_get(struct nsl_sample *s)
{
	u64 conf = READ_ONCE(nsl_sample_conf);
	int cpu;

	memset(s, 0, sizeof(*s));
	s->rate = nsl_conf_rate(conf) ? nsl_conf_rate(conf) : 1;
	s->flags = (u32)(conf >> 32);
	for_each_possible_cpu(cpu) {
		s->taken += READ_ONCE(per_cpu(nsl_sample_taken, cpu));
		s->skipped += READ_ONCE(per_cpu(nsl_sample_skipped, cpu));
	}
}
EXPORT_SYMBOL_GPL(nsl_sample_get);
