/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * NetSlice: the user/kernel ABI of /dev/ns.
 *
 * Rules (see doc/design.md): fixed-width fields, explicit padding, every
 * struct a multiple of 8 bytes, non-zero padding or unknown flags are
 * refused with EINVAL, unknown commands with ENOTTY.
 *
 * A read() of /dev/ns returns a sequence of whole items.  Every item starts
 * with struct nsl_item_hdr; hdr.size is the item's length in bytes (a
 * multiple of 8), so a reader can skip kinds it does not know.
 */
#ifndef _UAPI_LINUX_NETSLICE_H
#define _UAPI_LINUX_NETSLICE_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * 2: the flow in every block (family, addresses, ports), UDP's regions,
 * NSL_BF_FORWARDED, NSL_REC_FLOWADDR.  Readers take version-1 items by
 * their field descriptions (a trace file's FIELDS record).
 * 3: UDP's MAGNeT events (NSL_EV_UDP_SEND, NSL_EV_UDP_RECV), whose type
 * values a version-2 reader refuses; NSL_CALIB_COLD.  Items are laid out
 * as in version 2.
 * 4: blocks travel compact (NSL_ITEM_CBLOCK): a 64-byte header, 12 bytes
 * per record, counter slots only for the events chosen, addresses only
 * when kept.  struct nsl_block stays the form readers decode into, and
 * NSL_ITEM_BLOCK items of versions 1 to 3 still read.  Event records
 * carry IPv6 addresses (saddr6, daddr6, NSL_EVF_ADDR6): 152 bytes, were
 * 120.
 * 5: a compact record that started on the CPU of the block's ring
 * (hdr.cpu) says so with NSL_RF_HCPU instead of an extension, which a
 * version-4 reader would take for rcpu.
 * 6: sampling at NSI (NSIOCSSAMPLE, NSIOCGSAMPLE) and NSL_FILTER_FLOW, a
 * filter that reads only the flow run at NSI: a packet either refuses
 * gets no block at all.  The devices a packet crossed (nsl_block.dev[],
 * in a compact block after the addresses, their count in cflags), which
 * a version-5 reader would take for records.
 * 7: aggregate mode (NSIOCSAGG, NSIOCGAGG): per-layer histograms folded
 * in the module, and the slow blocks alone delivered whole (exemplars).
 * Items and files are as in version 6.
 * 8: a compact block may carry its records as the log of START and STOP
 * steps that made them (NSL_CB_LOG), for the reader to replay
 * (nsl_log_replay()): the kernel keeps no record on a packet's path.  A
 * version-7 reader refuses such a block (an unknown cflags bit).
 * 9: a log may say that the records closed so far are another part's
 * too (NSL_LOG_SHARE: a GSO segment past the first, a copy at a link),
 * where version 8 kept records; an eaten skb's steps may follow in the
 * log of the skb that ate it.  A version-8 reader's replay refuses the
 * new step.
 * 10: where one region hands over to the next, one step stops the first
 * and starts the second at one time (NSL_LOG_NEXT), where version 9
 * logged a STOP and a START at two; and a device's first record is said
 * by the START that opens it (NSL_LOG_DEV_START), where version 9 logged
 * a DEV step before it.  A version-9 reader's replay refuses the new
 * steps.
 */
#define NSL_ABI_VERSION		10

#define NSL_MAX_RECORDS		16	/* region records in one block */
#define NSL_MAX_DEVS		6	/* devices one block names */
#define NSL_MAX_EVENTS		4	/* counter events at once */

/* Regions.  Send path first, then the receive path. */
enum nsl_region {
	NSL_R_NONE	= 0,
	NSL_R_WRITE	= 1,	/* NSI in sendmsg .. hand-off to the driver */
	NSL_R_TCP	= 2,	/* copy+csum in sendmsg; header build in xmit */
	NSL_R_IP	= 3,	/* ip_queue_xmit/ip6_xmit .. neighbour output */
	NSL_R_LINK	= 4,	/* dev_queue_xmit (qdisc included) .. driver */
	NSL_R_NIC	= 5,	/* driver xmit .. TX completion */
	NSL_R_RX_NIC	= 6,	/* driver RX / NAPI poll .. handed up */
	NSL_R_RX_LINK	= 7,	/* netif_receive_skb, GRO included */
	NSL_R_RX_IP	= 8,	/* ip_rcv/ipv6_rcv .. transport */
	NSL_R_RX_TCP	= 9,	/* tcp_v4_rcv/tcp_v6_rcv .. queued on the socket */
	NSL_R_QUEUE	= 10,	/* socket receive queue .. read begins */
	NSL_R_COPY	= 11,	/* copy to user */
	NSL_R_SNDQ	= 12,	/* TCP write queue: sendmsg .. first xmit */
	NSL_R_QDISC	= 13,	/* queued in the qdisc */
	NSL_R_BACKLOG	= 14,	/* queued on a CPU's input backlog (netif_rx) */
	NSL_R_SK_BACKLOG = 15,	/* queued on the socket's backlog (owned) */
	NSL_R_UDP	= 16,	/* copy in sendmsg; UDP header and checksum */
	NSL_R_RX_UDP	= 17,	/* udp_rcv/udpv6_rcv .. queued on the socket */
	NSL_R_MAX	= 18
};

/* Item kinds (struct nsl_item_hdr.kind). */
enum nsl_item_kind {
	NSL_ITEM_BLOCK		= 1,	/* struct nsl_block */
	NSL_ITEM_LOSS		= 2,	/* struct nsl_loss */
	NSL_ITEM_EVENT		= 3,	/* struct nsl_event_rec (MAGNeT) */
	NSL_ITEM_SYSINFO	= 4,	/* struct nsl_sysinfo, first in a stream */
	NSL_ITEM_CBLOCK		= 5,	/* struct nsl_cblock: a block, compact */
	NSL_ITEM_PAD		= 6	/* only in a mapped ring: skip to its end */
};

struct nsl_item_hdr {
	__u16 kind;		/* enum nsl_item_kind */
	__u16 size;		/* bytes in this item, header included */
	__u32 cpu;		/* CPU whose ring carried the item */
};

/*
 * nsl_record.flags.  A record closed before its skb was split (TCP
 * fragmenting, software GSO) is in the block of every part; all but one
 * carry NSL_RF_SHARED, so that a sum over blocks counts it once.
 */
#define NSL_RF_OPEN		0x0001	/* never stopped: ticks/count invalid */
#define NSL_RF_INVALID		0x0002	/* a counter reading is untrusted */
#define NSL_RF_MIGRATED		0x0004	/* STOP ran on another CPU */
#define NSL_RF_MERGED		0x0008	/* several START/STOP intervals summed */
#define NSL_RF_GAP		0x0010	/* a wait timed by no macro pair */
#define NSL_RF_SHARED		0x0020	/* a copy: counted in another block */

struct nsl_record {
	__u8  region;		/* enum nsl_region */
	__u8  depth;		/* records open around this one at START */
	__u16 flags;		/* NSL_RF_* */
	__u16 nmerged;		/* intervals summed into ticks (>= 1) */
	__u16 cpu;		/* CPU at START */
	__u64 start;		/* TSC at START minus block tsc0 */
	__u64 ticks;		/* TSC STOP - START (summed when MERGED) */
	__u64 count[NSL_MAX_EVENTS];	/* counter deltas, first nevents valid */
};

/* nsl_block.dir */
#define NSL_DIR_TX		0
#define NSL_DIR_RX		1

/* nsl_block.flags */
#define NSL_BF_RETRANS		0x0001	/* a retransmission */
#define NSL_BF_GSO		0x0002	/* one of several software GSO segments */
#define NSL_BF_NOXMIT		0x0004	/* freed before the driver of the */
					/* last device it was queued to */
#define NSL_BF_TRUNC		0x0008	/* more regions than NSL_MAX_RECORDS */
#define NSL_BF_LOOPBACK		0x0010	/* went through the loopback device */
#define NSL_BF_RX		0x0020	/* carries receive-path regions */
#define NSL_BF_ABSORBED		0x0040	/* merged into another skb by GRO */
#define NSL_BF_RESENT		0x0080	/* sent again after a failed attempt */
#define NSL_BF_FORWARDED	0x0100	/* crossed a veth into a receive path */
#define NSL_BF_COPY		0x0200	/* copy of a packet sent elsewhere too */
#define NSL_BF_COALESCED	0x0400	/* data joined another skb on receive */
#define NSL_BF_DEVTRUNC		0x0800	/* more devices than NSL_MAX_DEVS */

/* nsl_block.mode */
#define NSL_MODE_DURATION	0	/* TSC only */
#define NSL_MODE_COUNT		1	/* TSC and the chosen counters */

/*
 * A device the packet crossed, in the order it did: on the send side
 * each device it was queued to (dev_queue_xmit(), a stacked device's and
 * then its lower device's), on the receive side each device that handed
 * it to the stack (loopback and a veth appear on both sides).  A device's
 * records are those from record @first up to the next device's first
 * (the records before the first device's -- a driver's rx-nic -- are the
 * first device's too).  An ifindex names a device only within its
 * network namespace: @netns is that namespace's inode number, as
 * /proc/PID/ns/net and lsns show it.
 */
struct nsl_dev {
	__u32 ifindex;
	__u32 netns;		/* network namespace inode */
	__u8  first;		/* index of the first record opened on it */
	__u8  dir;		/* NSL_DIR_TX: queued to it; RX: received */
	__u16 pad;		/* 0 */
	__u32 pad2;		/* 0 */
};

struct nsl_block {
	struct nsl_item_hdr hdr;	/* kind NSL_ITEM_BLOCK */
	__u64 seq;		/* per-CPU sequence of items offered */
	__u64 tsc0;		/* TSC at NSI */
	__u64 conn;		/* opaque per-connection id */
	__u32 flags;		/* NSL_BF_* */
	__u32 len;		/* bytes from the network header on */
	__u32 ifindex;		/* device it was handed to, 0 if none */
	__u16 gso_segs;		/* segments on the wire (>= 1) */
	__u16 proto;		/* IPPROTO_* */
	__u16 nhlen;		/* network header length */
	__u16 thlen;		/* transport header length */
	__u8  dir;		/* NSL_DIR_* */
	__u8  nrec;		/* records that follow */
	__u8  nevents;		/* valid entries of nsl_record.count */
	__u8  mode;		/* NSL_MODE_* */
	__u32 tcp_seq;		/* TCP sequence number of the first byte */
	/* The flow, from the packet's headers (0 where not known). */
	__u16 family;		/* AF_INET, AF_INET6; 0: no IP header seen */
	__u16 pad;		/* 0 */
	__u16 sport;		/* TCP/UDP ports, host order */
	__u16 dport;
	__u32 pad2;		/* 0 */
	__u8  saddr[16];	/* network order, IPv4 in the first 4 bytes; */
	__u8  daddr[16];	/* zero unless NSL_REC_FLOWADDR */
	__u8  ndev;		/* valid entries of dev[] */
	__u8  pad3[7];		/* 0 */
	struct nsl_dev dev[NSL_MAX_DEVS];
	struct nsl_record rec[NSL_MAX_RECORDS];	/* first nrec are valid */
};

/* Bytes of a block with @nrec records, as read() delivers it. */
#define NSL_BLOCK_SIZE(nrec) \
	((__u32)(sizeof(struct nsl_block) - \
		 (NSL_MAX_RECORDS - (nrec)) * sizeof(struct nsl_record)))

/*
 * NSL_ITEM_CBLOCK: a block as read() and trace files carry it since ABI 4,
 * without the room struct nsl_block keeps for records and counters not
 * used.  In order, each part a whole number of bytes:
 *
 *   struct nsl_cblock              64 bytes
 *   __u8 saddr[16], daddr[16]      only with NSL_CB_ADDR
 *   struct nsl_cdev                12 bytes, NSL_CB_NDEV(cflags) times
 *   nrec times:
 *     struct nsl_crec              12 bytes
 *     struct nsl_crec_ext          12 bytes, only with NSL_RF_EXT
 *     __u64 count[nevents]         only in count mode
 *   zeros up to a multiple of 8
 * or, with NSL_CB_LOG, no record (nrec and nevents 0) and then:
 *   zeros up to a multiple of 8
 *   __u64 log[]                    to the end: the steps (nsl_log_entry())
 *
 * Parts after the header may sit at any 4-byte boundary: copy them out
 * before use.  A record's depth and, up to 16, its nmerged share a byte;
 * it started on the header's rcpu (the CPU most records not on hdr.cpu
 * started on), or with NSL_RF_HCPU on hdr.cpu, the CPU whose ring
 * carried the block (a send block's transmission completes there).  It
 * needs its extension when it started on any other CPU, when start or
 * ticks is 2^32 or more, or its depth 16 or nmerged 0 or past 16: so a
 * 7-record send block through one device, in duration mode, takes 160
 * bytes.  The encoding is exact:
 * decoding it gives back every field of the block (padding and the counts
 * past nevents as zeros).
 */
#define NSL_CB_RX		0x01	/* nsl_block.dir is NSL_DIR_RX */
#define NSL_CB_COUNT		0x02	/* nsl_block.mode is NSL_MODE_COUNT */
#define NSL_CB_ADDR		0x04	/* saddr and daddr follow the header */
#define NSL_CB_NDEV_SHIFT	3	/* bits 3..5: ndev (ABI 6) */
#define NSL_CB_NDEV(cflags)	(((cflags) >> NSL_CB_NDEV_SHIFT) & 7)
#define NSL_CB_LOG		0x40	/* the records as a log (ABI 8, below) */
#define NSL_CB_KNOWN		0x7f
/* The most entries a compact block's log carries. */
#define NSL_LOG_MAX		64

struct nsl_cblock {
	struct nsl_item_hdr hdr;	/* kind NSL_ITEM_CBLOCK */
	__u64 seq;
	__u64 tsc0;
	__u64 conn;
	__u32 flags;		/* NSL_BF_* */
	__u32 len;
	__u32 ifindex;
	__u32 tcp_seq;
	__u16 gso_segs;
	__u16 nhlen;
	__u16 sport;
	__u16 dport;
	__u16 rcpu;		/* CPU of the records without NSL_RF_EXT */
	__u8  proto;
	__u8  thlen;
	__u8  family;
	__u8  nrec;
	__u8  nevents;
	__u8  cflags;		/* NSL_CB_* */
};

/*
 * Wire only, in nsl_crec.flags: struct nsl_crec_ext follows; or, without
 * it, the record started on hdr.cpu rather than rcpu.
 */
#define NSL_RF_EXT		0x8000
#define NSL_RF_HCPU		0x4000

struct nsl_crec {
	__u8  region;
	__u8  dm;		/* depth | (nmerged - 1) << 4; depth with EXT */
	__u16 flags;		/* NSL_RF_*, NSL_RF_EXT */
	__u32 start;		/* low halves of nsl_record's */
	__u32 ticks;
};

#define NSL_CREC_DM(depth, nmerged)	((depth) | ((nmerged) - 1) << 4)

/* nsl_dev without its padding, as a compact block carries it. */
struct nsl_cdev {
	__u32 ifindex;
	__u32 netns;
	__u8  first;
	__u8  dir;
	__u16 pad;		/* 0 */
};

struct nsl_crec_ext {
	__u16 nmerged;
	__u16 cpu;
	__u32 start_hi;
	__u32 ticks_hi;
};

/*
 * Largest compact block: every record extended, every counter, addresses,
 * every device.
 */
#define NSL_CBLOCK_MAX \
	(sizeof(struct nsl_cblock) + 32 + \
	 NSL_MAX_DEVS * sizeof(struct nsl_cdev) + NSL_MAX_RECORDS * \
	 (sizeof(struct nsl_crec) + sizeof(struct nsl_crec_ext) + \
	  NSL_MAX_EVENTS * 8))

static __inline__ int nsl_crec_needs_ext(const struct nsl_record *r,
					 __u16 rcpu, __u32 hcpu)
{
	/* nmerged 0 wraps past 15: one test for 1 .. 16 */
	return (r->cpu != rcpu && r->cpu != hcpu) || r->depth > 15 ||
	       (__u16)(r->nmerged - 1) > 15 || ((r->start | r->ticks) >> 32);
}

/*
 * The CPU most of @b's records not on @hcpu started on (the first of
 * equals); @hcpu if they all did.
 */
static __inline__ __u16 nsl_cblock_rcpu(const struct nsl_block *b,
					__u32 hcpu)
{
	unsigned int i, j, n, best = 0, nrec = b->nrec, first;
	__u16 cpu = (__u16)hcpu;

	if (nrec > NSL_MAX_RECORDS)
		nrec = NSL_MAX_RECORDS;
	first = nrec;
	/*
	 * Almost every block has records on at most one CPU besides
	 * @hcpu: that one pass answers; the count below is for the rest.
	 */
	for (i = 0; i < nrec; i++) {
		if (b->rec[i].cpu == hcpu)
			continue;
		if (first == nrec)
			first = i;
		else if (b->rec[i].cpu != b->rec[first].cpu)
			break;
	}
	if (i == nrec)
		return first == nrec ? cpu : b->rec[first].cpu;
	for (i = first; i < nrec; i++) {
		if (b->rec[i].cpu == hcpu)
			continue;
		for (n = 0, j = 0; j < nrec; j++)
			n += b->rec[j].cpu == b->rec[i].cpu;
		if (n > best) {
			best = n;
			cpu = b->rec[i].cpu;
		}
	}
	return cpu;
}

/*
 * Writes @b's first @nrec records, compact, at @p as carried with @rcpu by
 * @hcpu's ring, and returns where they end.  *@third is set when a record
 * started on neither CPU.
 */
static __inline__ unsigned char *nsl_crecs_put(const struct nsl_block *b,
					       unsigned int nrec,
					       unsigned int nev, __u16 rcpu,
					       __u32 hcpu, unsigned char *p,
					       int *third)
{
	struct nsl_crec_ext x;
	struct nsl_crec cr;
	unsigned int i, j;

	for (i = 0; i < nrec; i++) {
		const struct nsl_record *r = &b->rec[i];

		cr.region = r->region;
		cr.flags = r->flags & ~(NSL_RF_EXT | NSL_RF_HCPU);
		cr.start = (__u32)r->start;
		cr.ticks = (__u32)r->ticks;
		if (nsl_crec_needs_ext(r, rcpu, hcpu)) {
			*third |= r->cpu != rcpu && r->cpu != hcpu;
			cr.flags |= NSL_RF_EXT;
			cr.dm = r->depth;
		} else {
			if (r->cpu != rcpu)
				cr.flags |= NSL_RF_HCPU;
			cr.dm = (__u8)NSL_CREC_DM(r->depth, r->nmerged);
		}
		__builtin_memcpy(p, &cr, sizeof(cr));
		p += sizeof(cr);
		if (cr.flags & NSL_RF_EXT) {
			x.nmerged = r->nmerged;
			x.cpu = r->cpu;
			x.start_hi = (__u32)(r->start >> 32);
			x.ticks_hi = (__u32)(r->ticks >> 32);
			__builtin_memcpy(p, &x, sizeof(x));
			p += sizeof(x);
		}
		for (j = 0; j < nev; j++) {
			__builtin_memcpy(p, &r->count[j], 8);
			p += 8;
		}
	}
	return p;
}

/*
 * Writes @b's records, compact, at @p as carried by @hcpu's ring, and
 * returns where they end, their rcpu in *@rcpu: any block.
 */
static __inline__ unsigned char *nsl_crecs_put_any(const struct nsl_block *b,
						   __u32 hcpu,
						   unsigned char *p,
						   __u16 *rcpu)
{
	unsigned int i, nrec, nev;
	__u16 cpu = (__u16)hcpu, most;
	unsigned char *end;
	int third = 0;

	/* Bounds read once: the stores through p may alias the block. */
	nrec = b->nrec < NSL_MAX_RECORDS ? b->nrec : NSL_MAX_RECORDS;
	nev = b->nevents < NSL_MAX_EVENTS ? b->nevents : NSL_MAX_EVENTS;
	/*
	 * rcpu is the first record's CPU that is not @hcpu: what
	 * nsl_cblock_rcpu() answers when the records take at most one CPU
	 * besides @hcpu, as nearly all blocks' do.  A third CPU, seen as
	 * the records are written, asks for the count, and for the records
	 * again if it disagrees.
	 */
	for (i = 0; i < nrec; i++) {
		if (b->rec[i].cpu != hcpu) {
			cpu = b->rec[i].cpu;
			break;
		}
	}
	end = nsl_crecs_put(b, nrec, nev, cpu, hcpu, p, &third);
	if (third) {
		most = nsl_cblock_rcpu(b, hcpu);
		if (most != cpu) {
			cpu = most;
			end = nsl_crecs_put(b, nrec, nev, cpu, hcpu, p, &third);
		}
	}
	*rcpu = cpu;
	return end;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * nsl_crecs_put() for the block nearly every one is, in duration mode:
 * records on @hcpu and at most one other CPU, none needing its extension,
 * none with NSL_RF_EXT or NSL_RF_HCPU set.  Writes @b's records so at @p
 * and returns where they end, rcpu in *@rcpu; for any other block returns
 * 0, having written over at most 12 bytes a record from @p.
 * Little-endian only: a record's words are read and built whole.
 *
 * This runs for every block the kernel emits, about 20 instructions a
 * record.  nmerged and cpu, read as one word, less 1 | rcpu << 16 is
 * nmerged - 1 if at most 15 and the record started on rcpu: the one test
 * the common record takes.  What else would extend a record is gathered
 * over the loop and looked at once.  rcpu is taken to be the first
 * record's CPU; if that is @hcpu, the first record off @hcpu names rcpu
 * and the loop starts again.
 */
static __inline__ unsigned char *nsl_crecs_put_fast(const struct nsl_block *b,
						    __u32 hcpu,
						    unsigned char *p,
						    __u16 *rcpu)
{
	const struct nsl_record *r, *end;
	__u32 hk = 1 | hcpu << 16, rk, mc, w, wor;
	__u64 start, ticks, shigh, thigh;
	unsigned int nrec;
	unsigned char *q;

	/*
	 * hk holds 16 bits of @hcpu: a larger one would pass for a record's
	 * CPU, so such a block takes the general way.
	 */
	if (hcpu > 0xffff)
		return 0;
	nrec = b->nrec < NSL_MAX_RECORDS ? b->nrec : NSL_MAX_RECORDS;
	end = b->rec + nrec;
	rk = nrec ? 1 | (__u32)b->rec[0].cpu << 16 : hk;
again:
	wor = 0;
	shigh = 0;
	thigh = 0;
	for (r = b->rec, q = p; r < end; r++, q += sizeof(struct nsl_crec)) {
		/* region, depth and flags; nmerged and cpu */
		__builtin_memcpy(&w, r, 4);
		__builtin_memcpy(&mc, (const unsigned char *)r + 4, 4);
		start = r->start;
		ticks = r->ticks;
		wor |= w;
		shigh |= start;
		thigh |= ticks;
		mc -= rk;
		if (mc > 15) {
			if (r->cpu != hcpu) {
				if (rk != hk)
					return 0;
				rk = 1 | (__u32)r->cpu << 16;
				goto again;
			}
			mc = (__u32)r->nmerged - 1;
			if (mc > 15)
				return 0;
			w |= (__u32)NSL_RF_HCPU << 16;
		}
		w |= mc << 12;
		__builtin_memcpy(q, &w, 4);
		w = (__u32)start;
		__builtin_memcpy(q + 4, &w, 4);
		w = (__u32)ticks;
		__builtin_memcpy(q + 8, &w, 4);
	}
	/* depth past 15 (bits 12..15), EXT or HCPU given, a high half */
	if ((wor & 0xc000f000) | (__u32)((shigh | thigh) >> 32))
		return 0;
	*rcpu = (__u16)(rk >> 16);
	return q;
}
#endif

/*
 * Writes @b's header and devices compact to @out, as carried by @hcpu's
 * ring, and returns where the records (or a log) go.
 */
static __inline__ unsigned char *nsl_cblock_head(const struct nsl_block *b,
						 __u32 hcpu, void *out)
{
	struct nsl_cblock *c = (struct nsl_cblock *)out;
	unsigned char *p = (unsigned char *)out + sizeof(*c);
	unsigned int i, addr = 0, ndev;

	/* Eight bytes at a time. */
	for (i = 0; i < 16; i += 8) {
		__u64 s8, d8;

		__builtin_memcpy(&s8, b->saddr + i, 8);
		__builtin_memcpy(&d8, b->daddr + i, 8);
		addr |= (s8 | d8) != 0;
	}
	/* Fields side by side in both are copied together. */
	c->hdr.kind = NSL_ITEM_CBLOCK;
	c->hdr.cpu = hcpu;
	c->seq = b->seq;
	c->tsc0 = b->tsc0;
	c->conn = b->conn;
	__builtin_memcpy(&c->flags, &b->flags, 8);	/* and len */
	c->ifindex = b->ifindex;
	c->tcp_seq = b->tcp_seq;
	c->gso_segs = b->gso_segs;
	c->nhlen = b->nhlen;
	__builtin_memcpy(&c->sport, &b->sport, 4);	/* and dport */
	c->proto = (__u8)b->proto;
	c->thlen = (__u8)b->thlen;
	c->family = (__u8)b->family;
	__builtin_memcpy(&c->nrec, &b->nrec, 2);	/* and nevents */
	ndev = b->ndev < NSL_MAX_DEVS ? b->ndev : NSL_MAX_DEVS;
	c->cflags = (b->dir == NSL_DIR_RX ? NSL_CB_RX : 0) |
		    (b->mode == NSL_MODE_COUNT ? NSL_CB_COUNT : 0) |
		    (addr ? NSL_CB_ADDR : 0) |
		    (__u8)(ndev << NSL_CB_NDEV_SHIFT);
	if (addr) {
		__builtin_memcpy(p, b->saddr, 16);
		__builtin_memcpy(p + 16, b->daddr, 16);
		p += 32;
	}
	for (i = 0; i < ndev; i++) {
		/* ifindex and netns; first and dir; pad 0 */
		__builtin_memcpy(p, &b->dev[i].ifindex, 8);
		__builtin_memcpy(p + 8, &b->dev[i].first, 2);
		__builtin_memset(p + 10, 0, 2);
		p += sizeof(struct nsl_cdev);
	}
	return p;
}

/* Ends the compact block at @out whose parts end at @end: its size. */
static __inline__ __u32 nsl_cblock_end(void *out, unsigned char *end)
{
	__u32 size = (__u32)(end - (unsigned char *)out);

	/* Parts end on 4-byte boundaries: at most one word of padding. */
	if (size % 8) {
		__builtin_memset(end, 0, 4);
		size += 4;
	}
	((struct nsl_cblock *)out)->hdr.size = (__u16)size;
	return size;
}

/*
 * Writes @b compact to @out (NSL_CBLOCK_MAX bytes of room, 8-aligned),
 * as carried by @hcpu's ring; returns its size, which is also out's
 * hdr.size.  Shared by the kernel, which emits blocks so, and readers,
 * which write them so to files (nsl_cblock_encode(): hcpu from the block).
 */
static __inline__ __u32 nsl_cblock_encode_on(const struct nsl_block *b,
					     __u32 hcpu, void *out)
{
	unsigned char *p = nsl_cblock_head(b, hcpu, out), *end = 0;
	__u16 rcpu;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (!b->nevents)
		end = nsl_crecs_put_fast(b, hcpu, p, &rcpu);
#endif
	if (!end)
		end = nsl_crecs_put_any(b, hcpu, p, &rcpu);
	((struct nsl_cblock *)out)->rcpu = rcpu;
	return nsl_cblock_end(out, end);
}

/*
 * Writes @b compact to @out as nsl_cblock_encode_on() does, its records
 * as the @n entries of its log at @log (NSL_CB_LOG; @b in duration mode,
 * with no record): what the kernel emits for a block that kept a log.
 */
static __inline__ __u32 nsl_cblock_encode_log_on(const struct nsl_block *b,
						 __u32 hcpu, void *out,
						 const void *log,
						 unsigned int n)
{
	struct nsl_cblock *c = (struct nsl_cblock *)out;
	unsigned char *p = nsl_cblock_head(b, hcpu, out);

	c->nrec = 0;
	c->nevents = 0;
	c->cflags = (__u8)((c->cflags & ~NSL_CB_COUNT) | NSL_CB_LOG);
	c->rcpu = 0;
	/* The entries from an 8-byte boundary. */
	if ((p - (unsigned char *)out) % 8) {
		__builtin_memset(p, 0, 4);
		p += 4;
	}
	if (n > NSL_LOG_MAX)
		n = NSL_LOG_MAX;
	__builtin_memcpy(p, log, n * 8);
	return nsl_cblock_end(out, p + n * 8);
}

static __inline__ __u32 nsl_cblock_encode(const struct nsl_block *b,
					  void *out)
{
	return nsl_cblock_encode_on(b, b->hdr.cpu, out);
}

/*
 * A block's records as the steps that made them: with NSL_CB_LOG a
 * compact block carries no record (nrec 0, nevents 0) and, after its
 * devices, from the next 8-byte boundary to its end, one 64-bit word per
 * step, in the order the steps ran:
 *
 *   bits  0..31  the step's TSC less the block's tsc0
 *   bits 32..39  the region (START, STOP, DEV_START, the one NEXT
 *                stops), or the device's index (DEV)
 *   bits 40..43  the step, NSL_LOG_*
 *   bits 44..47  the step's argument (NSL_LOG_ARG()): the region NEXT
 *                starts (below 16), the device whose first record
 *                DEV_START opens; else 0
 *   bits 48..63  the CPU it ran on
 *
 * nsl_log_replay() makes of them the records the kernel would have kept
 * had it run the steps on the block itself (record.h): the writer keeps
 * the bookkeeping out of its path, and the reader does it.
 */
enum nsl_log_step {
	NSL_LOG_START	= 1,	/* a region begins (or resumes: merged) */
	NSL_LOG_STOP	= 2,	/* its latest open record ends */
	NSL_LOG_SEAL	= 3,	/* no START merges into a record made before */
	NSL_LOG_DEV	= 4,	/* device @region's records begin here */
	NSL_LOG_GAP	= 5,	/* the send queue's wait ends (nsl_gap_record()) */
	NSL_LOG_SHARE	= 6,	/* the records closed so far are SHARED (ABI 9) */
	NSL_LOG_NEXT	= 7,	/* a STOP and a START at one time (ABI 10) */
	NSL_LOG_DEV_START = 8	/* a START, device ARG's first (ABI 10) */
};

/*
 * NSL_LOG_NEXT starts a region below this: a hand-over into another is
 * logged as a STOP and a START.
 */
#define NSL_LOG_NEXT_MAX	16

/* An entry's high 32 bits: all but its time. */
static __inline__ __u32 nsl_log_high(unsigned int step, unsigned int region,
				     __u16 cpu)
{
	return (__u8)region | (step & 15) << 8 | (__u32)cpu << 16;
}

static __inline__ __u64 nsl_log_entry(unsigned int step, unsigned int region,
				      __u32 t, __u16 cpu)
{
	return t | (__u64)nsl_log_high(step, region, cpu) << 32;
}

/* The high 32 bits of a step with an argument (NEXT, DEV_START). */
static __inline__ __u32 nsl_log_high_arg(unsigned int step,
					 unsigned int region,
					 unsigned int arg, __u16 cpu)
{
	return nsl_log_high(step, region, cpu) | (arg & 15) << 12;
}

#define NSL_LOG_T(e)		((__u32)(e))
#define NSL_LOG_REGION(e)	((__u8)((e) >> 32))
#define NSL_LOG_STEP(e)		((unsigned int)((e) >> 40) & 15)
#define NSL_LOG_CPU(e)		((__u16)((e) >> 48))
#define NSL_LOG_ARG(e)		((unsigned int)((e) >> 44) & 15)

/* The region step @e starts (START, DEV_START, NEXT), or NSL_R_NONE. */
static __inline__ unsigned int nsl_log_started(__u64 e)
{
	switch (NSL_LOG_STEP(e)) {
	case NSL_LOG_START:
	case NSL_LOG_DEV_START:
		return NSL_LOG_REGION(e);
	case NSL_LOG_NEXT:
		return NSL_LOG_ARG(e);
	}
	return NSL_R_NONE;
}

/*
 * The send queue's wait, a GAP record appended at @now on @cpu: from the
 * end of the first copy into the skb (its first tcp record) until now,
 * less the copies that came later -- sendmsg() can wait for memory
 * between two copies into an skb already queued -- none of which a
 * macro pair timed.  @nopen records are open, room for @cap.  Only when
 * the last record is closed and a copy was timed.  The kernel (at TCP's
 * fork) and the replay of a log share it.
 */
static __inline__ void nsl_gap_record(struct nsl_block *b, unsigned int nopen,
				      unsigned int cap, __u16 cpu, __u64 now)
{
	struct nsl_record *first = 0, *r;
	__u64 at = now - b->tsc0, copied = 0;
	unsigned int i, n = 0;

	if (!b->nrec || b->nrec >= cap ||
	    (b->rec[b->nrec - 1].flags & NSL_RF_OPEN))
		return;
	for (i = 0; i < b->nrec; i++) {
		r = &b->rec[i];
		if (r->region != NSL_R_TCP || (r->flags & NSL_RF_OPEN))
			continue;
		if (!first || r->start < first->start)
			first = r;
		copied += r->ticks;
		n++;
	}
	if (!first || at < first->start + copied)
		return;
	r = &b->rec[b->nrec++];
	/* Counts are read only up to nevents, as a START keeps them. */
	if (b->nevents)
		__builtin_memset(r->count, 0, sizeof(r->count));
	r->region = NSL_R_SNDQ;
	r->depth = (__u8)nopen;
	/* No counter was read for a gap: nothing to trust. */
	r->flags = NSL_RF_GAP | (n > 1 ? NSL_RF_MERGED : 0) |
		   (b->nevents ? NSL_RF_INVALID : 0);
	r->nmerged = (__u16)n;
	r->cpu = cpu;
	r->start = first->start + first->ticks;
	r->ticks = at - first->start - copied;
}

/*
 * The packet was split after @b's records closed so far, and another
 * part's block counts them (a GSO segment past the first, a copy at a
 * link): each is SHARED, so that a sum over blocks counts it once.
 * Records still open go on in each part and end separately.  The kernel
 * and the replay of a log share it.
 */
static __inline__ void nsl_block_share(struct nsl_block *b)
{
	unsigned int i;

	for (i = 0; i < b->nrec; i++)
		if (!(b->rec[i].flags & NSL_RF_OPEN))
			b->rec[i].flags |= NSL_RF_SHARED;
}

/*
 * What a replay keeps while it runs, as the kernel keeps it in the
 * block: the open records (nopen; of each region the latest as 1 + its
 * index in last[], the others inside it counted in more[]), and the
 * region a START may merge into (NSL_R_NONE once sealed).
 */
struct nsl_log_state {
	__u8 nopen;
	__u8 merge_region;
	__u8 last[NSL_R_MAX];
	__u8 more[NSL_R_MAX];
};

/*
 * A START of @region at @now on @cpu: the last record resumed (merged)
 * if it is @region's, closed and not shared, and nothing else was made
 * since the block was sealed; else a new one, if there is room (@cap).
 */
static __inline__ void nsl_replay_start(struct nsl_block *b,
					struct nsl_log_state *st,
					unsigned int region, __u64 now,
					__u16 cpu, unsigned int cap)
{
	unsigned int n = b->nrec;
	struct nsl_record *r;

	if (st->merge_region == region && n) {
		r = &b->rec[n - 1];
		if (r->region == region &&
		    !(r->flags & (NSL_RF_OPEN | NSL_RF_SHARED))) {
			r->flags |= NSL_RF_MERGED | NSL_RF_OPEN;
			r->nmerged++;
			if (r->cpu != cpu)
				r->flags |= NSL_RF_MIGRATED;
			n--;
			goto opened;
		}
	}
	if (n >= cap) {
		b->flags |= NSL_BF_TRUNC;
		return;
	}
	r = &b->rec[n];
	__builtin_memset(r, 0, sizeof(*r));
	b->nrec = (__u8)(n + 1);
	r->region = (__u8)region;
	r->depth = st->nopen;
	r->flags = NSL_RF_OPEN;
	r->nmerged = 1;
	r->cpu = cpu;
	r->start = now - b->tsc0;
	st->merge_region = (__u8)region;
opened:
	st->nopen++;
	if (st->last[region])
		st->more[region]++;
	st->last[region] = (__u8)(n + 1);
	r->ticks -= now;
}

/* A STOP of @region at @now on @cpu: its latest open record closes. */
static __inline__ void nsl_replay_stop(struct nsl_block *b,
				       struct nsl_log_state *st,
				       unsigned int region, __u64 now,
				       __u16 cpu)
{
	unsigned int last = st->last[region];
	struct nsl_record *r;
	int i;

	if (!last)
		return;
	r = &b->rec[last - 1];
	r->ticks += now;
	r->flags &= ~NSL_RF_OPEN;
	if (r->cpu != cpu)
		r->flags |= NSL_RF_MIGRATED;
	st->nopen--;
	st->last[region] = 0;
	if (!st->more[region])
		return;
	/* A region open inside itself: its latest open record before. */
	st->more[region]--;
	for (i = (int)b->nrec - 1; i >= 0; i--) {
		if (b->rec[i].region == region &&
		    (b->rec[i].flags & NSL_RF_OPEN)) {
			st->last[region] = (__u8)(i + 1);
			return;
		}
	}
}

/*
 * Replays @n entries at @log (8-byte words, any alignment) onto @b, in
 * duration mode, with room for @cap records.  @st is the bookkeeping
 * when the log began: zeroed and sealed (merge_region NSL_R_NONE) for a
 * block's whole log.  Returns 0, or -1 for an entry no writer makes (an
 * unknown step, a region or device out of range), having replayed those
 * before it.
 */
static __inline__ int nsl_log_replay(struct nsl_block *b,
				     struct nsl_log_state *st,
				     const void *log, unsigned int n,
				     unsigned int cap)
{
	const unsigned char *p = (const unsigned char *)log;
	unsigned int i, region;
	__u64 e, now;

	if (cap > NSL_MAX_RECORDS)
		cap = NSL_MAX_RECORDS;
	for (i = 0; i < n; i++, p += 8) {
		__builtin_memcpy(&e, p, 8);
		region = NSL_LOG_REGION(e);
		now = b->tsc0 + NSL_LOG_T(e);
		switch (NSL_LOG_STEP(e)) {
		case NSL_LOG_START:
			if (region == NSL_R_NONE || region >= NSL_R_MAX)
				return -1;
			nsl_replay_start(b, st, region, now, NSL_LOG_CPU(e), cap);
			break;
		case NSL_LOG_STOP:
			if (region == NSL_R_NONE || region >= NSL_R_MAX)
				return -1;
			nsl_replay_stop(b, st, region, now, NSL_LOG_CPU(e));
			break;
		case NSL_LOG_NEXT:
			if (region == NSL_R_NONE || region >= NSL_R_MAX ||
			    NSL_LOG_ARG(e) == NSL_R_NONE)
				return -1;
			nsl_replay_stop(b, st, region, now, NSL_LOG_CPU(e));
			nsl_replay_start(b, st, NSL_LOG_ARG(e), now,
					 NSL_LOG_CPU(e), cap);
			break;
		case NSL_LOG_DEV_START:
			if (region == NSL_R_NONE || region >= NSL_R_MAX ||
			    NSL_LOG_ARG(e) >= b->ndev)
				return -1;
			b->dev[NSL_LOG_ARG(e)].first = b->nrec;
			nsl_replay_start(b, st, region, now, NSL_LOG_CPU(e), cap);
			break;
		case NSL_LOG_SEAL:
			st->merge_region = NSL_R_NONE;
			break;
		case NSL_LOG_DEV:
			if (region >= b->ndev)
				return -1;
			b->dev[region].first = b->nrec;
			break;
		case NSL_LOG_GAP:
			nsl_gap_record(b, st->nopen, cap, NSL_LOG_CPU(e), now);
			break;
		case NSL_LOG_SHARE:
			nsl_block_share(b);
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/*
 * Inserted where a ring was full: @lost items (blocks and event records,
 * which share one seq per CPU) are missing right here.
 */
struct nsl_loss {
	struct nsl_item_hdr hdr;	/* kind NSL_ITEM_LOSS */
	__u64 lost;		/* items dropped since the previous item */
	__u64 first_seq;	/* seq of the first item dropped */
	__u64 tsc;		/* TSC when the first was dropped */
};

/*
 * The mapped rings: mmap() of /dev/ns at offset 0, length ncpus *
 * (page size + ring_bytes) (struct nsl_info), read-write and shared.  For
 * every CPU in turn, a control page (struct nsl_ring_ctl) and then
 * ring_bytes of data: whole items, 8-aligned, one after another, the
 * next after the last at data offset pos % ring_bytes.  The kernel
 * writes items from head on and then moves head; the reader takes those
 * from tail to head and then moves tail past them.  An item never
 * wraps: where the next would not fit before the end of the data, a
 * NSL_ITEM_PAD item fills the rest and the next one starts at offset 0.
 * head and tail count bytes since the device was opened and only grow;
 * head - tail is the bytes waiting.  Load head with acquire semantics
 * before reading the items, and store tail with release semantics once
 * done with them (the kernel then writes over them).
 *
 * A tail beyond head or more than ring_bytes behind it makes the ring
 * full: every item offered is dropped and counted.  One mapping per open
 * file (a second mmap() gets EBUSY); it is not inherited by fork();
 * NSIOCSRCVBUF gets EBUSY while it exists.  read() still works, sharing
 * tail with the mapping, so not while the mapper takes items (sysinfo
 * comes only from read()).  Losses are
 * marked by loss items as with read(); a drop the kernel has not yet
 * marked is counted in lost.  Additions: no item or file changes, so no
 * new NSL_ABI_VERSION; an older module refuses mmap() with ENODEV.
 */
#define NSL_RING_MAGIC		0x4e534c52	/* "NSLR" */
struct nsl_ring_ctl {
	/* Written by the kernel only. */
	__u32 magic;		/* NSL_RING_MAGIC */
	__u32 cpu;		/* CPU whose items this ring carries */
	__u64 size;		/* data bytes: nsl_info.ring_bytes */
	__u64 head;		/* bytes written */
	__u64 offered;		/* items offered (NSIOCGPACKETS's share) */
	__u64 dropped;		/* items dropped (NSIOCGDROPS's share) */
	__u64 lost;		/* drops not yet marked by a loss item */
	__u64 watermark;	/* bytes waiting that wake a poll()er */
	__u64 pad0;
	/* Written by the reader, on a cache line of its own. */
	__u64 tail;		/* bytes read */
	__u64 pad1[7];
};

/*
 * MAGNeT event records: one per layer transition of a connection's data,
 * named after MAGNeT's MAGNET_<LAYER>_<DIR> events.  The socket events
 * carry what the application asked for (a write() of 10 KB); the others
 * what the stack turned it into (segments, TSO super-segments, frames).
 */
enum nsl_event_type {
	NSL_EV_SOCK_SEND	= 1,	/* MAGNET_SOCK_SEND: sendmsg() entry */
	NSL_EV_TCP_SEND		= 2,	/* MAGNET_TCP_SEND: segment built */
	NSL_EV_IP_SEND		= 3,	/* MAGNET_IP_SEND */
	NSL_EV_DEV_SEND		= 4,	/* MAGNET_DEV_SEND: to the driver */
	NSL_EV_DEV_RECV		= 5,	/* MAGNET_DEV_RECV: from the driver */
	NSL_EV_IP_RECV		= 6,	/* MAGNET_IP_RECV */
	NSL_EV_TCP_RECV		= 7,	/* MAGNET_TCP_RECV: queued on socket */
	NSL_EV_SOCK_RECV	= 8,	/* MAGNET_SOCK_RECV: recvmsg() return */
	NSL_EV_UDP_SEND		= 9,	/* MAGNET_UDP_SEND: datagram built */
	NSL_EV_UDP_RECV		= 10,	/* MAGNET_UDP_RECV: queued on socket */
	NSL_EV_MAX		= 11
};

/* nsl_event_rec.flags and nsl_record_opts.flags */
#define NSL_EVF_TCP		0x0001	/* struct nsl_tcp_state is valid */
#define NSL_EVF_IP		0x0002	/* struct nsl_ip_fields is valid */
#define NSL_EVF_ADDR		0x0004	/* addresses and ports are valid */
#define NSL_EVF_TSO		0x0008	/* bytes are a TSO/GSO super-segment */
#define NSL_EVF_ADDR6		0x0010	/* saddr6, daddr6 hold the addresses */

/* TCP state at the event (MAGNeT's optional TCP data). */
struct nsl_tcp_state {
	__u32 snd_wnd;
	__u32 srtt_us;		/* smoothed RTT, microseconds */
	__u32 rto_us;
	__u32 packets_out;
	__u32 retrans_out;
	__u32 total_retrans;
	__u32 snd_ssthresh;
	__u32 snd_cwnd;
	__u32 rcv_wnd;
	__u32 write_seq;
	__u32 copied_seq;
	__u32 mss;
	__u16 sport;		/* host order; 0 unless NSL_EVF_ADDR */
	__u16 dport;
	__u8  state;		/* TCP_ESTABLISHED, ... */
	__u8  ca_state;
	__u16 tcp_flags;	/* header flags of the segment, if any */
};

/* IP header fields at the event (MAGNeT's optional IP data). */
struct nsl_ip_fields {
	__u8  version;
	__u8  tos;
	__u8  ttl;
	__u8  protocol;
	__u16 id;
	__u16 frag_off;
	__u32 saddr;		/* network order; 0 unless NSL_EVF_ADDR */
	__u32 daddr;
};

struct nsl_event_rec {
	struct nsl_item_hdr hdr;	/* kind NSL_ITEM_EVENT */
	__u64 seq;		/* per-CPU sequence, shared with blocks */
	__u64 tsc;
	__u64 conn;		/* opaque connection id (socket cookie) */
	__u32 type;		/* enum nsl_event_type */
	__u32 bytes;		/* data at this layer */
	__u32 flags;		/* NSL_EVF_* */
	__u32 pad;		/* 0 */
	struct nsl_tcp_state tcp;
	struct nsl_ip_fields ip;
	/*
	 * With NSL_EVF_ADDR6 (since ABI 4): the IPv6 addresses of the
	 * socket or packet, network order, where ip.saddr and ip.daddr
	 * (then 0) have no room.  An IPv4-mapped socket's are IPv4.
	 */
	__u8  saddr6[16];
	__u8  daddr6[16];
};

/* First item of every stream (MAGNeT's MAGNET_SYSINFO). */
#define NSL_BYTE_ORDER_MARK	0x01020304
struct nsl_sysinfo {
	struct nsl_item_hdr hdr;	/* kind NSL_ITEM_SYSINFO */
	__u32 abi_version;
	__u32 byte_order;	/* NSL_BYTE_ORDER_MARK in the writer's order */
	__u32 tsc_khz;
	__u32 ncpus;
	__u64 ref_tsc;		/* TSC and wall clock read together */
	__u64 ref_realtime_ns;
};

/* NSIOCSRECORDS: which event records to produce. */
#define NSL_REC_ON		0x0001	/* produce event records */
#define NSL_REC_TCP		0x0002	/* ... with TCP state (NSL_EVF_TCP) */
#define NSL_REC_IP		0x0004	/* ... with IP fields (NSL_EVF_IP) */
#define NSL_REC_ADDR		0x0008	/* ... with addresses and ports */
#define NSL_REC_FLOWADDR	0x0010	/* blocks keep addresses (ON not needed) */
#define NSL_REC_ALL		0x001f
struct nsl_record_opts {
	__u32 flags;		/* NSL_REC_* */
	__u32 pad;		/* must be 0 */
};

/* NSIOCSRCVBUF: ring bytes per CPU. */
struct nsl_rcvbuf {
	__u64 bytes;
	__u32 flags;		/* must be 0 */
	__u32 pad;		/* must be 0 */
};

/* NSIOCSSTATE */
#define NSL_STATE_OFF		0
#define NSL_STATE_ON		1
struct nsl_state {
	__u32 state;		/* NSL_STATE_* */
	__u32 flags;		/* must be 0 */
};

/* NSIOCSEVENT: one counter event, encoded as for perf_event_open(). */
struct nsl_event {
	__u32 type;		/* PERF_TYPE_HARDWARE, _SOFTWARE, _RAW, ... */
	__u32 flags;		/* must be 0 */
	__u64 config;
	__u64 config1;
	__u64 config2;
};

struct nsl_events {
	__u32 nevents;		/* 0 .. NSL_MAX_EVENTS */
	__u32 flags;		/* must be 0 */
	struct nsl_event ev[NSL_MAX_EVENTS];
};

/* NSIOCSEMODE */
struct nsl_mode {
	__u32 mode;		/* NSL_MODE_* */
	__u32 flags;		/* must be 0 */
};

/* NSIOCGPACKETS / NSIOCGDROPS: sums over all CPUs since the device opened */
struct nsl_count {
	__u64 count;
};

/* NSIOCGINFO */
struct nsl_info {
	__u32 abi_version;	/* NSL_ABI_VERSION */
	__u32 tsc_khz;		/* TSC frequency */
	__u32 block_size;	/* sizeof(struct nsl_block): largest item */
	__u32 ncpus;		/* rings (possible CPUs) */
	__u32 max_records;	/* NSL_MAX_RECORDS */
	__u32 max_events;	/* NSL_MAX_EVENTS */
	__u64 ring_bytes;	/* current ring size per CPU */
	__u64 ring_max;		/* largest ring size per CPU accepted */
	__u64 ref_tsc;		/* TSC and wall clock (ns since the */
	__u64 ref_realtime_ns;	/* epoch) read at the same instant */
	__u64 emitted;		/* blocks handed to the module by the core */
	__u64 nomem;		/* blocks not made: no memory for them */
};

/*
 * NSIOCGCALIB: the cost of the macros themselves on one CPU (NetSlice's
 * Table 2), the inputs of the correction formulas.  reps: 0 (4096) or
 * 16 .. 65536 samples per macro.  One calibration runs at a time; the
 * caller sleeps interruptibly, and a signal ends the call with EINTR.
 *
 * The samples are warm: the same macro on the same block back to back,
 * its code, data and translations cached.  With NSL_CALIB_COLD in flags
 * each sample runs after the TLB is flushed (global entries too) and the
 * block is written back and evicted from the caches, as after a context
 * switch; NSA is then timed from outside (two TSC reads around a pair
 * nested in an open region) rather than by the enclosing record, so the
 * enclosing START does not warm the pair up.  The stack runs between
 * the two: the warm figures undercorrect, the cold ones overcorrect.  A
 * module older than NSL_CALIB_COLD answers EINVAL to it.
 */
enum nsl_cost_id {
	NSL_C_NSI	= 0,	/* NET_SLICE_INIT (tau alpha) */
	NSL_C_NSS	= 1,	/* NET_SLICE_START */
	NSL_C_NST	= 2,	/* NET_SLICE_STOP */
	NSL_C_NSE	= 3,	/* NET_SLICE_EXIT (tau gamma) */
	NSL_C_NSO	= 4,	/* empty START..STOP as recorded (tau o) */
	NSL_C_NSA	= 5,	/* pair inside a region (tau beta) */
	NSL_C_MAX	= 6
};

struct nsl_cost {
	__u64 ticks;		/* median, TSC ticks */
	__u64 min;		/* smallest sample, ticks */
	__u32 cv_ppm;		/* coefficient of variation, parts per 10^6 */
	__u32 samples;		/* samples kept (outliers removed) */
	__u64 count[NSL_MAX_EVENTS];	/* median counter delta per event */
};

#define NSL_CALIB_COLD	0x1	/* each sample with TLB and block cold */

struct nsl_calib {
	__u32 cpu;		/* in: CPU to measure */
	__u32 reps;		/* in: repetitions, 0 = default */
	__u32 flags;		/* in: 0 or NSL_CALIB_COLD */
	__u32 nevents;		/* out: valid entries of nsl_cost.count */
	struct nsl_cost cost[NSL_C_MAX];
};

/*
 * NSIOCSFILTER: a classic BPF program (struct sock_filter, as libpcap's
 * pcap_compile() makes for DLT_RAW) run on every block before it enters a
 * ring; a block it returns 0 for is counted in NSIOCGFILTERED and never
 * offered (packets == read + drops holds for what passes).  Event records
 * are not filtered.  @len 0 removes the filter; closing the device does
 * too.  Programs are checked as the kernel checks a socket filter; ones
 * that load ancillary data (negative offsets: SKF_AD_OFF, SKF_NET_OFF,
 * SKF_LL_OFF) are refused with EINVAL.
 *
 * The packet the program sees is made from the block's flow (it starts
 * with the IP header; multi-byte fields big-endian; every byte not named
 * is 0):
 *
 *   IPv4, 20 bytes:              IPv6, 40 bytes:
 *      0  0x45                      0  0x60
 *      2  total length              4  payload length (total - 40)
 *      8  TTL 64                    6  next header = proto
 *      9  proto                     7  hop limit 64
 *     12  saddr, 16 daddr           8  saddr, 24 daddr
 *
 * then for TCP 20 bytes: source port, destination port, the sequence
 * number at 4, 0x50 at 12; for UDP 8 bytes: ports, length at 4.  The total
 * length is the block's len, at least the headers', at most 65535; the
 * program's packet length (BPF_LEN) is len uncapped.  A block with no
 * family (no IP header seen) is rejected by every filter.  An older
 * module answers ENOTTY and a reader filters by itself.
 *
 * NSL_FILTER_FLOW (ABI 6) says the program's verdict depends on the flow
 * alone -- family, protocol, addresses, ports -- and not on the lengths,
 * the TCP sequence number or BPF_LEN: the core then runs it where a
 * packet gets its block (NSI), wherever the flow is known there (a TCP
 * or connected UDP socket's send, a received packet's headers), and a
 * packet it refuses gets no block, no allocation and no ring traffic.
 * A datagram's flow is its route's, so UDP is decided at NSI whether its
 * socket is connected or not.  Where the flow is not known at NSI (an IP
 * header not yet in the linear data, a VLAN tag not yet taken off) the
 * block is made and the program runs before the ring as without the
 * flag.  At NSI the lengths and the sequence
 * number read as 0.  NSIOCGFILTERED counts both kinds of refusal.
 */
#define NSL_FILTER_MAX_INSNS	4096	/* BPF_MAXINSNS */
#define NSL_FILTER_FLOW		0x1
struct nsl_filter {
	__u32 len;		/* instructions; 0 = no filter */
	__u32 flags;		/* NSL_FILTER_FLOW or 0 */
	__u64 insns;		/* user pointer to struct sock_filter[len] */
};

/*
 * NSIOCSSAMPLE: give a block to 1 in @rate packets (@rate 0 or 1: every
 * packet), decided at NSI before anything is allocated, after the
 * filter.  By default packets are picked at random, each NSI on its own
 * with chance 1/rate (a per-CPU countdown of random length, mean @rate):
 * a packet sent over loopback or a veth keeps the send side's choice
 * across the crossing.  NSL_SAMPLE_FLOWS picks 1 in @rate flows
 * instead, by a hash of the flow that is the same in both directions,
 * so both ends of a picked connection are seen whole.  Where the flow is
 * not known at NSI the choice is made before the ring, as the filter's.
 * Setting it starts the counts again; closing the device turns sampling
 * off.  NSIOCGSAMPLE returns the setting and, since it was set, the
 * packets (or blocks) picked and passed over; a reader scales counts by
 * (taken + skipped) / taken.  @taken and @skipped must be 0 when set.
 */
#define NSL_SAMPLE_FLOWS	0x1
#define NSL_SAMPLE_RATE_MAX	(1u << 24)
struct nsl_sample {
	__u32 rate;		/* 1 in rate; 0, 1: every packet */
	__u32 flags;		/* NSL_SAMPLE_FLOWS or 0 */
	__u64 taken;		/* NSIOCGSAMPLE: packets given a block */
	__u64 skipped;		/* NSIOCGSAMPLE: packets passed over */
};

/*
 * The flow a filter sees and the packet made of it, shared by the kernel
 * and readers so that both run a program over the same bytes.
 */
struct nsl_filter_flow {
	__u16 family;		/* 2 (AF_INET) or 10 (AF_INET6) */
	__u16 proto;		/* IPPROTO_* */
	__u16 sport;		/* host order */
	__u16 dport;
	__u32 len;		/* bytes from the network header on */
	__u32 tcp_seq;
	__u8  saddr[16];	/* network order, IPv4 in the first 4 bytes */
	__u8  daddr[16];
};

#define NSL_FILTER_PKT_MAX	60	/* IPv6 and TCP headers */

static __inline__ void nsl_filter_put(__u8 *p, __u32 v, int bytes)
{
	while (bytes--) {
		p[bytes] = (__u8)v;
		v >>= 8;
	}
}

/*
 * Writes @f's packet to @pkt, returns the bytes written (its headers);
 * the packet's length for BPF_LEN is the larger of @f->len and that.
 */
static __inline__ __u32 nsl_filter_packet(const struct nsl_filter_flow *f,
					  __u8 pkt[NSL_FILTER_PKT_MAX])
{
	__u32 nh = f->family == 10 ? 40 : 20, th = 0, total;

	if (f->proto == 6)		/* TCP */
		th = 20;
	else if (f->proto == 17)	/* UDP */
		th = 8;
	total = f->len > nh + th ? f->len : nh + th;
	if (total > 65535)
		total = 65535;
	__builtin_memset(pkt, 0, NSL_FILTER_PKT_MAX);
	if (nh == 40) {
		pkt[0] = 0x60;
		nsl_filter_put(pkt + 4, total - 40, 2);
		pkt[6] = (__u8)f->proto;
		pkt[7] = 64;
		__builtin_memcpy(pkt + 8, f->saddr, 16);
		__builtin_memcpy(pkt + 24, f->daddr, 16);
	} else {
		pkt[0] = 0x45;
		nsl_filter_put(pkt + 2, total, 2);
		pkt[8] = 64;
		pkt[9] = (__u8)f->proto;
		__builtin_memcpy(pkt + 12, f->saddr, 4);
		__builtin_memcpy(pkt + 16, f->daddr, 4);
	}
	if (th) {
		nsl_filter_put(pkt + nh, f->sport, 2);
		nsl_filter_put(pkt + nh + 2, f->dport, 2);
	}
	if (th == 20) {
		nsl_filter_put(pkt + nh + 4, f->tcp_seq, 4);
		pkt[nh + 12] = 0x50;
	} else if (th == 8) {
		nsl_filter_put(pkt + nh + 4, total - nh, 2);
	}
	return nh + th;
}

/*
 * Aggregate mode (ABI 7).  At NSE each block's regions are folded into
 * per-CPU histograms and the block is freed: no ring item, no reader
 * woken.  A block is delivered whole (an exemplar) only when it passes
 * the threshold NSIOCSAGG set: a region's value (or the span's) above
 * @threshold_ns, above the running 99th percentile of that histogram
 * (NSL_AGG_P99), or every block (NSL_AGG_ALL).
 *
 * The histograms are log-linear, HdrHistogram's layout with 8 buckets to
 * each power of two of TSC ticks: a value is known to 1/8 of itself (a
 * bucket is 12.5% wide), at any scale, and the bucket is found with one
 * fls64(), a shift and a mask.  Values 0..15 ticks have a bucket each;
 * 2^34 ticks (seconds, at any TSC rate) and past share the last.
 *
 * A histogram's key: the region (or NSL_AGG_SPAN, the block from NSI to
 * the end of its last record) and the block's group: its direction,
 * device (nsl_block.ifindex), family and protocol.  The first
 * NSL_AGG_GROUPS - 1 groups seen each get a slot; the rest share group 0
 * (ifindex, family and proto all 0: "other").  Memory is bounded by
 * NSL_AGG_GROUPS * (NSL_R_MAX) * NSL_AGG_BUCKETS * 4 bytes per CPU.
 *
 * A region's value in a block is the sum of its closed records' ticks,
 * less the macros' own cost measured when aggregation was turned on
 * (tau_o per interval, tau_b per pair nested inside; as nsdump corrects,
 * clamped at 0): NSL_AGG_CORRECTED says so.  A region with a record left
 * open has no value in the block, and copies (NSL_RF_SHARED) count in
 * the block that measured them.
 *
 * The histograms live from NSIOCSAGG on until NSIOCSAGG off or the
 * module unloads; closing /dev/ns leaves them, and collection, as they
 * are.  They are read without stopping the folding, through NSL_AGG_DEV
 * (any number of readers at once; each open() takes a snapshot, which
 * read() then gives from the start to EOF, so a reader that closes
 * between reads holds the module only while it reads) or NSIOCGAGG: a
 * struct nsl_agg_head, then @nhist struct nsl_agg_hist, only those not
 * empty.  Folding goes on while the snapshot is taken, so a histogram's
 * buckets may be a block ahead of its sum; its count is the sum of its
 * buckets.
 */
#define NSL_AGG_SUB		8	/* buckets per power of two */
#define NSL_AGG_BUCKETS		256
#define NSL_AGG_GROUPS		16
#define NSL_AGG_SPAN		0	/* the region of the span's histogram */
#define NSL_AGG_MAGIC		0x4741534e	/* "NSAG" */
#define NSL_AGG_DEV		"/dev/ns-hist"

/* The bucket of @ticks. */
static __inline__ __u32 nsl_agg_bucket(__u64 ticks)
{
	unsigned int e;
	__u32 i;

	if (ticks < 2 * NSL_AGG_SUB)
		return (__u32)ticks;
	e = 63 - __builtin_clzll(ticks);	/* 2^e <= ticks */
	i = NSL_AGG_SUB * (e - 2) + ((ticks >> (e - 3)) & (NSL_AGG_SUB - 1));
	return i < NSL_AGG_BUCKETS ? i : NSL_AGG_BUCKETS - 1;
}

/* The least value bucket @i holds (bucket i + 1's is its bound). */
static __inline__ __u64 nsl_agg_bucket_low(__u32 i)
{
	if (i < 2 * NSL_AGG_SUB)
		return i;
	return (__u64)(NSL_AGG_SUB + i % NSL_AGG_SUB) << (i / NSL_AGG_SUB - 1);
}

/*
 * The pairs nested inside record @i of @b's first @n: the records after
 * it deeper than it (the run ends at the first that is not), closed and
 * timed by macros, that started inside it -- for a record of one
 * interval (or a GAP) inside its window too.  nsdump's
 * ns_nested_pairs(), in one pass over the run.
 */
static __inline__ __u64 nsl_agg_nested(const struct nsl_block *b, __u32 i,
				       __u32 n)
{
	const struct nsl_record *o = &b->rec[i], *in;
	int one = o->nmerged <= 1 || (o->flags & NSL_RF_GAP);
	__u64 k = 0;
	__u32 j;

	for (j = i + 1; j < n && b->rec[j].depth > o->depth; j++) {
		in = &b->rec[j];
		if ((in->flags & (NSL_RF_OPEN | NSL_RF_GAP)) ||
		    in->start < o->start ||
		    (one && in->start - o->start >= o->ticks))
			continue;
		k += in->nmerged ? in->nmerged : 1;
	}
	return k;
}

/*
 * The values aggregate mode folds for block @b: @val[r] for each region r
 * whose bit @return has, the span in @val[NSL_AGG_SPAN] (bit 0), each
 * corrected by @tau_o per interval and @tau_b per pair nested inside, as
 * nsdump corrects (a GAP ran no macros: not corrected, not counted).
 * The span runs from the earliest start a closed record shows to the
 * latest end (a record's start may precede NSI: it is signed; the end of
 * a record of several intervals is taken as its first start plus their
 * sum).
 * A record left open takes its region's bit away (*@open set).
 */
static __inline__ __u32 nsl_agg_values(const struct nsl_block *b,
				       __u64 tau_o, __u64 tau_b,
				       __u64 val[NSL_R_MAX], int *open)
{
	__u32 have = 0, gone = 0, n = b->nrec < NSL_MAX_RECORDS ?
					  b->nrec : NSL_MAX_RECORDS;
	__s64 first = 0, last = 0, s;
	__u64 cost, t;
	__u32 i, any = 0;

	*open = 0;
	for (i = 0; i < NSL_R_MAX; i++)
		val[i] = 0;
	for (i = 0; i < n; i++) {
		const struct nsl_record *r = &b->rec[i];

		if (r->region >= NSL_R_MAX || r->region == NSL_AGG_SPAN)
			continue;
		if (r->flags & NSL_RF_OPEN) {
			gone |= 1u << r->region;
			*open = 1;
			continue;
		}
		s = (__s64)r->start;
		if (!any || s < first)
			first = s;
		if (!any || s + (__s64)r->ticks > last)
			last = s + (__s64)r->ticks;
		any = 1;
		if (r->flags & NSL_RF_SHARED)
			continue;
		t = r->ticks;
		if (!(r->flags & NSL_RF_GAP)) {
			cost = (r->nmerged ? r->nmerged : 1) * tau_o +
			       nsl_agg_nested(b, i, n) * tau_b;
			t = cost < t ? t - cost : 0;
		}
		val[r->region] += t;
		have |= 1u << r->region;
	}
	val[NSL_AGG_SPAN] = (__u64)(last - first);
	return (have & ~gone) | (any ? 1u << NSL_AGG_SPAN : 0);
}

/* nsl_agg.flags */
#define NSL_AGG_ON		0x0001	/* fold blocks; 0: stop and free */
#define NSL_AGG_P99		0x0002	/* exemplar above the running p99 */
#define NSL_AGG_ALL		0x0004	/* every block an exemplar too */
#define NSL_AGG_RESET		0x0008	/* empty the histograms first */
#define NSL_AGG_FLAGS		0x000f
/* nsl_agg_head.flags */
#define NSL_AGG_CORRECTED	0x0100	/* tau_o, tau_b taken off */

/* NSIOCSAGG, and in NSIOCGAGG's head. */
struct nsl_agg {
	__u32 flags;		/* NSL_AGG_* */
	__u32 region;		/* exemplars: NSL_R_* or NSL_AGG_SPAN */
	__u64 threshold_ns;	/* exemplars above it; 0 and no P99: none */
};

struct nsl_agg_head {
	__u32 magic;		/* NSL_AGG_MAGIC */
	__u32 abi_version;	/* NSL_ABI_VERSION */
	__u64 load_id;		/* new at every load of the module */
	__u64 since_realtime_ns;	/* when the histograms began */
	__u32 tsc_khz;
	__u32 nhist;		/* struct nsl_agg_hist that follow */
	struct nsl_agg conf;	/* as set; flags 0: aggregation is off */
	__u64 tau_o, tau_b;	/* the correction taken off, ticks */
	__u64 blocks;		/* blocks folded */
	__u64 trunc;		/* ... of which NSL_BF_TRUNC */
	__u64 open;		/* ... of which with a region left open */
	__u64 exemplars;	/* blocks delivered as exemplars */
	__u64 threshold_ticks;	/* the exemplar threshold now (P99: moves) */
	__u64 emitted;		/* nsl_info.emitted, at the snapshot */
	__u64 other;		/* blocks of group 0 for want of a slot */
	__u64 pad[3];		/* 0 */
};

struct nsl_agg_hist {
	__u8  region;		/* NSL_R_* or NSL_AGG_SPAN */
	__u8  dir;		/* NSL_DIR_* */
	__u16 family;		/* AF_INET, AF_INET6; 0: other */
	__u16 proto;		/* IPPROTO_*; 0: other */
	__u16 group;		/* slot, 0 .. NSL_AGG_GROUPS - 1 */
	__u32 ifindex;		/* 0: other */
	__u32 netns;		/* the device's namespace inode, or 0 */
	__u64 sum_ticks;	/* of the values folded */
	__u32 bucket[NSL_AGG_BUCKETS];
};

/* NSIOCGAGG: the same snapshot into a buffer of @len bytes at @buf. */
struct nsl_agg_read {
	__u64 buf;		/* user pointer */
	__u64 len;		/* in: room; out: bytes the snapshot took */
};

#define NSL_IOC_MAGIC		0xB9

#define NSIOCSRCVBUF	_IOW(NSL_IOC_MAGIC, 0x01, struct nsl_rcvbuf)
#define NSIOCSSTATE	_IOW(NSL_IOC_MAGIC, 0x02, struct nsl_state)
#define NSIOCSEVENT	_IOW(NSL_IOC_MAGIC, 0x03, struct nsl_events)
#define NSIOCSEMODE	_IOW(NSL_IOC_MAGIC, 0x04, struct nsl_mode)
#define NSIOCGPACKETS	_IOR(NSL_IOC_MAGIC, 0x05, struct nsl_count)
#define NSIOCGDROPS	_IOR(NSL_IOC_MAGIC, 0x06, struct nsl_count)
#define NSIOCGINFO	_IOR(NSL_IOC_MAGIC, 0x07, struct nsl_info)
#define NSIOCGCALIB	_IOWR(NSL_IOC_MAGIC, 0x08, struct nsl_calib)
#define NSIOCSRECORDS	_IOW(NSL_IOC_MAGIC, 0x09, struct nsl_record_opts)
#define NSIOCSFILTER	_IOW(NSL_IOC_MAGIC, 0x0a, struct nsl_filter)
#define NSIOCGFILTERED	_IOR(NSL_IOC_MAGIC, 0x0b, struct nsl_count)
#define NSIOCSSAMPLE	_IOW(NSL_IOC_MAGIC, 0x0c, struct nsl_sample)
#define NSIOCGSAMPLE	_IOR(NSL_IOC_MAGIC, 0x0d, struct nsl_sample)
#define NSIOCSAGG	_IOW(NSL_IOC_MAGIC, 0x0e, struct nsl_agg)
#define NSIOCGAGG	_IOWR(NSL_IOC_MAGIC, 0x0f, struct nsl_agg_read)

#endif /* _UAPI_LINUX_NETSLICE_H */
