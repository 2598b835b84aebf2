// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "source/crc32.h"
#include "source/file.h"
#include "source/sample.h"

#define HDR	sizeof(struct nsf_rec_hdr)

_Static_assert(sizeof(struct nsf_header) == 16, "header");
_Static_assert(sizeof(struct nsf_rec_hdr) == 16, "record header");
_Static_assert(sizeof(struct nsf_value) == 32, "value");
_Static_assert(sizeof(struct ns_field) == 32, "field");
_Static_assert(NSF_DATA_TARGET >= sizeof(struct nsl_block), "data target");
_Static_assert(sizeof(struct nsf_event) == 224, "event");
_Static_assert(sizeof(struct nsf_calib_hdr) == 80, "calib header");

#define CALIB_ENTRY_HDR	16
#define CALIB_COST(nev)	(24 + 8 * (size_t)(nev))
#define CALIB_MAX_CPUS	65536
/* One CPU's entry as this build writes it. */
#define CALIB_ENTRY	(CALIB_ENTRY_HDR + NSL_C_MAX * CALIB_COST(NSL_MAX_EVENTS))
/*
 * CALIB is exempt from NSF_MAX_RECORD, which more than 2978 CPUs pass:
 * the reader takes what the writer writes for CALIB_MAX_CPUS.
 */
#define CALIB_MAX_RECORD \
	(HDR + sizeof(struct nsf_calib_hdr) + CALIB_MAX_CPUS * CALIB_ENTRY)
_Static_assert(CALIB_MAX_RECORD <= UINT32_MAX, "CALIB length fits its u32");

/* The struct nsl_info fields, by name, as INFO carries them. */
#define INFO_FIELD(m) { #m, offsetof(struct nsl_info, m), \
			sizeof(((struct nsl_info *)0)->m) }
static const struct {
	const char *name;
	size_t offset, size;
} info_fields[] = {
	INFO_FIELD(abi_version), INFO_FIELD(tsc_khz), INFO_FIELD(block_size),
	INFO_FIELD(ncpus), INFO_FIELD(max_records), INFO_FIELD(max_events),
	INFO_FIELD(ring_bytes), INFO_FIELD(ring_max), INFO_FIELD(ref_tsc),
	INFO_FIELD(ref_realtime_ns), INFO_FIELD(emitted), INFO_FIELD(nomem),
};
#define N_INFO (sizeof(info_fields) / sizeof(info_fields[0]))

uint32_t nsf_record_crc(const struct nsf_rec_hdr *h, const void *payload,
			size_t len)
{
	struct nsf_rec_hdr z = *h;

	z.crc = 0;
	return ns_crc32(ns_crc32(0, &z, sizeof(z)), payload, len);
}

static void set_value(struct nsf_value *v, const char *name, uint64_t value)
{
	memset(v, 0, sizeof(*v));
	strncpy(v->name, name, sizeof(v->name) - 1);
	v->value = value;
}

/* ---- writer ---- */

/* @n pieces (at most NSF_PIECES) of one record, whole, in order. */
static int writev_all(struct nsf_writer *w, const struct iovec *pieces,
		      unsigned int n)
{
	struct iovec v[NSF_PIECES], *iov = v;
	size_t done = 0;

	if (w->err)
		return -1;
	memcpy(v, pieces, n * sizeof(*v));
	while (n) {
		ssize_t k = writev(w->fd, iov, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			struct stat st;

			w->err = k < 0 ? errno : EIO;
			w->partial = done;
			/* drop a half-written record: the file stays readable */
			w->cut_back = !fstat(w->fd, &st) && S_ISREG(st.st_mode) &&
				      !ftruncate(w->fd, w->committed + w->base) &&
				      lseek(w->fd, w->committed + w->base,
					    SEEK_SET) >= 0;
			return -1;
		}
		done += k;
		for (; n && (size_t)k >= iov->iov_len; n--)
			k -= (iov++)->iov_len;
		if (n) {
			iov->iov_base = (char *)iov->iov_base + k;
			iov->iov_len -= k;
		}
	}
	return 0;
}

static int write_all(struct nsf_writer *w, const void *buf, size_t len)
{
	struct iovec v = { .iov_base = (void *)buf, .iov_len = len };

	return writev_all(w, &v, 1);
}

/* @rec holds HDR bytes of room, then @len bytes of payload. */
static int write_record(struct nsf_writer *w, uint32_t kind, void *rec,
			size_t len)
{
	struct nsf_rec_hdr h = { .kind = kind, .len = HDR + len };

	h.crc = nsf_record_crc(&h, (char *)rec + HDR, len);
	memcpy(rec, &h, HDR);
	if (write_all(w, rec, HDR + len))
		return -1;
	w->committed += HDR + len;
	return 0;
}

static int write_values(struct nsf_writer *w, uint32_t kind,
			const struct nsf_value *v, size_t n)
{
	unsigned char rec[HDR + 32 * sizeof(*v)];

	memcpy(rec + HDR, v, n * sizeof(*v));
	return write_record(w, kind, rec, n * sizeof(*v));
}

int nsf_writer_open(struct nsf_writer *w, int fd, const char *name,
		    const struct nsl_info *info)
{
	return nsf_writer_open_sampled(w, fd, name, info, NULL);
}

int nsf_writer_open_sampled(struct nsf_writer *w, int fd, const char *name,
			    const struct nsl_info *info,
			    const struct nsl_sample *sample)
{
	struct nsf_header fh = { .version = NSF_VERSION, .bom = NSF_BOM };
	struct nsf_value v[N_INFO + 2];
	size_t nv = N_INFO;
	const struct ns_field *f;
	unsigned char *rec;
	size_t n;
	off_t base;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->name = name;
	if (ns_sample_active(sample))
		w->sample = sample;
	base = lseek(fd, 0, SEEK_CUR);
	w->base = base < 0 ? 0 : base;
	w->buf = malloc(HDR + NSF_DATA_TARGET);
	if (!w->buf) {
		w->err = ENOMEM;
		return -1;
	}
	/*
	 * Its pages taken now, as the file opens: otherwise the first
	 * DATA record's blocks fault them in one by one as they fill it
	 * (16 faults, each zeroing its page), a capture's start-up cost
	 * paid while the first 64 KB of packets are being collected.
	 */
	memset(w->buf, 0, HDR + NSF_DATA_TARGET);
	memcpy(fh.magic, NSF_MAGIC, sizeof(fh.magic));
	if (write_all(w, &fh, sizeof(fh)))
		return -1;
	w->committed = sizeof(fh);

	for (size_t i = 0; i < N_INFO; i++) {
		uint64_t x = 0;

		if (info_fields[i].size == 4) {
			uint32_t x32;

			memcpy(&x32, (const char *)info + info_fields[i].offset, 4);
			x = x32;
		} else {
			memcpy(&x, (const char *)info + info_fields[i].offset, 8);
		}
		set_value(&v[i], info_fields[i].name, x);
	}
	/* only when sampled: other files stay as they were, byte for byte */
	if (w->sample) {
		set_value(&v[nv++], "sample_rate", w->sample->rate);
		set_value(&v[nv++], "sample_flags", w->sample->flags);
	}
	if (write_values(w, NSF_INFO, v, nv))
		return -1;

	rec = w->buf;	/* the layout fits in a DATA buffer */
	f = ns_layout_native_part(false, &n);
	memcpy(rec + HDR, f, n * sizeof(*f));
	if (write_record(w, NSF_FIELDS, rec, n * sizeof(*f)))
		return -1;
	f = ns_layout_native_part(true, &n);
	memcpy(rec + HDR, f, n * sizeof(*f));
	return write_record(w, NSF_XFIELDS, rec, n * sizeof(*f));
}

/* Header records (EVENTS, CALIB) go before the first DATA, or not at all. */
static bool data_started(const struct nsf_writer *w)
{
	return w->used || w->data_records;
}

int nsf_write_events(struct nsf_writer *w, const struct ns_counters *sel)
{
	size_t len = 8 + sel->n * sizeof(struct nsf_event);
	unsigned char *rec = w->buf;	/* no DATA pending yet */
	uint32_t n = sel->n, zero = 0;

	if (w->err || data_started(w))
		return -1;
	memset(rec + HDR, 0, len);
	memcpy(rec + HDR, &n, 4);
	memcpy(rec + HDR + 4, &zero, 4);
	for (unsigned int i = 0; i < sel->n; i++) {
		struct nsf_event e;

		memset(&e, 0, sizeof(e));
		memcpy(e.name, sel->name[i], sizeof(e.name) - 1);
		strncpy(e.canon, sel->canon[i], sizeof(e.canon) - 1);
		e.type = sel->ev.ev[i].type;
		e.config = sel->ev.ev[i].config;
		e.config1 = sel->ev.ev[i].config1;
		e.config2 = sel->ev.ev[i].config2;
		memcpy(rec + HDR + 8 + i * sizeof(e), &e, sizeof(e));
	}
	return write_record(w, NSF_EVENTS, rec, len);
}

int nsf_write_calib(struct nsf_writer *w, const struct ns_calib_set *cs)
{
	struct nsf_calib_hdr h = {
		.ncpus = ns_calib_count(cs), .ncost = NSL_C_MAX,
		.nev = NSL_MAX_EVENTS, .tsc_khz = cs->tsc_khz,
	};
	size_t len = sizeof(h) + h.ncpus * CALIB_ENTRY, off = HDR;
	unsigned char *rec;
	int ret;

	if (w->err || data_started(w))
		return -1;
	if (cs->ncpus > CALIB_MAX_CPUS) {
		w->err = EOVERFLOW;	/* no reader would take it */
		return -1;
	}
	rec = calloc(1, HDR + len);
	if (!rec) {
		w->err = ENOMEM;
		return -1;
	}
	memcpy(h.model, cs->model, sizeof(h.model) - 1);
	memcpy(rec + off, &h, sizeof(h));
	off += sizeof(h);
	for (uint32_t i = 0; i < cs->ncpus; i++) {
		const struct nsl_calib *c = &cs->cpu[i];
		uint32_t head[4] = { i, c->nevents, 0, 0 };

		if (!cs->valid[i])
			continue;
		memcpy(rec + off, head, sizeof(head));
		off += sizeof(head);
		for (int m = 0; m < NSL_C_MAX; m++) {
			const struct nsl_cost *k = &c->cost[m];

			memcpy(rec + off, &k->ticks, 8);
			memcpy(rec + off + 8, &k->min, 8);
			memcpy(rec + off + 16, &k->cv_ppm, 4);
			memcpy(rec + off + 20, &k->samples, 4);
			memcpy(rec + off + 24, k->count, sizeof(k->count));
			off += CALIB_COST(NSL_MAX_EVENTS);
		}
	}
	ret = write_record(w, cs->cold ? NSF_CALIB_COLD : NSF_CALIB, rec, len);
	free(rec);
	return ret;
}

/* What an item adds to a file's counts, as the trailer keeps them. */
static void count_item(const struct ns_item *it, uint64_t *blocks,
		       uint64_t *lost, uint64_t *loss_items,
		       uint64_t *event_recs)
{
	if (it->type == NS_ITEM_BLOCK) {
		++*blocks;
	} else if (it->type == NS_ITEM_LOSS) {
		*lost += it->loss.lost;
		++*loss_items;
	} else if (it->type == NS_ITEM_EVENT) {
		++*event_recs;
	}
}

/* ... to the counts of the DATA record being filled. */
static void tally(struct nsf_writer *w, const struct ns_item *it)
{
	count_item(it, &w->pending_blocks, &w->pending_lost,
		   &w->pending_loss_items, &w->pending_event_recs);
}

static void clear_pending(struct nsf_writer *w)
{
	w->pending_blocks = w->pending_lost = w->pending_loss_items = 0;
	w->pending_event_recs = 0;
}

/* The DATA record being filled starts again, empty. */
static void empty_data(struct nsf_writer *w)
{
	w->used = w->copied = 0;
	w->npieces = 0;
	w->lent = false;
}

/* The DATA record being filled is in the file: its items count. */
static void commit_pending(struct nsf_writer *w)
{
	empty_data(w);
	w->data_records++;
	w->blocks += w->pending_blocks;
	w->lost += w->pending_lost;
	w->loss_items += w->pending_loss_items;
	w->event_recs += w->pending_event_recs;
	clear_pending(w);
}

/*
 * The disk filled in the middle of a DATA record and the file was cut
 * back to its last whole record, which freed what the record had taken:
 * the items that fit in those bytes go out again as a smaller record, so
 * that the file keeps every item there was room for.  The error stays:
 * the capture stops here.
 */
static void salvage_data(struct nsf_writer *w)
{
	int err = w->err;
	size_t kept = 0;

	if (!w->cut_back || (err != ENOSPC && err != EFBIG && err != EDQUOT))
		return;
	clear_pending(w);
	while (kept < w->used) {
		struct ns_item it;

		/* items already checked by nsf_write_item()'s caller */
		if (ns_decode_item(w->buf + HDR + kept, w->used - kept, &it) ||
		    HDR + kept + it.hdr.size > w->partial)
			break;
		tally(w, &it);
		kept += it.hdr.size;
	}
	empty_data(w);
	if (!kept)
		return;
	w->err = 0;
	if (!write_record(w, NSF_DATA, w->buf, kept))
		commit_pending(w);
	w->err = err;
}

/* @size bytes at @src onto the DATA payload, copied into the buffer. */
static void put_copy(struct nsf_writer *w, const void *src, size_t size)
{
	unsigned char *dst = w->buf + HDR + w->copied;
	struct iovec *last = &w->iov[w->npieces];

	memcpy(dst, src, size);
	if (w->npieces && (unsigned char *)last->iov_base + last->iov_len == dst) {
		last->iov_len += size;
	} else {
		last[1] = (struct iovec){ .iov_base = dst, .iov_len = size };
		w->npieces++;
	}
	w->copied += size;
	w->used += size;
}

/*
 * A run at least this long goes into the DATA payload where the source
 * lent it (a mapped ring), and from there to the file: a recorder's runs
 * are what a ring gathered between two wake-ups, kilobytes, which a copy
 * into the buffer first would touch once more.  A shorter one (a busy
 * reader takes a few blocks at a time) is copied, so that a record is
 * not written at every wake-up for a few blocks.
 */
#define NSF_LEND_MIN		4096u

/* @size bytes at @src onto the payload: lent, or copied. */
static void put_run(struct nsf_writer *w, const struct ns_run *r,
		    const void *src, size_t size)
{
	if (!r->lent || size < NSF_LEND_MIN) {
		put_copy(w, src, size);
		return;
	}
	w->iov[++w->npieces] = (struct iovec){ .iov_base = (void *)src,
					       .iov_len = size };
	w->used += size;
	w->lent = true;
}

/*
 * The payload's pieces into the buffer, whole and in order, where a lent
 * run's bytes must not be read again.  The buffer's own pieces only move
 * up (lent ones come before them), so the last goes first.
 */
static void gather(struct nsf_writer *w)
{
	size_t end = w->used;

	for (unsigned int i = w->npieces; i >= 1; i--) {
		end -= w->iov[i].iov_len;
		memmove(w->buf + HDR + end, w->iov[i].iov_base,
			w->iov[i].iov_len);
	}
	w->iov[1] = (struct iovec){ .iov_base = w->buf + HDR,
				    .iov_len = w->used };
	w->npieces = 1;
	w->copied = w->used;
	w->lent = false;
}

/* The DATA record of the pieces (some lent): written from where they are. */
static int write_pieces(struct nsf_writer *w)
{
	struct nsf_rec_hdr h = { .kind = NSF_DATA, .len = HDR + w->used };
	uint32_t crc = nsf_record_crc(&h, w->iov[1].iov_base,
				      w->iov[1].iov_len);

	for (unsigned int i = 2; i <= w->npieces; i++)
		crc = ns_crc32(crc, w->iov[i].iov_base, w->iov[i].iov_len);
	h.crc = crc;
	memcpy(w->buf, &h, HDR);
	w->iov[0] = (struct iovec){ .iov_base = w->buf, .iov_len = HDR };
	if (writev_all(w, w->iov, w->npieces + 1)) {
		gather(w);
		return -1;
	}
	w->committed += HDR + w->used;
	return 0;
}

int nsf_writer_flush(struct nsf_writer *w)
{
	int ret;

	if (!w->used)
		return w->err ? -1 : 0;
	if (w->lent)
		ret = write_pieces(w);
	else
		ret = write_record(w, NSF_DATA, w->buf, w->used);
	if (ret) {
		salvage_data(w);
		return -1;
	}
	commit_pending(w);
	return 0;
}

int nsf_writer_give_back(struct nsf_writer *w)
{
	return w->lent ? nsf_writer_flush(w) : 0;
}

/*
 * A compact block still in its input buffer (a copy the filter held has
 * lost it): this build's decoder took its bytes, and it is the one that
 * reads the file back, so the recorder copies them as they are instead of
 * encoding every block again.
 */
static bool raw_cblock(const struct ns_item *it)
{
	return it->hdr.kind == NSL_ITEM_CBLOCK && it->raw;
}

int nsf_write_item(struct nsf_writer *w, const struct ns_item *it)
{
	uint64_t cblock[NSL_CBLOCK_MAX / 8];
	const void *src = it->raw;
	size_t size = it->hdr.size;

	if (w->err)
		return -1;
	if (it->type == NS_ITEM_BLOCK && !raw_cblock(it)) {
		if (ns_block_compacts(&it->block)) {
			/* compact, whatever form it came in (an older module's) */
			src = cblock;
			size = nsl_cblock_encode(&it->block, cblock);
		} else {
			src = &it->block;
			size = NSL_BLOCK_SIZE(it->block.nrec);
		}
	} else if (it->type == NS_ITEM_LOSS) {
		src = &it->loss;
		size = sizeof(it->loss);
	} else if (it->type == NS_ITEM_EVENT) {
		src = &it->event;
		size = sizeof(it->event);
	} else if (it->type == NS_ITEM_SYSINFO) {
		src = &it->sysinfo;
		size = sizeof(it->sysinfo);
	}
	if ((w->used + size > NSF_DATA_TARGET ||
	     w->npieces + 1 >= NSF_PIECES) && nsf_writer_flush(w))
		return -1;
	put_copy(w, src, size);
	tally(w, it);
	return 0;
}

_Static_assert(NSL_CBLOCK_MAX <= NSF_DATA_TARGET, "a run's items fit in DATA");

int nsf_write_run(struct nsf_writer *w, const struct ns_run *r)
{
	const unsigned char *p = r->buf;
	uint64_t blocks = 0, lost = 0, loss_items = 0;
	size_t left = r->len;

	if (w->err)
		return -1;
	/* Room for the run's piece and a copy's after it. */
	if (w->npieces + 3 > NSF_PIECES && nsf_writer_flush(w))
		return -1;
	/* A DATA record ends where the next item would not fit, as above. */
	while (w->used + left > NSF_DATA_TARGET) {
		struct nsl_item_hdr h;
		struct nsl_loss l;
		size_t n = 0;

		for (;;) {
			memcpy(&h, p + n, sizeof(h));
			if (w->used + n + h.size > NSF_DATA_TARGET)
				break;
			if (h.kind == NSL_ITEM_LOSS) {
				memcpy(&l, p + n, sizeof(l));
				w->pending_lost += l.lost;
				w->pending_loss_items++;
				lost += l.lost;
				loss_items++;
			} else {
				w->pending_blocks++;
				blocks++;
			}
			n += h.size;
		}
		put_run(w, r, p, n);
		if (nsf_writer_flush(w))
			return -1;
		p += n;
		left -= n;
	}
	if (left)
		put_run(w, r, p, left);
	w->pending_blocks += r->blocks - blocks;
	w->pending_lost += r->lost - lost;
	w->pending_loss_items += r->loss_items - loss_items;
	return 0;
}

int nsf_writer_close(struct nsf_writer *w)
{
	struct nsf_value v[7];
	size_t nv = 5;
	int ret = 0;

	if (!nsf_writer_flush(w)) {
		set_value(&v[0], "blocks", w->blocks);
		set_value(&v[1], "lost", w->lost);
		set_value(&v[2], "loss_items", w->loss_items);
		set_value(&v[3], "data_records", w->data_records);
		set_value(&v[4], "event_records", w->event_recs);
		if (w->sample) {
			set_value(&v[nv++], "sample_taken", w->sample->taken);
			set_value(&v[nv++], "sample_skipped", w->sample->skipped);
		}
		write_values(w, NSF_TRAILER, v, nv);
	}
	if (w->err)
		ret = -1;
	if (close(w->fd) && !w->err) {
		w->err = errno;
		ret = -1;
	}
	free(w->buf);
	w->buf = NULL;
	return ret;
}

/* ---- reader ---- */

__attribute__((format(printf, 2, 3)))
static int rfail(struct nsf_reader *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* Bytes read: @len unless the file ended; -1 on a read error. */
static ssize_t read_full(struct nsf_reader *r, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(r->fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return rfail(r, "read error at offset %llu: %s",
				     (unsigned long long)(r->off + got),
				     strerror(errno));
		if (!n)
			break;
		got += n;
	}
	r->off += got;
	return got;
}

static int parse_info(struct nsf_reader *r)
{
	const struct nsf_value *v = (const void *)r->rec;
	bool have_abi = false, have_khz = false;

	if (r->rec_len % sizeof(*v))
		return rfail(r, "INFO record at offset %llu: bad length",
			     (unsigned long long)r->rec_off);
	memset(&r->info, 0, sizeof(r->info));
	for (size_t i = 0; i < r->rec_len / sizeof(*v); i++) {
		struct nsf_value x;

		memcpy(&x, &v[i], sizeof(x));
		x.name[sizeof(x.name) - 1] = 0;
		if (!strcmp(x.name, "sample_rate"))
			r->sample.rate = x.value;
		else if (!strcmp(x.name, "sample_flags"))
			r->sample.flags = x.value;
		for (size_t k = 0; k < N_INFO; k++) {
			char *dst = (char *)&r->info + info_fields[k].offset;
			uint32_t x32 = x.value;

			if (strcmp(x.name, info_fields[k].name))
				continue;
			if (info_fields[k].size == 4)
				memcpy(dst, &x32, 4);
			else
				memcpy(dst, &x.value, 8);
			have_abi |= !strcmp(x.name, "abi_version");
			have_khz |= !strcmp(x.name, "tsc_khz");
		}
	}
	if (!have_abi || !have_khz || !r->info.tsc_khz)
		return rfail(r, "INFO record at offset %llu lacks abi_version or tsc_khz",
			     (unsigned long long)r->rec_off);
	r->have_info = true;
	return 0;
}

/* FIELDS (@ext false) or XFIELDS; the layout is both, once FIELDS is in. */
static int parse_fields(struct nsf_reader *r, bool ext)
{
	const char *what = ext ? "XFIELDS" : "FIELDS";
	size_t n = r->rec_len / sizeof(struct ns_field);
	char why[128];

	if (r->rec_len % sizeof(struct ns_field) ||
	    n + (ext ? r->nbase : r->next) > NS_LAYOUT_MAX)
		return rfail(r, "%s record at offset %llu: bad length", what,
			     (unsigned long long)r->rec_off);
	memcpy(ext ? r->ext : r->base, r->rec, r->rec_len);
	if (ext)
		r->next = n;
	else
		r->nbase = n;
	if (!ext)
		r->have_fields = true;
	if (!r->have_fields)
		return 0;
	memset(&r->layout, 0, sizeof(r->layout));
	r->layout.n = r->nbase + r->next;
	memcpy(r->layout.f, r->base, r->nbase * sizeof(r->base[0]));
	memcpy(r->layout.f + r->nbase, r->ext, r->next * sizeof(r->ext[0]));
	if (ns_layout_check(&r->layout, why, sizeof(why)))
		return rfail(r, "%s record at offset %llu: %s", what,
			     (unsigned long long)r->rec_off, why);
	return 0;
}

static int parse_events(struct nsf_reader *r)
{
	struct ns_counters *sel = &r->events;
	uint32_t n;

	if (r->rec_len < 8)
		return rfail(r, "EVENTS record at offset %llu: bad length",
			     (unsigned long long)r->rec_off);
	memcpy(&n, r->rec, 4);
	if (n > NSL_MAX_EVENTS || r->rec_len != 8 + n * sizeof(struct nsf_event))
		return rfail(r, "EVENTS record at offset %llu: %u events in %zu bytes",
			     (unsigned long long)r->rec_off, n, r->rec_len);
	memset(sel, 0, sizeof(*sel));
	for (uint32_t i = 0; i < n; i++) {
		struct nsf_event e;

		memcpy(&e, r->rec + 8 + i * sizeof(e), sizeof(e));
		e.name[sizeof(e.name) - 1] = 0;
		e.canon[sizeof(e.canon) - 1] = 0;
		snprintf(sel->name[i], sizeof(sel->name[i]), "%s", e.name);
		snprintf(sel->canon[i], sizeof(sel->canon[i]), "%s", e.canon);
		sel->ev.ev[i].type = e.type;
		sel->ev.ev[i].config = e.config;
		sel->ev.ev[i].config1 = e.config1;
		sel->ev.ev[i].config2 = e.config2;
	}
	sel->n = sel->ev.nevents = n;
	r->have_events = true;
	return 0;
}

static int parse_calib(struct nsf_reader *r, bool cold)
{
	struct ns_calib_set *cs = cold ? &r->calib_cold : &r->calib;
	const char *what = cold ? "CALIB_COLD" : "CALIB";
	struct nsf_calib_hdr h;
	size_t entry, off = sizeof(h);
	uint32_t maxcpu = 0;

	if (r->rec_len < sizeof(h))
		return rfail(r, "%s record at offset %llu: bad length",
			     what, (unsigned long long)r->rec_off);
	memcpy(&h, r->rec, sizeof(h));
	h.model[sizeof(h.model) - 1] = 0;
	if (h.ncpus > CALIB_MAX_CPUS || h.ncost > 64 || h.nev > 64)
		return rfail(r, "%s record at offset %llu: implausible sizes",
			     what, (unsigned long long)r->rec_off);
	entry = CALIB_ENTRY_HDR + h.ncost * CALIB_COST(h.nev);
	if (r->rec_len != sizeof(h) + h.ncpus * entry)
		return rfail(r, "%s record at offset %llu: %u CPUs in %zu bytes",
			     what, (unsigned long long)r->rec_off, h.ncpus, r->rec_len);
	for (uint32_t i = 0; i < h.ncpus; i++) {
		uint32_t cpu;

		memcpy(&cpu, r->rec + off + i * entry, 4);
		if (cpu >= CALIB_MAX_CPUS)
			return rfail(r, "%s record at offset %llu: CPU %u",
				     what, (unsigned long long)r->rec_off, cpu);
		if (cpu + 1 > maxcpu)
			maxcpu = cpu + 1;
	}
	if (ns_calib_alloc(cs, maxcpu))
		return rfail(r, "out of memory");
	cs->tsc_khz = h.tsc_khz;
	cs->cold = cold;
	snprintf(cs->model, sizeof(cs->model), "%s", h.model);
	for (uint32_t i = 0; i < h.ncpus; i++, off += entry) {
		const unsigned char *p = r->rec + off;
		struct nsl_calib c;

		memset(&c, 0, sizeof(c));
		memcpy(&c.cpu, p, 4);
		memcpy(&c.nevents, p + 4, 4);
		if (c.nevents > h.nev)
			c.nevents = h.nev;
		for (uint32_t m = 0; m < h.ncost && m < NSL_C_MAX; m++) {
			const unsigned char *q = p + CALIB_ENTRY_HDR +
						 m * CALIB_COST(h.nev);
			struct nsl_cost *k = &c.cost[m];

			memcpy(&k->ticks, q, 8);
			memcpy(&k->min, q + 8, 8);
			memcpy(&k->cv_ppm, q + 16, 4);
			memcpy(&k->samples, q + 20, 4);
			memcpy(k->count, q + 24,
			       8 * (h.nev < NSL_MAX_EVENTS ? h.nev : NSL_MAX_EVENTS));
		}
		ns_calib_put(cs, &c);
	}
	if (cold)
		r->have_calib_cold = true;
	else
		r->have_calib = true;
	return 0;
}

static int parse_trailer(struct nsf_reader *r)
{
	const struct nsf_value *v = (const void *)r->rec;
	bool have_blocks = false;
	unsigned char extra;

	if (r->rec_len % sizeof(*v))
		return rfail(r, "TRAILER record at offset %llu: bad length",
			     (unsigned long long)r->rec_off);
	for (size_t i = 0; i < r->rec_len / sizeof(*v); i++) {
		struct nsf_value x;

		memcpy(&x, &v[i], sizeof(x));
		x.name[sizeof(x.name) - 1] = 0;
		if (!strcmp(x.name, "blocks")) {
			r->trailer_blocks = x.value;
			have_blocks = true;
		} else if (!strcmp(x.name, "lost")) {
			r->trailer_lost = x.value;
		} else if (!strcmp(x.name, "event_records")) {
			r->trailer_event_recs = x.value;
			r->have_trailer_event_recs = true;
		} else if (!strcmp(x.name, "sample_taken")) {
			r->sample.taken = x.value;
		} else if (!strcmp(x.name, "sample_skipped")) {
			r->sample.skipped = x.value;
		}
	}
	if (!have_blocks)
		return rfail(r, "TRAILER record at offset %llu has no block count",
			     (unsigned long long)r->rec_off);
	if (r->trailer_blocks != r->blocks || r->trailer_lost != r->lost)
		return rfail(r, "trailer says %llu blocks (%llu lost), file holds %llu (%llu lost)",
			     (unsigned long long)r->trailer_blocks,
			     (unsigned long long)r->trailer_lost,
			     (unsigned long long)r->blocks,
			     (unsigned long long)r->lost);
	if (r->have_trailer_event_recs && r->trailer_event_recs != r->event_recs)
		return rfail(r, "trailer says %llu event records, file holds %llu",
			     (unsigned long long)r->trailer_event_recs,
			     (unsigned long long)r->event_recs);
	switch (read_full(r, &extra, 1)) {
	case 0:
		break;
	case 1:
		return rfail(r, "data after the trailer at offset %llu",
			     (unsigned long long)(r->off - 1));
	default:
		return -1;
	}
	r->done = true;
	return 0;
}

/*
 * The r->rec_len bytes of a record's payload into r->rec: bytes read,
 * fewer where the file ends, -1.  The buffer grows as the bytes come, so
 * that a corrupt length in a short file costs no more memory than the
 * file has bytes.
 */
static ssize_t read_payload(struct nsf_reader *r)
{
	size_t got = 0;

	while (got < r->rec_len) {
		size_t want = r->rec_len - got;
		ssize_t n;

		if (want > NSF_DATA_TARGET)
			want = NSF_DATA_TARGET;
		if (got + want > r->cap) {
			size_t cap = r->cap * 2 > got + want ? r->cap * 2 :
				     got + want;
			unsigned char *p;

			if (cap > r->rec_len)
				cap = r->rec_len;
			p = realloc(r->rec, cap);
			if (!p)
				return rfail(r, "out of memory");
			r->rec = p;
			r->cap = cap;
		}
		n = read_full(r, r->rec + got, want);
		if (n < 0)
			return -1;
		got += n;
		if ((size_t)n < want)
			break;
	}
	return got;
}

/* Read the next record into r->rec: its kind, 0 at a clean end, -1. */
static int next_record(struct nsf_reader *r)
{
	struct nsf_rec_hdr h;
	ssize_t got;

	r->rec_off = r->off;
	got = read_full(r, &h, HDR);
	if (got <= 0)
		return got;
	if ((size_t)got < HDR)
		return rfail(r, "truncated: the file ends at offset %llu, in the middle of a record header at offset %llu: %llu blocks read",
			     (unsigned long long)r->off,
			     (unsigned long long)r->rec_off,
			     (unsigned long long)r->blocks);
	if (h.len < HDR || h.len % 8 ||
	    h.len > (h.kind == NSF_CALIB || h.kind == NSF_CALIB_COLD ?
		     CALIB_MAX_RECORD : NSF_MAX_RECORD))
		return rfail(r, "corrupt record length %u at offset %llu",
			     h.len, (unsigned long long)r->rec_off);
	r->rec_len = h.len - HDR;
	got = read_payload(r);
	if (got < 0)
		return -1;
	if ((size_t)got < r->rec_len && h.kind == NSF_DATA) {
		/* its whole items are still good: nsf_read_item() takes them */
		r->cut = true;
		r->cut_len = h.len;
		r->rec_len = got;
		r->pos = 0;
		return NSF_DATA;
	}
	if ((size_t)got < r->rec_len)
		return rfail(r, "record at offset %llu (%u bytes) cut at offset %llu",
			     (unsigned long long)r->rec_off, h.len,
			     (unsigned long long)r->off);
	if (nsf_record_crc(&h, r->rec, r->rec_len) != h.crc)
		return rfail(r, "CRC mismatch in record at offset %llu (kind %u, %u bytes)",
			     (unsigned long long)r->rec_off, h.kind, h.len);
	if (!h.kind)
		return rfail(r, "record of kind 0 at offset %llu",
			     (unsigned long long)r->rec_off);
	r->pos = 0;
	return h.kind;
}

/*
 * INFO, FIELDS, XFIELDS, EVENTS and CALIB describe every item: one of
 * each at most, all before the first DATA.  A later one would change
 * what the items already read meant, and what the caller holds of the
 * reader (the calibration's tables, the info) under its feet.
 */
static int header_record(struct nsf_reader *r, int kind)
{
	static const char *const names[] = {
		[NSF_INFO] = "INFO", [NSF_FIELDS] = "FIELDS",
		[NSF_EVENTS] = "EVENTS", [NSF_CALIB] = "CALIB",
		[NSF_XFIELDS] = "XFIELDS", [NSF_CALIB_COLD] = "CALIB_COLD",
	};
	unsigned int bit = 1u << kind;

	if (r->seen & bit)
		return rfail(r, "second %s record at offset %llu", names[kind],
			     (unsigned long long)r->rec_off);
	if (r->seen & (1u << NSF_DATA))
		return rfail(r, "%s record at offset %llu after the first DATA record",
			     names[kind], (unsigned long long)r->rec_off);
	r->seen |= bit;
	return 0;
}

/* Where a file without a trailer ends, in r->err for the caller to say. */
static void note_end(struct nsf_reader *r)
{
	rfail(r, "no trailer: the file ends at offset %llu after its last whole record, %llu blocks and %llu event records read, %llu lost",
	      (unsigned long long)r->off, (unsigned long long)r->blocks,
	      (unsigned long long)r->event_recs, (unsigned long long)r->lost);
}

/* The whole items of the DATA record the file ends inside are read. */
static enum nsf_status cut_end(struct nsf_reader *r)
{
	rfail(r, "truncated: DATA record at offset %llu (%u bytes) cut at offset %llu: its %llu whole items before the cut read (%llu blocks), unchecked by its CRC; %llu blocks in all",
	      (unsigned long long)r->rec_off, r->cut_len,
	      (unsigned long long)r->off, (unsigned long long)r->cut_items,
	      (unsigned long long)r->cut_blocks,
	      (unsigned long long)r->blocks);
	return NSF_ERR;
}

/* Records up to and including the next DATA (0), a clean end (1), -1. */
static int advance(struct nsf_reader *r)
{
	for (;;) {
		int kind = next_record(r);

		if (kind > 0 && kind != NSF_DATA)
			r->pos = r->rec_len;	/* no items in it */
		switch (kind) {
		case -1:
			return -1;
		case 0:
			note_end(r);
			return 1;
		case NSF_INFO:
			if (header_record(r, kind) || parse_info(r))
				return -1;
			break;
		case NSF_FIELDS:
		case NSF_XFIELDS:
			if (header_record(r, kind) ||
			    parse_fields(r, kind == NSF_XFIELDS))
				return -1;
			break;
		case NSF_DATA:
			if (!r->have_info || !r->have_fields)
				return rfail(r, "DATA record at offset %llu before INFO and FIELDS",
					     (unsigned long long)r->rec_off);
			r->seen |= 1u << NSF_DATA;
			return 0;
		case NSF_EVENTS:
			if (header_record(r, kind) || parse_events(r))
				return -1;
			break;
		case NSF_CALIB:
		case NSF_CALIB_COLD:
			if (header_record(r, kind) ||
			    parse_calib(r, kind == NSF_CALIB_COLD))
				return -1;
			break;
		case NSF_TRAILER:
			if (parse_trailer(r))
				return -1;
			return 1;
		default:
			/* kinds of later versions */
			r->skipped_records++;
			break;
		}
	}
}

int nsf_reader_open(struct nsf_reader *r, int fd, const char *name)
{
	struct nsf_header fh;
	ssize_t got;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->name = name;
	got = read_full(r, &fh, sizeof(fh));
	if (got < 0)
		return -1;
	if ((size_t)got < sizeof(fh) || memcmp(fh.magic, NSF_MAGIC, 8))
		return rfail(r, "not a NetSlice trace file");
	if (fh.bom == 0x04030201u)
		return rfail(r, "written on a machine of the other byte order: unsupported");
	if (fh.bom != NSF_BOM)
		return rfail(r, "bad byte-order mark 0x%08x", fh.bom);
	if (fh.version < 1 || fh.version > NSF_VERSION)
		return rfail(r, "file format version %u, this nsdump reads 1 to %u",
			     fh.version, NSF_VERSION);
	if (advance(r) < 0)
		return -1;
	if (!r->have_info || !r->have_fields) {
		if (r->done)
			return rfail(r, "no INFO or FIELDS record before the trailer");
		return rfail(r, "truncated: file ends before its INFO and FIELDS records");
	}
	return 0;
}

enum nsf_status nsf_read_item(struct nsf_reader *r, struct ns_item *it)
{
	enum ns_decode_error err;
	char why[128];

	while (r->pos >= r->rec_len) {
		if (r->done)
			return NSF_END;
		if (r->cut)
			return cut_end(r);
		switch (advance(r)) {
		case -1:
			return NSF_ERR;
		case 1:
			return r->done ? NSF_END : NSF_TRUNC;
		}
	}

	const unsigned char *p = r->rec + r->pos;
	size_t left = r->rec_len - r->pos;
	unsigned long long where = r->rec_off + HDR + r->pos;

	if (r->layout.native) {
		err = ns_decode_item(p, left, it);
	} else {
		struct nsl_item_hdr h;
		size_t n;

		err = ns_decode_item(p, left, it);	/* checks hdr.size */
		if (err == NS_DEC_OK || err > NS_DEC_TRUNCATED) {
			memcpy(&h, p, sizeof(h));
			n = ns_layout_translate(&r->layout, p, h.size, r->item,
						sizeof(r->item), why, sizeof(why));
			if (!n) {
				rfail(r, "item at offset %llu: %s", where, why);
				return NSF_ERR;
			}
			err = ns_decode_item(r->item, n, it);
			it->hdr.size = h.size;	/* bytes taken in the file */
		}
	}
	if (err) {
		/* the last item of a cut record runs past the cut */
		if (r->cut && (err == NS_DEC_SHORT_HEADER ||
			       err == NS_DEC_TRUNCATED))
			return cut_end(r);
		ns_decode_describe(err, it, why, sizeof(why));
		rfail(r, "item at offset %llu: %s", where, why);
		return NSF_ERR;
	}
	r->pos += it->hdr.size;
	r->cut_items += r->cut;
	r->cut_blocks += r->cut && it->type == NS_ITEM_BLOCK;
	count_item(it, &r->blocks, &r->lost, &r->loss_items, &r->event_recs);
	return NSF_OK;
}

void nsf_reader_close(struct nsf_reader *r)
{
	free(r->rec);
	r->rec = NULL;
	ns_calib_free(&r->calib);
	ns_calib_free(&r->calib_cold);
}
