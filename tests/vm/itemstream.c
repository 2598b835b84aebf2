// SPDX-License-Identifier: GPL-2.0
/* The item-stream checker of the C tests: see itemstream.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "netslice.h"
#include "source/decode.h"	/* nsdump's: the compact blocks */
#include "itemstream.h"

void ns_stream_bad(struct ns_stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->bad, sizeof(s->bad), fmt, ap);
	va_end(ap);
}

static void seq_step(struct ns_stream *s, const char *what, uint32_t cpu,
		     uint64_t seq, uint64_t n)
{
	if (!s->track)
		return;
	if (seq != s->next_seq[cpu])
		ns_stream_bad(s, "cpu %u: %s seq %" PRIu64 ", want %" PRIu64,
			      cpu, what, seq, s->next_seq[cpu]);
	s->next_seq[cpu] = seq + n;
}

static void take_sysinfo(struct ns_stream *s, const uint8_t *p, size_t off,
			 uint32_t size)
{
	struct nsl_sysinfo si;

	memcpy(&si, p, sizeof(si) < size ? sizeof(si) : size);
	if (off || size != sizeof(si) ||
	    (s->track && (s->items || s->losses || s->sysinfos)))
		ns_stream_bad(s, "sysinfo at %zu, size %u, after %" PRIu64
			      " items and %" PRIu64 " sysinfos",
			      off, size, s->items, s->sysinfos);
	else if (si.abi_version != NSL_ABI_VERSION ||
		 si.byte_order != NSL_BYTE_ORDER_MARK ||
		 si.ncpus != s->ncpus)
		ns_stream_bad(s, "sysinfo abi %u bom %#x ncpus %u",
			      si.abi_version, si.byte_order, si.ncpus);
	s->sysinfos++;
}

static void take_block(struct ns_stream *s, const uint8_t *p, size_t left,
		       uint32_t cpu)
{
	enum ns_decode_error err;
	const struct nsl_block *blk;
	struct ns_item it;
	char why[128];

	err = ns_decode_item(p, left, &it);
	if (err) {
		ns_decode_describe(err, &it, why, sizeof(why));
		ns_stream_bad(s, "block: %s", why);
		return;
	}
	blk = &it.block;
	if (blk->nrec > NSL_MAX_RECORDS || blk->dir > NSL_DIR_RX ||
	    blk->mode > NSL_MODE_COUNT || blk->nevents > NSL_MAX_EVENTS) {
		ns_stream_bad(s, "block nrec %u dir %u mode %u nevents %u",
			      blk->nrec, blk->dir, blk->mode, blk->nevents);
		return;
	}
	seq_step(s, "block", cpu, blk->seq, 1);
	s->items++;
	s->blocks++;
	if (blk->flags & NSL_BF_LOOPBACK)
		s->lo_blocks++;
	else if (s->nic_ifindex && (int)blk->ifindex == s->nic_ifindex)
		s->nic_blocks++;
	if (blk->dir == NSL_DIR_RX)
		s->rx_blocks++;
}

static void take_event(struct ns_stream *s, const uint8_t *p, uint32_t cpu,
		       uint32_t size)
{
	struct nsl_event_rec ev;

	memcpy(&ev, p, sizeof(ev) < size ? sizeof(ev) : size);
	if (size != sizeof(ev) || !ev.type || ev.type >= NSL_EV_MAX) {
		ns_stream_bad(s, "event size %u type %u", size, ev.type);
		return;
	}
	seq_step(s, "event", cpu, ev.seq, 1);
	s->items++;
	s->events++;
}

static void take_loss(struct ns_stream *s, const uint8_t *p, uint32_t cpu,
		      uint32_t size)
{
	struct nsl_loss loss;

	memcpy(&loss, p, sizeof(loss) < size ? sizeof(loss) : size);
	if (size != sizeof(loss) || !loss.lost) {
		ns_stream_bad(s, "loss size %u lost %" PRIu64, size,
			      (uint64_t)loss.lost);
		return;
	}
	seq_step(s, "loss from", cpu, loss.first_seq, loss.lost);
	s->losses++;
	s->lost += loss.lost;
}

/*
 * The @n bytes of one read (or one item from a ring): whole items, each
 * sound, a sysinfo only at the start.  Returns whether all was well, else
 * s->bad says what was first wrong.
 */
bool ns_stream_take(struct ns_stream *s, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	struct nsl_item_hdr h;
	size_t off = 0;

	if (!s->ncpus || s->ncpus > NS_STREAM_MAXCPUS)
		ns_stream_bad(s, "the checker was told %u CPUs", s->ncpus);
	s->reads++;
	s->bytes += n;
	while (off < n && !s->bad[0]) {
		if (n - off < sizeof(h)) {
			ns_stream_bad(s, "%zu bytes of a header at the end",
				      n - off);
			break;
		}
		memcpy(&h, p + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > n - off ||
		    h.size > sizeof(struct nsl_block)) {
			ns_stream_bad(s, "item at %zu of %zu: size %u",
				      off, n, h.size);
			break;
		}
		if (h.cpu >= s->ncpus) {
			ns_stream_bad(s, "item cpu %u of %u", h.cpu, s->ncpus);
			break;
		}
		switch (h.kind) {
		case NSL_ITEM_SYSINFO:
			take_sysinfo(s, p + off, off, h.size);
			break;
		case NSL_ITEM_CBLOCK:
			take_block(s, p + off, n - off, h.cpu);
			break;
		case NSL_ITEM_EVENT:
			take_event(s, p + off, h.cpu, h.size);
			break;
		case NSL_ITEM_LOSS:
			take_loss(s, p + off, h.cpu, h.size);
			break;
		default:
			ns_stream_bad(s, "item kind %u", h.kind);
		}
		off += h.size;
	}
	return !s->bad[0];
}
