// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include "source/decode.h"

#define BLOCK_FIXED	NSL_BLOCK_SIZE(0)

static const char *const region_names[NS_R_MAX] = {
	[NSL_R_WRITE]	= "write",
	[NSL_R_TCP]	= "tcp",
	[NSL_R_IP]	= "ip",
	[NSL_R_LINK]	= "link",
	[NSL_R_NIC]	= "nic",
	[NSL_R_RX_NIC]	= "rx-nic",
	[NSL_R_RX_LINK]	= "rx-link",
	[NSL_R_RX_IP]	= "rx-ip",
	[NSL_R_RX_TCP]	= "rx-tcp",
	[NSL_R_QUEUE]	= "queue",
	[NSL_R_COPY]	= "copy",
	[NSL_R_SNDQ]	= "sndq",
	[NSL_R_QDISC]	= "qdisc",
	[NSL_R_BACKLOG]	= "backlog",
	[NSL_R_SK_BACKLOG] = "sk-backlog",
	[NSL_R_UDP]	= "udp",
	[NSL_R_RX_UDP]	= "rx-udp",
	[NS_R_WIRE]	= "wire",
};

const char *ns_region_name(unsigned int region)
{
	return region < NS_R_MAX ? region_names[region] : NULL;
}

static const char *const event_type_names[NSL_EV_MAX] = {
	[NSL_EV_SOCK_SEND]	= "MAGNET_SOCK_SEND",
	[NSL_EV_TCP_SEND]	= "MAGNET_TCP_SEND",
	[NSL_EV_IP_SEND]	= "MAGNET_IP_SEND",
	[NSL_EV_DEV_SEND]	= "MAGNET_DEV_SEND",
	[NSL_EV_DEV_RECV]	= "MAGNET_DEV_RECV",
	[NSL_EV_IP_RECV]	= "MAGNET_IP_RECV",
	[NSL_EV_TCP_RECV]	= "MAGNET_TCP_RECV",
	[NSL_EV_SOCK_RECV]	= "MAGNET_SOCK_RECV",
	[NSL_EV_UDP_SEND]	= "MAGNET_UDP_SEND",
	[NSL_EV_UDP_RECV]	= "MAGNET_UDP_RECV",
};

const char *ns_event_type_name(unsigned int type)
{
	return type < NSL_EV_MAX ? event_type_names[type] : NULL;
}

static enum ns_decode_error fail(struct ns_item *it, enum ns_decode_error err,
				 uint64_t bad)
{
	it->bad = bad;
	return err;
}

/*
 * The first of @b's devices (ndev of them, at most NSL_MAX_DEVS) that a
 * kernel would not write, or ndev: each a direction, a first record
 * within the block's reach and zero padding.  Views index rec[] and dev[]
 * by what these say.
 */
static unsigned int first_bad_dev(const struct nsl_block *b)
{
	unsigned int i;

	for (i = 0; i < b->ndev; i++) {
		const struct nsl_dev *d = &b->dev[i];

		if (d->dir > NSL_DIR_RX || d->first > NSL_MAX_RECORDS ||
		    d->pad || d->pad2)
			break;
	}
	return i;
}

static enum ns_decode_error check_devs(struct ns_item *it)
{
	const struct nsl_block *b = &it->block;
	unsigned int bad;

	if (b->ndev > NSL_MAX_DEVS)
		return fail(it, NS_DEC_CDEV, b->ndev);
	bad = first_bad_dev(b);
	return bad < b->ndev ? fail(it, NS_DEC_CDEV, bad) : NS_DEC_OK;
}

static enum ns_decode_error check_records(struct ns_item *it)
{
	const struct nsl_block *b = &it->block;
	unsigned int i;

	for (i = 0; i < b->nrec; i++)
		if (b->rec[i].region == NSL_R_NONE ||
		    b->rec[i].region >= NSL_R_MAX)
			return fail(it, NS_DEC_REGION, i);
	it->type = NS_ITEM_BLOCK;
	return NS_DEC_OK;
}

static enum ns_decode_error decode_block(const void *buf, struct ns_item *it)
{
	struct nsl_block *b = &it->block;
	enum ns_decode_error err;

	if (it->hdr.size < BLOCK_FIXED)
		return fail(it, NS_DEC_BLOCK_SHORT, it->hdr.size);
	memset(b, 0, sizeof(*b));
	memcpy(b, buf, BLOCK_FIXED);
	if (b->nrec > NSL_MAX_RECORDS)
		return fail(it, NS_DEC_NREC, b->nrec);
	if (it->hdr.size != NSL_BLOCK_SIZE(b->nrec))
		return fail(it, NS_DEC_BLOCK_SIZE, it->hdr.size);
	if (b->nevents > NSL_MAX_EVENTS)
		return fail(it, NS_DEC_NEVENTS, b->nevents);
	memcpy(b->rec, (const char *)buf + BLOCK_FIXED,
	       b->nrec * sizeof(b->rec[0]));
	err = check_devs(it);
	return err ? err : check_records(it);
}

/* Takes @n bytes at *@off of the item's @size; false: they are not there. */
static bool take(const unsigned char *buf, size_t size, size_t *off,
		 void *dst, size_t n)
{
	if (n > size - *off)
		return false;
	memcpy(dst, buf + *off, n);
	*off += n;
	return true;
}

/* The inverse of nsl_cblock_encode() (include/netslice.h). */
/* A compact block's header, checked, to @c. */
static enum ns_decode_error cblock_header(const unsigned char *buf,
					  struct ns_item *it,
					  struct nsl_cblock *c)
{
	size_t size = it->hdr.size;

	if (size < sizeof(*c))
		return fail(it, NS_DEC_BLOCK_SHORT, size);
	memcpy(c, buf, sizeof(*c));
	if (c->cflags & ~NSL_CB_KNOWN)
		return fail(it, NS_DEC_CBLOCK_FLAGS, c->cflags);
	if (c->nrec > NSL_MAX_RECORDS)
		return fail(it, NS_DEC_NREC, c->nrec);
	if (c->nevents > NSL_MAX_EVENTS)
		return fail(it, NS_DEC_NEVENTS, c->nevents);
	return NS_DEC_OK;
}

/* The fixed fields of @b from the compact header @c. */
static void cblock_fields(struct nsl_block *b, const struct nsl_cblock *c)
{
	b->hdr = c->hdr;
	b->seq = c->seq;
	b->tsc0 = c->tsc0;
	b->conn = c->conn;
	b->flags = c->flags;
	b->len = c->len;
	b->ifindex = c->ifindex;
	b->tcp_seq = c->tcp_seq;
	b->gso_segs = c->gso_segs;
	b->nhlen = c->nhlen;
	b->sport = c->sport;
	b->dport = c->dport;
	b->proto = c->proto;
	b->thlen = c->thlen;
	b->family = c->family;
	b->nrec = c->nrec;
	b->nevents = c->nevents;
	b->ndev = NSL_CB_NDEV(c->cflags);
	b->dir = c->cflags & NSL_CB_RX ? NSL_DIR_RX : NSL_DIR_TX;
	b->mode = c->cflags & NSL_CB_COUNT ? NSL_MODE_COUNT : NSL_MODE_DURATION;
}

/* Zero bytes of @buf from @off up to @end: a compact block's padding. */
static enum ns_decode_error check_pad(const unsigned char *buf,
				      struct ns_item *it, size_t off,
				      size_t end)
{
	for (; off < end; off++)
		if (buf[off])
			return fail(it, NS_DEC_CBLOCK_PAD, off);
	return NS_DEC_OK;
}

/*
 * The rest of a compact block that carries its records as a log
 * (NSL_CB_LOG), from @off past its devices: the entries, from the next
 * 8-byte boundary to the end, replayed into the records the kernel would
 * have kept.  The whole log is there or the block is refused.
 */
static enum ns_decode_error decode_log(const unsigned char *buf,
				       struct ns_item *it,
				       const struct nsl_cblock *c, size_t off)
{
	struct nsl_log_state st = { .merge_region = NSL_R_NONE };
	size_t size = it->hdr.size, at = (off + 7) / 8 * 8;
	struct nsl_block *b = &it->block;
	enum ns_decode_error err;
	unsigned int i;

	if (c->nrec || c->nevents || (c->cflags & NSL_CB_COUNT))
		return fail(it, NS_DEC_LOG, 0);
	/* no more steps than a writer puts in one block */
	if (at > size || (size - at) / 8 > NSL_LOG_MAX)
		return fail(it, NS_DEC_CBLOCK_SIZE, size);
	err = check_pad(buf, it, off, at);
	if (err)
		return err;
	/* A device's first record is the log's to say (NSL_LOG_DEV). */
	for (i = 0; i < b->ndev; i++)
		if (b->dev[i].first)
			return fail(it, NS_DEC_LOG, 2);
	if (nsl_log_replay(b, &st, buf + at, (size - at) / 8,
			   NSL_MAX_RECORDS))
		return fail(it, NS_DEC_LOG, 1);
	err = check_devs(it);
	return err ? err : check_records(it);
}

static enum ns_decode_error decode_cblock(const unsigned char *buf,
					  struct ns_item *it)
{
	struct nsl_block *b = &it->block;
	size_t size = it->hdr.size, off;
	enum ns_decode_error err;
	struct nsl_crec_ext x;
	struct nsl_cblock c;
	struct nsl_crec cr;
	unsigned int i;

	err = cblock_header(buf, it, &c);
	if (err)
		return err;
	memset(b, 0, sizeof(*b));
	cblock_fields(b, &c);
	off = sizeof(c);
	if ((c.cflags & NSL_CB_ADDR) &&
	    (!take(buf, size, &off, b->saddr, 16) ||
	     !take(buf, size, &off, b->daddr, 16)))
		return fail(it, NS_DEC_CBLOCK_SIZE, size);
	if (b->ndev > NSL_MAX_DEVS)
		return fail(it, NS_DEC_CDEV, b->ndev);
	for (i = 0; i < b->ndev; i++) {
		struct nsl_cdev cd;

		if (!take(buf, size, &off, &cd, sizeof(cd)))
			return fail(it, NS_DEC_CBLOCK_SIZE, size);
		/* as it came, padding too: ns_decode_describe() tells what */
		b->dev[i].ifindex = cd.ifindex;
		b->dev[i].netns = cd.netns;
		b->dev[i].first = cd.first;
		b->dev[i].dir = cd.dir;
		b->dev[i].pad = cd.pad;
	}
	if (c.cflags & NSL_CB_LOG)
		return decode_log(buf, it, &c, off);
	err = check_devs(it);
	if (err)
		return err;
	for (i = 0; i < c.nrec; i++) {
		struct nsl_record *r = &b->rec[i];

		if (!take(buf, size, &off, &cr, sizeof(cr)))
			return fail(it, NS_DEC_CBLOCK_SIZE, size);
		r->region = cr.region;
		r->depth = cr.dm & 0xf;
		r->flags = cr.flags & ~(NSL_RF_EXT | NSL_RF_HCPU);
		r->nmerged = (cr.dm >> 4) + 1;
		r->cpu = cr.flags & NSL_RF_HCPU ? c.hdr.cpu : c.rcpu;
		if ((cr.flags & NSL_RF_HCPU) &&
		    ((cr.flags & NSL_RF_EXT) || c.hdr.cpu > 0xffff))
			return fail(it, NS_DEC_CREC_HCPU, i);
		r->start = cr.start;
		r->ticks = cr.ticks;
		if (cr.flags & NSL_RF_EXT) {
			if (!take(buf, size, &off, &x, sizeof(x)))
				return fail(it, NS_DEC_CBLOCK_SIZE, size);
			r->depth = cr.dm;
			r->nmerged = x.nmerged;
			r->cpu = x.cpu;
			r->start |= (uint64_t)x.start_hi << 32;
			r->ticks |= (uint64_t)x.ticks_hi << 32;
		}
		if (!take(buf, size, &off, r->count, c.nevents * 8))
			return fail(it, NS_DEC_CBLOCK_SIZE, size);
	}
	if ((off + 7) / 8 * 8 != size)
		return fail(it, NS_DEC_CBLOCK_SIZE, size);
	err = check_pad(buf, it, off, size);
	return err ? err : check_records(it);
}

bool ns_block_compacts(const struct nsl_block *b)
{
	static const struct nsl_dev no_dev;
	unsigned int i, j;

	if (b->proto > 0xff || b->thlen > 0xff || b->family > 0xff ||
	    b->dir > NSL_DIR_RX || b->mode > NSL_MODE_COUNT || b->pad ||
	    b->pad2 || b->nrec > NSL_MAX_RECORDS ||
	    b->nevents > NSL_MAX_EVENTS || b->ndev > NSL_MAX_DEVS ||
	    first_bad_dev(b) < b->ndev)
		return false;
	for (i = 0; i < sizeof(b->pad3); i++)
		if (b->pad3[i])
			return false;
	/* the compact form carries ndev devices: the rest must be zeros */
	for (i = b->ndev; i < NSL_MAX_DEVS; i++)
		if (memcmp(&b->dev[i], &no_dev, sizeof(no_dev)))
			return false;
	for (i = 0; i < b->nrec; i++) {
		if (b->rec[i].flags & (NSL_RF_EXT | NSL_RF_HCPU))
			return false;
		for (j = b->nevents; j < NSL_MAX_EVENTS; j++)
			if (b->rec[i].count[j])
				return false;
	}
	return true;
}

static enum ns_decode_error decode_event(const void *buf, struct ns_item *it)
{
	struct nsl_event_rec *e = &it->event;

	if (it->hdr.size != sizeof(*e))
		return fail(it, NS_DEC_EVENT_SIZE, it->hdr.size);
	memcpy(e, buf, sizeof(*e));
	if (e->type == 0 || e->type >= NSL_EV_MAX)
		return fail(it, NS_DEC_EVENT_TYPE, e->type);
	if (e->flags & ~NS_EVF_KNOWN)
		return fail(it, NS_DEC_EVENT_FLAGS, e->flags);
	it->type = NS_ITEM_EVENT;
	return NS_DEC_OK;
}

static enum ns_decode_error decode_sysinfo(const void *buf,
					   struct ns_item *it)
{
	struct nsl_sysinfo *s = &it->sysinfo;

	if (it->hdr.size != sizeof(*s))
		return fail(it, NS_DEC_SYSINFO_SIZE, it->hdr.size);
	memcpy(s, buf, sizeof(*s));
	if (s->byte_order != NSL_BYTE_ORDER_MARK)
		return fail(it, NS_DEC_SYSINFO_BOM, s->byte_order);
	it->type = NS_ITEM_SYSINFO;
	return NS_DEC_OK;
}

/* The item header at @buf, its size checked against @len. */
static enum ns_decode_error item_header(const void *buf, size_t len,
					struct ns_item *it)
{
	it->raw = buf;
	it->bad = 0;
	it->shallow = false;
	if (len < sizeof(it->hdr))
		return fail(it, NS_DEC_SHORT_HEADER, len);
	memcpy(&it->hdr, buf, sizeof(it->hdr));
	if (it->hdr.size < sizeof(it->hdr) || it->hdr.size % 8)
		return fail(it, NS_DEC_BAD_SIZE, it->hdr.size);
	if (it->hdr.size > len)
		return fail(it, NS_DEC_TRUNCATED, it->hdr.size);
	return NS_DEC_OK;
}

enum ns_decode_error ns_decode_shallow(const void *buf, size_t len,
				       struct ns_item *it)
{
	enum ns_decode_error err = item_header(buf, len, it);
	struct nsl_cblock c;

	if (err || it->hdr.kind != NSL_ITEM_CBLOCK)
		return err ? err : ns_decode_item(buf, len, it);
	err = cblock_header(buf, it, &c);
	if (err)
		return err;
	cblock_fields(&it->block, &c);
	if (it->block.ndev > NSL_MAX_DEVS)
		return fail(it, NS_DEC_CDEV, it->block.ndev);
	it->type = NS_ITEM_BLOCK;
	it->shallow = true;
	return NS_DEC_OK;
}

/*
 * A compact block's family, nrec, nevents and cflags, as one u32 read
 * from the first: what the run checks of the last three at once.  Each
 * byte under 0x80 plus 0x7f less its limit sets its top bit just when it
 * passes the limit, and carries into no other byte; a byte of 0x80 or
 * more has its top bit already.  cflags less NSL_CB_LOG passes
 * NSL_CB_KNOWN, or names more than NSL_MAX_DEVS devices, just when it is
 * past 0x37: its device count is then its highest known bits.
 */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CB_BYTES(a, b, c, d) \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
	 (uint32_t)(d) << 24)
#else
#define CB_BYTES(a, b, c, d) \
	((uint32_t)(d) | (uint32_t)(c) << 8 | (uint32_t)(b) << 16 | \
	 (uint32_t)(a) << 24)
#endif
#define CB_CFLAGS_MAX \
	((NSL_CB_KNOWN & ~(7u << NSL_CB_NDEV_SHIFT) & ~NSL_CB_LOG) | \
	 NSL_MAX_DEVS << NSL_CB_NDEV_SHIFT)
#define CB_MASK		CB_BYTES(0, 0xff, 0xff, 0xff & ~NSL_CB_LOG)
#define CB_TOP		CB_BYTES(0, 0x80, 0x80, 0x80)
#define CB_ADD		CB_BYTES(0, 0x7f - NSL_MAX_RECORDS, 0x7f - NSL_MAX_EVENTS, \
				 0x7f - CB_CFLAGS_MAX)

_Static_assert(offsetof(struct nsl_cblock, nrec) ==
	       offsetof(struct nsl_cblock, family) + 1 &&
	       offsetof(struct nsl_cblock, nevents) ==
	       offsetof(struct nsl_cblock, family) + 2 &&
	       offsetof(struct nsl_cblock, cflags) ==
	       offsetof(struct nsl_cblock, family) + 3, "the bytes the run checks");
_Static_assert(NSL_CB_KNOWN == 0x7f && NSL_CB_LOG == 0x40 &&
	       NSL_CB_NDEV_SHIFT == 3 && NSL_MAX_DEVS < 7,
	       "cflags less NSL_CB_LOG: its device count is its top known bits");
_Static_assert(NSL_MAX_RECORDS < 0x80 && NSL_MAX_EVENTS < 0x80,
	       "limits a byte holds");

/*
 * The counts in locals, the header's fields read one by one: the output
 * through a pointer and the items as bytes would alias.  The checks are
 * ns_decode_shallow()'s, made in fewer steps: this walk is most of what
 * nsdump -w spends on a block.
 */
void ns_decode_run(const void *buf, size_t len, struct ns_run *r)
{
	uint64_t blocks = 0, lost = 0, loss_items = 0, absorbed = 0;
	uint64_t coalesced = 0, tsc0 = 0, x;
	const unsigned char *p = buf, *q = buf;
	unsigned int nevents = 0;
	struct nsl_item_hdr h;
	size_t left = len;

	while (left >= sizeof(h)) {
		uint32_t flags, b4;
		unsigned int nev;

		memcpy(&h, q, sizeof(h));
		if (h.kind != NSL_ITEM_CBLOCK) {
			if (h.kind != NSL_ITEM_LOSS ||
			    h.size != sizeof(struct nsl_loss) || h.size > left)
				break;
			memcpy(&x, q + offsetof(struct nsl_loss, lost), 8);
			lost += x;
			loss_items++;
			q += h.size;
			left -= h.size;
			continue;
		}
		/* what ns_decode_shallow() checks; no item a writer cannot hold */
		if ((size_t)h.size - sizeof(struct nsl_cblock) >
		    NSL_CBLOCK_MAX - sizeof(struct nsl_cblock) ||
		    h.size % 8 || h.size > left)
			break;
		memcpy(&b4, q + offsetof(struct nsl_cblock, family), 4);
		b4 &= CB_MASK;
		if (((b4 + CB_ADD) | b4) & CB_TOP)
			break;
		nev = q[offsetof(struct nsl_cblock, nevents)];
		memcpy(&flags, q + offsetof(struct nsl_cblock, flags), 4);
		blocks++;
		absorbed += !!(flags & NSL_BF_ABSORBED);
		coalesced += !!(flags & NSL_BF_COALESCED);
		if (nev > nevents)
			nevents = nev;
		q += h.size;
		left -= h.size;
	}
	/* the first block's time, past the losses before it */
	if (blocks) {
		const unsigned char *b = p;

		for (;;) {
			memcpy(&h, b, sizeof(h));
			if (h.kind == NSL_ITEM_CBLOCK)
				break;
			b += h.size;
		}
		memcpy(&tsc0, b + offsetof(struct nsl_cblock, tsc0), 8);
	}
	*r = (struct ns_run){
		.buf = buf, .len = len - left, .blocks = blocks, .lost = lost,
		.loss_items = loss_items, .absorbed = absorbed,
		.coalesced = coalesced, .tsc0 = tsc0, .nevents = nevents,
	};
}

enum ns_decode_error ns_decode_item(const void *buf, size_t len,
				    struct ns_item *it)
{
	enum ns_decode_error err = item_header(buf, len, it);

	if (err)
		return err;
	switch (it->hdr.kind) {
	case NSL_ITEM_BLOCK:
		return decode_block(buf, it);
	case NSL_ITEM_LOSS:
		if (it->hdr.size != sizeof(it->loss))
			return fail(it, NS_DEC_LOSS_SIZE, it->hdr.size);
		memcpy(&it->loss, buf, sizeof(it->loss));
		it->type = NS_ITEM_LOSS;
		return NS_DEC_OK;
	case NSL_ITEM_EVENT:
		return decode_event(buf, it);
	case NSL_ITEM_SYSINFO:
		return decode_sysinfo(buf, it);
	case NSL_ITEM_CBLOCK:
		return decode_cblock(buf, it);
	default:
		it->type = NS_ITEM_SKIPPED;
		return NS_DEC_OK;
	}
}

/* NS_DEC_CDEV: too many devices, or which term of device it->bad. */
static void describe_dev(const struct ns_item *it, char *msg, size_t msglen)
{
	const struct nsl_block *b = &it->block;
	unsigned long long bad = it->bad;
	const struct nsl_dev *d;

	if (b->ndev > NSL_MAX_DEVS) {
		snprintf(msg, msglen, "block names %u devices, at most %d",
			 b->ndev, NSL_MAX_DEVS);
		return;
	}
	d = &b->dev[bad < NSL_MAX_DEVS ? bad : 0];
	if (d->dir > NSL_DIR_RX)
		snprintf(msg, msglen, "block device %llu has direction %u (tx 0, rx 1)",
			 bad, d->dir);
	else if (d->first > NSL_MAX_RECORDS)
		snprintf(msg, msglen, "block device %llu has first record %u, past %d",
			 bad, d->first, NSL_MAX_RECORDS);
	else
		snprintf(msg, msglen, "block device %llu has non-zero padding",
			 bad);
}

void ns_decode_describe(enum ns_decode_error err, const struct ns_item *it,
			char *msg, size_t msglen)
{
	unsigned long long bad = it->bad;

	switch (err) {
	case NS_DEC_OK:
		snprintf(msg, msglen, "no error");
		break;
	case NS_DEC_SHORT_HEADER:
		snprintf(msg, msglen, "%llu bytes left, too few for an item header",
			 bad);
		break;
	case NS_DEC_BAD_SIZE:
		snprintf(msg, msglen, "item size %llu is not a positive multiple of 8",
			 bad);
		break;
	case NS_DEC_TRUNCATED:
		snprintf(msg, msglen, "item size %llu runs past the end of the data",
			 bad);
		break;
	case NS_DEC_BLOCK_SHORT:
		snprintf(msg, msglen, "block size %llu is below the fixed part (%u)",
			 bad, (unsigned int)BLOCK_FIXED);
		break;
	case NS_DEC_NREC:
		snprintf(msg, msglen, "block nrec %llu exceeds %d", bad,
			 NSL_MAX_RECORDS);
		break;
	case NS_DEC_NEVENTS:
		snprintf(msg, msglen, "block nevents %llu exceeds %d", bad,
			 NSL_MAX_EVENTS);
		break;
	case NS_DEC_CDEV:
		describe_dev(it, msg, msglen);
		break;
	case NS_DEC_BLOCK_SIZE:
		snprintf(msg, msglen, "block size %llu, nrec %u needs %u", bad,
			 it->block.nrec,
			 (unsigned int)NSL_BLOCK_SIZE(it->block.nrec));
		break;
	case NS_DEC_REGION:
		snprintf(msg, msglen, "block record %llu has region id %u (valid 1..%d)",
			 bad, it->block.rec[bad < NSL_MAX_RECORDS ? bad : 0].region,
			 NSL_R_MAX - 1);
		break;
	case NS_DEC_LOSS_SIZE:
		snprintf(msg, msglen, "loss item size %llu, expected %zu", bad,
			 sizeof(struct nsl_loss));
		break;
	case NS_DEC_EVENT_SIZE:
		snprintf(msg, msglen, "event record size %llu, expected %zu", bad,
			 sizeof(struct nsl_event_rec));
		break;
	case NS_DEC_EVENT_TYPE:
		snprintf(msg, msglen, "event record type %llu (valid 1..%d)", bad,
			 NSL_EV_MAX - 1);
		break;
	case NS_DEC_EVENT_FLAGS:
		snprintf(msg, msglen, "event record flags 0x%llx, unknown bits 0x%llx",
			 bad, bad & ~(unsigned long long)NS_EVF_KNOWN);
		break;
	case NS_DEC_SYSINFO_SIZE:
		snprintf(msg, msglen, "sysinfo size %llu, expected %zu", bad,
			 sizeof(struct nsl_sysinfo));
		break;
	case NS_DEC_CBLOCK_FLAGS:
		snprintf(msg, msglen, "compact block flags 0x%llx, unknown bits 0x%llx",
			 bad, bad & ~(unsigned long long)NSL_CB_KNOWN);
		break;
	case NS_DEC_CREC_HCPU:
		snprintf(msg, msglen, "compact record %llu: NSL_RF_HCPU with an extension or a ring CPU past 65535",
			 bad);
		break;
	case NS_DEC_CBLOCK_SIZE:
		snprintf(msg, msglen, "compact block size %llu does not fit its %u records and %u counters",
			 bad, it->block.nrec, it->block.nevents);
		break;
	case NS_DEC_LOG:
		snprintf(msg, msglen, "%s", bad == 2 ?
			 "compact block's log comes with a device's first record" :
			 bad ? "compact block's log has a step no writer makes" :
			 "compact block has both a log and records or counters");
		break;
	case NS_DEC_CBLOCK_PAD:
		snprintf(msg, msglen, "compact block has a non-zero byte at %llu, in its padding",
			 bad);
		break;
	case NS_DEC_SYSINFO_BOM:
		snprintf(msg, msglen, "sysinfo byte-order mark 0x%08llx%s", bad,
			 bad == 0x04030201 ? " (written in the other byte order)" :
			 ", expected 0x01020304");
		break;
	}
}
