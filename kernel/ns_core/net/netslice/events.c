// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice event records: MAGNeT's per-layer events, from the same hooks
 * as the blocks.
 *
 * Send events are produced as the data crosses each layer: the socket
 * event in sendmsg() carries what the application asked for, the TCP, IP
 * and device events what the stack made of it.  A received packet meets
 * its socket only in TCP or UDP, so its device and IP events come there,
 * stamped with the times its block recorded for them.
 *
 * Which records, and how much state they carry, is chosen at run time
 * (NSIOCSRECORDS); addresses and ports only when asked for.
 */

#include <linux/netslice.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#include <net/inet_sock.h>
#include <linux/sock_diag.h>

#include "core.h"

/* NSL_REC_* flags in force; written by nsl_records_set(), read anywhere. */
u32 nsl_rec_flags;

/*
 * NSL_REC_ON's mirror in the hooks (linux/netslice.h), kept with the
 * flags under nsl_rec_lock.  A packet in flight as it changes may miss an
 * event, as one does as the flags change.
 */
DEFINE_STATIC_KEY_FALSE(nsl_magnet);
EXPORT_SYMBOL_GPL(nsl_magnet);
static DEFINE_MUTEX(nsl_rec_lock);

int nsl_records_set(const struct nsl_record_opts *opts)
{
	if (opts->pad || opts->flags & ~NSL_REC_ALL)
		return -EINVAL;
	/*
	 * State without the records themselves makes no sense; the blocks'
	 * addresses are asked for on their own.
	 */
	if ((opts->flags & ~NSL_REC_FLOWADDR) && !(opts->flags & NSL_REC_ON))
		return -EINVAL;
	mutex_lock(&nsl_rec_lock);
	WRITE_ONCE(nsl_rec_flags, opts->flags);
	if (opts->flags & NSL_REC_ON)
		static_branch_enable(&nsl_magnet);
	else
		static_branch_disable(&nsl_magnet);
	mutex_unlock(&nsl_rec_lock);
	return 0;
}
EXPORT_SYMBOL_GPL(nsl_records_set);

/*
 * A socket's ports and addresses (IPv6 ones in saddr6/daddr6); a packet's
 * own addresses, if the event has one, replace these.
 */
static void nsl_fill_sk_addrs(struct nsl_event_rec *ev, const struct sock *sk)
{
	ev->tcp.sport = ntohs(inet_sk(sk)->inet_sport);
	ev->tcp.dport = ntohs(inet_sk(sk)->inet_dport);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_rcv_saddr) &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr)) {
		memcpy(ev->saddr6, &sk->sk_v6_rcv_saddr, sizeof(ev->saddr6));
		memcpy(ev->daddr6, &sk->sk_v6_daddr, sizeof(ev->daddr6));
		ev->flags |= NSL_EVF_ADDR6;
		return;
	}
#endif
	ev->ip.saddr = inet_sk(sk)->inet_saddr;
	ev->ip.daddr = inet_sk(sk)->inet_daddr;
}

static void nsl_fill_tcp(struct nsl_event_rec *ev, const struct sock *sk,
			 u32 flags)
{
	const struct inet_connection_sock *icsk = inet_csk(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	struct nsl_tcp_state *t = &ev->tcp;

	t->snd_wnd = READ_ONCE(tp->snd_wnd);
	t->srtt_us = READ_ONCE(tp->srtt_us) >> 3;
	t->rto_us = jiffies_to_usecs(READ_ONCE(icsk->icsk_rto));
	t->packets_out = READ_ONCE(tp->packets_out);
	t->retrans_out = READ_ONCE(tp->retrans_out);
	t->total_retrans = READ_ONCE(tp->total_retrans);
	t->snd_ssthresh = READ_ONCE(tp->snd_ssthresh);
	t->snd_cwnd = tcp_snd_cwnd(tp);
	t->rcv_wnd = READ_ONCE(tp->rcv_wnd);
	t->write_seq = READ_ONCE(tp->write_seq);
	t->copied_seq = READ_ONCE(tp->copied_seq);
	t->mss = READ_ONCE(tp->mss_cache);
	t->state = READ_ONCE(sk->sk_state);
	t->ca_state = icsk->icsk_ca_state;
	if (flags & NSL_REC_ADDR)
		nsl_fill_sk_addrs(ev, sk);
	ev->flags |= NSL_EVF_TCP;
}

static bool nsl_sk_udp(const struct sock *sk)
{
	return sk->sk_protocol == IPPROTO_UDP ||
	       sk->sk_protocol == IPPROTO_UDPLITE;
}

/*
 * MAGNeT's IP fields, from the headers as nsl_parse() reads them.  IPv6:
 * version, traffic class, hop limit and next header in the same places;
 * no id or fragment offset; the addresses in saddr6 and daddr6.
 */
static void nsl_fill_ip(struct nsl_event_rec *ev, const struct sk_buff *skb,
			u32 flags)
{
	struct nsl_hdrs h;

	if (!nsl_parse(skb, skb_network_header(skb), &h))
		return;
	ev->ip.version = h.f.family == AF_INET6 ? 6 : 4;
	ev->ip.tos = h.tos;
	ev->ip.ttl = h.ttl;
	ev->ip.protocol = h.f.proto;
	ev->ip.id = h.ip_id;
	ev->ip.frag_off = h.frag_off;
	if ((flags & NSL_REC_ADDR) && h.f.family == AF_INET6) {
		memcpy(ev->saddr6, h.f.saddr, sizeof(ev->saddr6));
		memcpy(ev->daddr6, h.f.daddr, sizeof(ev->daddr6));
		ev->ip.saddr = 0;
		ev->ip.daddr = 0;
		ev->flags |= NSL_EVF_ADDR6;
	} else if (flags & NSL_REC_ADDR) {
		memcpy(&ev->ip.saddr, h.f.saddr, sizeof(ev->ip.saddr));
		memcpy(&ev->ip.daddr, h.f.daddr, sizeof(ev->ip.daddr));
		memset(ev->saddr6, 0, sizeof(ev->saddr6));
		memset(ev->daddr6, 0, sizeof(ev->daddr6));
		ev->flags &= ~NSL_EVF_ADDR6;
	}
	ev->flags |= NSL_EVF_IP;
	if (h.f.proto == IPPROTO_TCP && skb_transport_header_was_set(skb) &&
	    skb_transport_header(skb) + sizeof(struct tcphdr) <=
	    skb_tail_pointer(skb))
		ev->tcp.tcp_flags = ((const u8 *)tcp_hdr(skb))[13];
}

/*
 * The bytes of @skb's IP packet as its header says (the whole GRO
 * train's for a merged skb); the skb's own length where no header is.
 */
static u32 nsl_ip_len(const struct sk_buff *skb)
{
	struct nsl_hdrs h;

	if (!nsl_parse(skb, skb_network_header(skb), &h))
		return skb->len;
	return h.iplen;
}

/* Produces one event record (if records are on) and hands it over. */
void nsl_event(const struct sock *sk, const struct sk_buff *skb, int type,
	       u32 bytes, u64 tsc, u64 conn, u32 evflags)
{
	u32 flags = READ_ONCE(nsl_rec_flags);
	struct nsl_event_rec ev;

	if (!(flags & NSL_REC_ON))
		return;
	memset(&ev, 0, sizeof(ev));
	ev.hdr.kind = NSL_ITEM_EVENT;
	ev.hdr.size = sizeof(ev);
	ev.hdr.cpu = raw_smp_processor_id();
	ev.tsc = tsc;
	ev.conn = conn;
	ev.type = type;
	ev.bytes = bytes;
	ev.flags = evflags;
	if (sk && sk_fullsock(sk) && sk->sk_protocol == IPPROTO_TCP &&
	    (flags & (NSL_REC_TCP | NSL_REC_ADDR)))
		nsl_fill_tcp(&ev, sk, flags);
	else if (sk && sk_fullsock(sk) && nsl_sk_udp(sk) &&
		 (flags & NSL_REC_ADDR))
		nsl_fill_sk_addrs(&ev, sk);
	if (skb && (flags & (NSL_REC_IP | NSL_REC_ADDR)))
		nsl_fill_ip(&ev, skb, flags);
	if (!(flags & NSL_REC_TCP) && (ev.flags & NSL_EVF_TCP)) {
		/* Only the ports were asked for. */
		struct nsl_tcp_state ports = {
			.sport = ev.tcp.sport, .dport = ev.tcp.dport,
		};

		ev.tcp = ports;
		ev.flags &= ~NSL_EVF_TCP;
	}
	if (!(flags & NSL_REC_IP) && (ev.flags & NSL_EVF_IP)) {
		struct nsl_ip_fields addrs = {
			.saddr = ev.ip.saddr, .daddr = ev.ip.daddr,
		};

		ev.ip = addrs;
		ev.flags &= ~NSL_EVF_IP;
	}
	if (flags & NSL_REC_ADDR)
		ev.flags |= NSL_EVF_ADDR;
	nsl_deliver(&ev.hdr, NULL);
}

/* NET_SLICE_SOCK: the application's side of a connection. */
void __nsl_sock_event(struct sock *sk, int type, int bytes)
{
	/* Every write and read comes here: no TSC read unless it is kept. */
	if (bytes <= 0 || !nsl_records_on() || nsl_collect_paused())
		return;
	nsl_event(sk, NULL, type, bytes, nsl_now(), nsl_conn(sk), 0);
}
EXPORT_SYMBOL_GPL(__nsl_sock_event);

/*
 * A datagram's payload as its UDP header says, where the skb has one; the
 * bytes past the header otherwise.
 */
u32 nsl_udp_payload(const struct sk_buff *skb)
{
	const struct udphdr *uh;

	if (skb_transport_header_was_set(skb)) {
		uh = udp_hdr(skb);
		if ((const u8 *)(uh + 1) <= skb_tail_pointer(skb) &&
		    ntohs(uh->len) >= sizeof(*uh))
			return ntohs(uh->len) - sizeof(*uh);
	}
	return skb->len > sizeof(struct udphdr) ?
	       skb->len - sizeof(struct udphdr) : 0;
}

/* The time the block recorded for @region (its first START), or @dflt. */
static u64 nsl_region_tsc(const struct nsl_skb_block *b, int region, u64 dflt)
{
	const u64 *log = (const u64 *)b->blk.rec;
	int i;

	for (i = 0; b->nlog != NSL_NOLOG && i < b->nlog; i++)
		if (nsl_log_started(log[i]) == region)
			return b->blk.tsc0 + NSL_LOG_T(log[i]);
	for (i = 0; b->nlog == NSL_NOLOG && i < b->blk.nrec; i++)
		if (b->blk.rec[i].region == region)
			return b->blk.tsc0 + b->blk.rec[i].start;
	return dflt;
}

/*
 * The device, IP and TCP (or UDP) events of a received skb, its
 * connection known: MAGNeT's records, out of line.
 */
static noinline void nsl_rx_sock_events(struct sk_buff *skb, struct sock *sk,
					const struct nsl_skb_block *b)
{
	u64 now = nsl_now(), conn = nsl_conn(sk);

	/*
	 * What the device handed up, Ethernet header already pulled: for a
	 * GRO skb, all the frames merged into it.
	 */
	nsl_event(sk, skb, NSL_EV_DEV_RECV, nsl_ip_len(skb),
		  nsl_region_tsc(b, NSL_R_RX_NIC,
				 nsl_region_tsc(b, NSL_R_RX_LINK, now)), conn,
		  skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	nsl_event(sk, skb, NSL_EV_IP_RECV, nsl_ip_len(skb),
		  nsl_region_tsc(b, NSL_R_RX_IP, now), conn,
		  skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	/* TCP has pulled its header: what is left is the payload. */
	if (sk->sk_protocol == IPPROTO_TCP)
		nsl_event(sk, skb, NSL_EV_TCP_RECV, skb->len, now, conn,
			  skb_is_gso(skb) ? NSL_EVF_TSO : 0);
	else if (nsl_sk_udp(sk))
		nsl_event(sk, skb, NSL_EV_UDP_RECV, nsl_udp_payload(skb), now,
			  conn, skb_is_gso(skb) ? NSL_EVF_TSO : 0);
}

/*
 * NET_SLICE_SK: a received skb reaches its socket (before it is queued).
 * A receive block learns the connection (a send block that came over
 * loopback or a veth has its socket's already), and with records on the
 * device, IP and TCP events go out now that the connection is known.
 * The hook found the block; without records this is a leaf.
 */
void __nsl_rx_sock(struct sk_buff *skb, struct sock *sk)
{
	struct nsl_skb_block *b = nsl_block_known(skb);

	if (!(b->blk.flags & NSL_BF_RX))
		return;
	if (b->blk.dir == NSL_DIR_RX)
		b->blk.conn = nsl_conn(sk);
	if (unlikely(nsl_records_on()))
		nsl_rx_sock_events(skb, sk, b);
}
EXPORT_SYMBOL_GPL(__nsl_rx_sock);
