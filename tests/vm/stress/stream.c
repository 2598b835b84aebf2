// SPDX-License-Identifier: GPL-2.0
/* stress: item streams */
#include "stress.h"

void stress_stream_bad(struct stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->bad, sizeof(s->bad), fmt, ap);
	va_end(ap);
}

static void seq_step(struct stream *s, const char *what, uint32_t cpu,
		     uint64_t seq, uint64_t n)
{
	if (!s->track)
		return;
	if (seq != s->next_seq[cpu])
		stress_stream_bad(s, "cpu %u: %s seq %" PRIu64 ", want %" PRIu64,
				  cpu, what, seq, s->next_seq[cpu]);
	s->next_seq[cpu] = seq + n;
}

/*
 * The @n bytes a read returned: whole items, each sound, a sysinfo only at
 * the start of a read (and, for one reader, of the stream).  Returns
 * whether all was well (else s->bad says what was not).
 */
bool stress_take_items(struct stream *s, const uint8_t *buf, size_t n)
{
	struct nsl_item_hdr h;
	struct nsl_sysinfo si;
	struct nsl_block blk;
	struct nsl_event_rec ev;
	struct nsl_loss loss;
	struct ns_item it;
	size_t off = 0;

	s->reads++;
	s->bytes += n;
	while (off < n && !s->bad[0]) {
		if (n - off < sizeof(h)) {
			stress_stream_bad(s, "%zu bytes of a header at the end", n - off);
			break;
		}
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > n - off ||
		    h.size > SLOT) {
			stress_stream_bad(s, "item at %zu of %zu: size %u", off, n, h.size);
			break;
		}
		if (h.cpu >= stress_info.ncpus) {
			stress_stream_bad(s, "item cpu %u of %u", h.cpu, stress_info.ncpus);
			break;
		}
		switch (h.kind) {
		case NSL_ITEM_SYSINFO:
			memcpy(&si, buf + off, sizeof(si) < h.size ? sizeof(si) : h.size);
			if (off || h.size != sizeof(si) ||
			    (s->track && (s->items || s->losses)))
				stress_stream_bad(s, "sysinfo at %zu, size %u, after %" PRIu64 " items",
						  off, h.size, s->items);
			else if (si.abi_version != NSL_ABI_VERSION ||
				 si.byte_order != NSL_BYTE_ORDER_MARK ||
				 si.ncpus != stress_info.ncpus)
				stress_stream_bad(s, "sysinfo abi %u bom %#x ncpus %u",
						  si.abi_version, si.byte_order, si.ncpus);
			s->sysinfos++;
			break;
		case NSL_ITEM_CBLOCK:
			if (ns_decode_item(buf + off, n - off, &it)) {
				stress_stream_bad(s, "compact block at %zu of %zu, size %u",
						  off, n, h.size);
				break;
			}
			blk = it.block;
			if (blk.nrec > NSL_MAX_RECORDS ||
			    blk.dir > NSL_DIR_RX || blk.mode > NSL_MODE_COUNT ||
			    blk.nevents > NSL_MAX_EVENTS) {
				stress_stream_bad(s, "block size %u nrec %u dir %u mode %u",
						  h.size, blk.nrec, blk.dir, blk.mode);
				break;
			}
			seq_step(s, "block", h.cpu, blk.seq, 1);
			s->items++;
			s->blocks++;
			if (blk.flags & NSL_BF_LOOPBACK)
				s->lo_blocks++;
			else if (s->nic_ifindex && (int)blk.ifindex == s->nic_ifindex)
				s->nic_blocks++;
			if (blk.dir == NSL_DIR_RX)
				s->rx_blocks++;
			break;
		case NSL_ITEM_EVENT:
			memcpy(&ev, buf + off, sizeof(ev) < h.size ? sizeof(ev) : h.size);
			if (h.size != sizeof(ev) || !ev.type || ev.type >= NSL_EV_MAX) {
				stress_stream_bad(s, "event size %u type %u", h.size, ev.type);
				break;
			}
			seq_step(s, "event", h.cpu, ev.seq, 1);
			s->items++;
			s->events++;
			break;
		case NSL_ITEM_LOSS:
			memcpy(&loss, buf + off, sizeof(loss) < h.size ? sizeof(loss) : h.size);
			if (h.size != sizeof(loss) || !loss.lost) {
				stress_stream_bad(s, "loss size %u lost %" PRIu64, h.size,
						  (uint64_t)loss.lost);
				break;
			}
			seq_step(s, "loss from", h.cpu, loss.first_seq, loss.lost);
			s->losses++;
			s->lost += loss.lost;
			break;
		default:
			stress_stream_bad(s, "item kind %u", h.kind);
		}
		off += h.size;
	}
	return !s->bad[0];
}
