/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice core: a packet's IP and transport headers, found once.
 *
 * nsl_read_headers() reads them into the fields each user keeps, and no
 * others: a block's flow (block.c), the choice at a receive NSI (pick.c),
 * MAGNeT's IP fields (events.c, through nsl_parse()).  Inline, for a
 * block's flow is read once per packet: a parse into a struct of every
 * field, copied on into the block, cost three times what the block keeps
 * (under QEMU TCG, 167 instructions a packet against 60).
 *
 * Headers are read in the linear data only: a block's flow is worth no
 * pull.  An IPv6 packet with extension headers is taken with its first
 * next-header as its protocol, with no ports: the stack's own parsing is
 * not repeated.
 *
 * nsl_read_sk() writes the same fields from a connected socket, for the
 * packets it will send: TCP's fork (a block's flow) and NSI's choice on a
 * socket's flow (pick.c).
 */
#ifndef _NSL_HEADERS_H
#define _NSL_HEADERS_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/inet_sock.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/sock.h>

/*
 * Where nsl_read_headers() writes what it reads: each a field of the
 * caller's own struct (or a local it drops: the compiler drops its
 * stores too).  Inline, every store goes straight to its field.
 */
struct nsl_hdr_dst {
	u16 *family;		/* AF_INET or AF_INET6 */
	u16 *proto;		/* IPv4 protocol, IPv6 first next-header */
	u16 *nhlen;
	u16 *thlen;
	u16 *sport;		/* host order */
	u16 *dport;
	u32 *tcp_seq;		/* host order */
	/*
	 * 16 bytes each, network order, IPv4's in the first 4 and the rest
	 * 0: written only if @addrs, which a caller that keeps no address
	 * leaves false (a constant, so the stores are not even tested).
	 */
	u8 *saddr;
	u8 *daddr;
	bool addrs;
};

/* What nsl_read_headers() found. */
enum nsl_hdr_found {
	NSL_HDR_NONE,		/* no IP header in the linear data */
	NSL_HDR_IP,		/* the IP header, no TCP or UDP header whole */
	NSL_HDR_PORTS,		/* and TCP's or UDP's */
};

/*
 * An address of @len bytes (4 or 16) into 16, zero-filled, word by word.
 */
static __always_inline void nsl_put_addr(u8 *p, const void *a,
					 unsigned int len)
{
	if (len == 4) {
		put_unaligned(get_unaligned((const u32 *)a), (u32 *)p);
		put_unaligned(0, (u32 *)(p + 4));
		put_unaligned(0, (u64 *)(p + 8));
	} else {
		put_unaligned(get_unaligned((const u64 *)a), (u64 *)p);
		put_unaligned(get_unaligned((const u64 *)a + 1),
			      (u64 *)(p + 8));
	}
}

/*
 * Reads the headers of @skb, its IP header at @nh, into @d's fields as
 * far as they are in the linear data; fields past that are left as they
 * were.  The transport header is read past the first fragment only.
 */
static __always_inline enum nsl_hdr_found
nsl_read_headers(const struct sk_buff *skb, const u8 *nh,
		 const struct nsl_hdr_dst d)
{
	const u8 *tail = skb_tail_pointer(skb);
	const struct udphdr *ports;
	const u8 *th;
	u8 proto;

	/* In the linear data: the headers past @nh are past head too. */
	if (nh < skb->head)
		return NSL_HDR_NONE;
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = (const struct iphdr *)nh;

		if (nh + sizeof(*iph) > tail || iph->version != 4)
			return NSL_HDR_NONE;
		proto = iph->protocol;
		*d.family = AF_INET;
		*d.proto = proto;
		*d.nhlen = iph->ihl * 4;
		if (d.addrs) {
			nsl_put_addr(d.saddr, &iph->saddr, 4);
			nsl_put_addr(d.daddr, &iph->daddr, 4);
		}
		if (iph->frag_off & htons(IP_OFFSET))
			return NSL_HDR_IP;
		th = nh + iph->ihl * 4;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = (const struct ipv6hdr *)nh;

		if (nh + sizeof(*ip6) > tail || ip6->version != 6)
			return NSL_HDR_NONE;
		proto = ip6->nexthdr;
		*d.family = AF_INET6;
		*d.proto = proto;
		*d.nhlen = sizeof(*ip6);
		if (d.addrs) {
			nsl_put_addr(d.saddr, &ip6->saddr, 16);
			nsl_put_addr(d.daddr, &ip6->daddr, 16);
		}
		th = (const u8 *)(ip6 + 1);
	} else {
		return NSL_HDR_NONE;
	}
	if (proto == IPPROTO_TCP) {
		const struct tcphdr *t = (const struct tcphdr *)th;

		if (th + sizeof(*t) > tail)
			return NSL_HDR_IP;
		*d.thlen = t->doff * 4;
		*d.tcp_seq = ntohl(t->seq);
	} else if (proto == IPPROTO_UDP || proto == IPPROTO_UDPLITE) {
		if (th + sizeof(struct udphdr) > tail)
			return NSL_HDR_IP;
		*d.thlen = sizeof(struct udphdr);
	} else {
		return NSL_HDR_IP;
	}
	/* TCP's and UDP's headers both begin with the ports. */
	ports = (const struct udphdr *)th;
	*d.sport = ntohs(ports->source);
	*d.dport = ntohs(ports->dest);
	return NSL_HDR_PORTS;
}

/*
 * The flow of what connected @sk sends, into @d's fields as
 * nsl_read_headers() writes them, the lengths and the sequence aside:
 * false, with nothing written, if @sk has no peer.  An IPv6 socket that
 * talks to an IPv4 peer (a v4-mapped address) sends IPv4.
 */
static __always_inline bool nsl_read_sk(const struct sock *sk,
					const struct nsl_hdr_dst d)
{
	const struct inet_sock *inet = inet_sk(sk);

	if (!inet->inet_dport)
		return false;
	*d.proto = sk->sk_protocol;
	*d.sport = ntohs(inet->inet_sport);
	*d.dport = ntohs(inet->inet_dport);
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 &&
	    !ipv6_addr_v4mapped(&sk->sk_v6_daddr)) {
		*d.family = AF_INET6;
		if (d.addrs) {
			nsl_put_addr(d.saddr, &sk->sk_v6_rcv_saddr, 16);
			nsl_put_addr(d.daddr, &sk->sk_v6_daddr, 16);
		}
		return true;
	}
#endif
	*d.family = AF_INET;
	if (d.addrs) {
		nsl_put_addr(d.saddr, &inet->inet_saddr, 4);
		nsl_put_addr(d.daddr, &inet->inet_daddr, 4);
	}
	return true;
}

/*
 * The transport payload's bytes, from the IP header at @nh (of @family)
 * and the headers' lengths @hdrs.  BIG TCP leaves the IPv4 header's length
 * 0, or an IPv6 jumbogram's payload length: the length is then the skb's.
 */
static __always_inline u32 nsl_payload(const struct sk_buff *skb,
				       const u8 *nh, u16 family, u32 hdrs)
{
	u32 total;

	if (family == AF_INET) {
		total = ntohs(((const struct iphdr *)nh)->tot_len);
	} else {
		total = ntohs(((const struct ipv6hdr *)nh)->payload_len);
		if (total)
			total += sizeof(struct ipv6hdr);
	}
	if (!total)
		total = skb_tail_pointer(skb) - nh + skb->data_len;
	return total > hdrs ? total - hdrs : 0;
}

#endif /* _NSL_HEADERS_H */
