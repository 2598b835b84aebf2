/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice trace files (nsdump -w / -r), self-describing in the manner of
 * the PSC TCP monitor's files.  All integers in the writer's byte order;
 * every length a multiple of 8.
 *
 *   header   "NSLTRACE", u32 version, u32 byte-order mark 0x01020304
 *   records  u32 kind, u32 len (bytes, header included), u32 crc, u32 0,
 *            then len - 16 bytes of payload.  crc is CRC-32 of the record
 *            with the crc field zero.  Unknown kinds are skipped by len.
 *
 *   INFO     named u64 values: the struct nsl_info fields by name; a
 *            capture the kernel sampled adds sample_rate and sample_flags
 *            (struct nsl_sample), which older readers skip by name
 *   FIELDS   struct ns_field entries: the layout of the items (layout.h)
 *   XFIELDS  the same for the item kinds added later (event, sysinfo);
 *            a record of its own so that older readers skip it whole
 *   EVENTS   the counter events of count[]: u32 n, u32 0, then n struct
 *            nsf_event (name as given, libpfm4's name, the encoding)
 *   CALIB    the macros' own cost per CPU (NSIOCGCALIB): struct
 *            nsf_calib_hdr, then ncpus entries of u32 cpu, u32 nevents,
 *            u32 0, u32 0 and ncost costs of u64 ticks, u64 min,
 *            u32 cv_ppm, u32 samples, u64 count[nev]; the sizes are in
 *            the header, so a newer ABI's larger tables still read
 *   CALIB_COLD  the same for the cold calibration (NSL_CALIB_COLD),
 *            written by nsdump --cold; a kind of its own so that older
 *            readers skip it and correct with the warm one
 *   DATA     one or more whole ABI items, blocks compact (NSL_ITEM_CBLOCK;
 *            NSL_ITEM_BLOCK in version 1)
 *   TRAILER  named u64 values: blocks, lost, loss_items, data_records,
 *            event_records, and for a sampled capture sample_taken and
 *            sample_skipped (the kernel's NSIOCGSAMPLE counts at the
 *            end); last record: a file without it was cut short.
 *
 * INFO and FIELDS (and XFIELDS, EVENTS, CALIB, CALIB_COLD) come before the first
 * DATA record, once each: the reader refuses a second one or a late one.
 * A file without XFIELDS holds event and sysinfo items in this build's
 * layout, if any.
 */
#ifndef _NS_FILE_H
#define _NS_FILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include "source/calib.h"
#include "source/decode.h"
#include "source/counters.h"
#include "source/layout.h"

#define NSF_MAGIC		"NSLTRACE"
/*
 * 2: blocks are written compact (NSL_ITEM_CBLOCK), which a version-1
 * reader would skip as an unknown kind; the version makes it refuse the
 * file instead.  Version-1 files (NSL_ITEM_BLOCK) still read.
 * 3: compact records may say NSL_RF_HCPU (ABI 5), which a version-2
 * reader would take for rcpu; versions 1 and 2 still read.
 * 4: compact blocks may carry the devices a packet crossed (ABI 6), their
 * count in cflags bits 3..5, which a version-3 reader refuses as unknown
 * cflags at the first such block; the version makes it refuse the file
 * instead.  Versions 1 to 3 still read.
 */
#define NSF_VERSION		4
#define NSF_BOM			0x01020304u
#define NSF_MAX_RECORD		(1u << 20)	/* refuse larger records, but CALIB */
#define NSF_DATA_TARGET		(64u << 10)	/* writer's DATA payload size */

enum nsf_kind {
	NSF_INFO	= 1,
	NSF_FIELDS	= 2,
	NSF_EVENTS	= 3,
	NSF_CALIB	= 4,
	NSF_DATA	= 5,
	NSF_TRAILER	= 6,
	NSF_XFIELDS	= 7,
	NSF_CALIB_COLD	= 8,
};

struct nsf_header {
	char magic[8];
	uint32_t version;
	uint32_t bom;
};

struct nsf_rec_hdr {
	uint32_t kind;
	uint32_t len;
	uint32_t crc;
	uint32_t flags;		/* 0 */
};

/* One named value of INFO and TRAILER: 32 bytes, name NUL-padded. */
struct nsf_value {
	char name[24];
	uint64_t value;
};

/* One counter event of EVENTS: 224 bytes, strings NUL-padded. */
struct nsf_event {
	char name[NS_COUNTER_NAME];	/* as given to -e */
	char canon[128];		/* libpfm4's full name */
	uint32_t type;
	uint32_t pad;
	uint64_t config, config1, config2;
};

struct nsf_calib_hdr {
	uint32_t ncpus;		/* entries that follow */
	uint32_t ncost;		/* costs per entry (NSL_C_MAX when written) */
	uint32_t nev;		/* counts per cost (NSL_MAX_EVENTS) */
	uint32_t tsc_khz;
	char model[64];		/* the machine's CPU, NUL-padded */
};

/*
 * A DATA record's pieces at most: the writer's buffer and the runs a
 * mapped ring lends (ns_run.lent), two to a run and the header.
 */
#define NSF_PIECES		64

struct nsf_writer {
	int fd;
	const char *name;
	unsigned char *buf;	/* the DATA payload's copied part */
	size_t used;		/* the payload's bytes, copied or lent */
	size_t copied;		/* of them in buf, after the header's room */
	/*
	 * The payload in order, iov[0] for the header: runs still where
	 * the source lent them, and the parts of buf between.
	 */
	struct iovec iov[NSF_PIECES];
	unsigned int npieces;	/* iov[1..npieces] */
	bool lent;		/* a piece is lent: nsf_writer_give_back() */
	uint64_t committed;	/* bytes of whole records in the file */
	uint64_t blocks;	/* blocks in committed records */
	uint64_t lost, loss_items, data_records, event_recs;
	uint64_t pending_blocks, pending_lost, pending_loss_items;
	uint64_t pending_event_recs;
	uint64_t base;		/* fd offset when opened */
	int err;		/* errno of the first failed write, or 0 */
	size_t partial;		/* bytes of the failed record that got out */
	bool cut_back;		/* and the file was cut back to committed */
	/* the kernel's sampling, or NULL; its counts read at the close */
	const struct nsl_sample *sample;
};

/* Write header, INFO, FIELDS.  0, or -1 with w->err set. */
int nsf_writer_open(struct nsf_writer *w, int fd, const char *name,
		    const struct nsl_info *info);
/*
 * The same for a capture the kernel sampled as @sample says (NULL or a
 * rate of 0 or 1: none), which must stay until nsf_writer_close(): INFO
 * holds its rate and flags, TRAILER its counts as they are then.
 */
int nsf_writer_open_sampled(struct nsf_writer *w, int fd, const char *name,
			    const struct nsl_info *info,
			    const struct nsl_sample *sample);
/* Append one decoded item (written in this build's layout). */
int nsf_write_item(struct nsf_writer *w, const struct ns_item *it);
/*
 * Append a run of compact blocks and loss items (ns_decode_run()) as
 * they are: the same bytes in the same DATA records as nsf_write_item()
 * item by item, the run's counts taken from @r.
 */
int nsf_write_run(struct nsf_writer *w, const struct ns_run *r);
/* EVENTS and CALIB: after nsf_writer_open(), before any item. */
int nsf_write_events(struct nsf_writer *w, const struct ns_counters *sel);
int nsf_write_calib(struct nsf_writer *w, const struct ns_calib_set *cs);
int nsf_writer_flush(struct nsf_writer *w);
/*
 * The lent runs are wanted back: the DATA record holding any of them is
 * written (if that fails, their bytes are copied for what
 * nsf_writer_close() salvages).  None is read after; 0 or -1.
 */
int nsf_writer_give_back(struct nsf_writer *w);
/*
 * Flush, append the TRAILER, close the fd.  On a write error the file is
 * cut back to its last whole record (if it is a regular file) and closed;
 * w->blocks then counts what the file holds.  0 or -1 (w->err).
 *
 * A disk that fills (ENOSPC, EFBIG, EDQUOT) in the middle of a DATA
 * record loses none of the items there was room for: once the file is
 * cut back, those that fit in the bytes the record got are written again
 * as a smaller DATA record.  Where the file cannot be cut back (a pipe),
 * the reader takes the whole items of the cut record.
 */
int nsf_writer_close(struct nsf_writer *w);
/* CRC-32 of a record: its header with crc zero, then its payload. */
uint32_t nsf_record_crc(const struct nsf_rec_hdr *h, const void *payload,
			size_t len);

/*
 * A file cut inside a DATA record (a capture killed, a full disk that
 * could not be cut back) gives its whole items up to the cut, then
 * NSF_ERR with r->cut set and r->err saying where the file ends: those
 * items are not CRC-checked (the CRC covers the bytes that are missing),
 * only decoded.  A file cut inside any other record gives NSF_ERR at once.
 */
enum nsf_status {
	NSF_OK = 0,		/* an item */
	NSF_END = 1,		/* trailer reached, file complete */
	NSF_TRUNC = 2,		/* clean end of file before a trailer (r->err
				   says where) */
	NSF_ERR = -1,		/* r->err says what */
};

struct nsf_reader {
	int fd;
	const char *name;
	uint64_t off;		/* file offset of the next unread byte */
	uint64_t rec_off;	/* offset of the current record */
	struct nsl_info info;
	/* INFO's sampling (rate 0: none), TRAILER's counts once read */
	struct nsl_sample sample;
	struct ns_layout layout;	/* FIELDS then XFIELDS */
	struct ns_field base[NS_LAYOUT_MAX], ext[NS_LAYOUT_MAX];
	size_t nbase, next;	/* as read */
	bool have_info, have_fields, done;
	bool have_events, have_calib, have_calib_cold;
	uint32_t seen;			/* bit n: a record of kind n was read */
	/* both fixed once nsf_reader_open() returns: a caller may copy them */
	struct ns_counters events;		/* EVENTS, if have_events */
	struct ns_calib_set calib;	/* CALIB, if have_calib */
	struct ns_calib_set calib_cold;	/* CALIB_COLD, if have_calib_cold */
	unsigned char *rec;	/* current record payload */
	size_t rec_len, pos, cap;
	unsigned char item[NS_LAYOUT_ITEM_MAX];	/* translated item */
	uint64_t blocks, lost, loss_items, skipped_records, event_recs;
	uint64_t trailer_blocks, trailer_lost, trailer_event_recs;
	bool have_trailer_event_recs;
	/* the DATA record the file ends inside; rec holds what there is */
	bool cut;
	uint32_t cut_len;		/* its length, as its header says */
	uint64_t cut_items, cut_blocks;	/* whole items read from it */
	char err[256];
};

/* Read the header and everything up to the first DATA record. */
int nsf_reader_open(struct nsf_reader *r, int fd, const char *name);
enum nsf_status nsf_read_item(struct nsf_reader *r, struct ns_item *it);
void nsf_reader_close(struct nsf_reader *r);

#endif /* _NS_FILE_H */
