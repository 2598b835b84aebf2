// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "source/file.h"
#include "gen.h"
#include "tap.h"
#include "tests.h"

int mem_fd(const void *p, size_t len)
{
	int fd = memfd_create("nstest", 0);

	if (fd < 0 || write(fd, p, len) != (ssize_t)len) {
		perror("memfd");
		exit(1);
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

unsigned char *fd_bytes(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	unsigned char *p = malloc(size ? size : 1);

	if (!p || pread(fd, p, size, 0) != size) {
		perror("fd_bytes");
		exit(1);
	}
	*len = size;
	return p;
}

static unsigned char *make_file(const struct gen_opts *g, size_t *len)
{
	int fd = memfd_create("nstest", 0);
	unsigned char *p;

	if (gen_file(g, dup(fd))) {
		perror("gen_file");
		exit(1);
	}
	p = fd_bytes(fd, len);
	close(fd);
	return p;
}

struct outcome {
	enum nsf_status status;	/* NSF_ERR also when open failed */
	bool opened, cut;
	uint64_t blocks, lost;
	char err[256];
};

static struct outcome read_all(const void *p, size_t len)
{
	struct outcome o = { .status = NSF_ERR };
	struct nsf_reader r;
	int fd = mem_fd(p, len);
	struct ns_item it;

	if (!nsf_reader_open(&r, fd, "t")) {
		o.opened = true;
		while ((o.status = nsf_read_item(&r, &it)) == NSF_OK)
			;
	}
	o.blocks = r.blocks;
	o.lost = r.lost;
	o.cut = r.cut;
	memcpy(o.err, r.err, sizeof(o.err));
	nsf_reader_close(&r);
	close(fd);
	return o;
}

size_t boundaries(const unsigned char *p, size_t len, size_t *at,
			 size_t max)
{
	size_t n = 0, off = sizeof(struct nsf_header);

	while (off + sizeof(struct nsf_rec_hdr) <= len && n < max) {
		struct nsf_rec_hdr h;

		at[n++] = off;
		memcpy(&h, p + off, sizeof(h));
		off += h.len;
	}
	if (n < max)
		at[n++] = off;
	return n;
}

void recrc(unsigned char *p, size_t off)
{
	struct nsf_rec_hdr h;

	memcpy(&h, p + off, sizeof(h));
	h.crc = nsf_record_crc(&h, p + off + sizeof(h), h.len - sizeof(h));
	memcpy(p + off, &h, sizeof(h));
}

static void round_trip(void)
{
	struct gen_opts g = { .n = 25, .loss_every = 7, .open_every = 4,
			      .nevents = 2 };
	size_t flen, slen, pos = 0;
	unsigned char *file = make_file(&g, &flen);
	unsigned char *stream = gen_stream(&g, &slen);
	struct nsf_reader r;
	struct nsl_info want;
	struct ns_item it;
	int fd = mem_fd(file, flen), mismatches = 0, n = 0;
	enum nsf_status st;

	gen_info(&want);
	tap_ok(!nsf_reader_open(&r, fd, "rt"), "file: opens (%s)", r.err);
	tap_ok(!memcmp(&r.info, &want, sizeof(want)),
	       "file: INFO round-trips every struct nsl_info field");
	tap_ok(r.layout.native, "file: FIELDS match this build's layout");
	while ((st = nsf_read_item(&r, &it)) == NSF_OK) {
		size_t taken;

		n++;
		if (pos >= slen ||
		    !gen_same_item(stream + pos, slen - pos, &it, &taken))
			mismatches++;
		pos += taken;
	}
	tap_ok(TAP_IS(st == NSF_END) && TAP_IS(!mismatches) &&
	       TAP_IS(pos == slen) && TAP_IS(n == 25 + 3),
	       "file: writer -> reader gives back the 28 items byte for byte (blocks as decoded)");
	tap_ok(TAP_IS(r.blocks == 25) && TAP_IS(r.lost == 3 * GEN_LOST) &&
	       TAP_IS(r.trailer_blocks == 25),
	       "file: 25 blocks, 15 lost, trailer agrees");
	nsf_reader_close(&r);
	close(fd);
	free(file);
	free(stream);

	g = (struct gen_opts){ .n = 0 };
	file = make_file(&g, &flen);
	struct outcome o = read_all(file, flen);

	tap_ok(TAP_IS(o.status == NSF_END) && TAP_IS(!o.blocks),
	       "file: empty capture reads as complete");
	free(file);

	g = (struct gen_opts){ .n = 2000 };	/* several DATA records */
	file = make_file(&g, &flen);
	o = read_all(file, flen);
	tap_ok(TAP_IS(o.status == NSF_END) && TAP_IS(o.blocks == 2000) &&
	       TAP_IS(flen > 2 * NSF_DATA_TARGET),
	       "file: 2000 blocks over several DATA records");
	free(file);
}

static void truncation(void)
{
	struct gen_opts g = { .n = 3, .loss_every = 2 };
	size_t len, at[64], nb;
	unsigned char *p = make_file(&g, &len);
	int more_blocks = 0, complete = 0, bad_trunc = 0, bad_err = 0;
	size_t cuts = 0;

	nb = boundaries(p, len, at, 64);
	for (size_t cut = 0; cut < len; cut++) {
		struct outcome o = read_all(p, cut);
		bool boundary = false;

		for (size_t i = 0; i < nb; i++)
			boundary |= at[i] == cut;
		/* before FIELDS ends the reader cannot even start */
		if (cut < at[2])
			boundary = false;
		more_blocks += o.blocks > 3;
		complete += o.status == NSF_END;
		bad_trunc += boundary && o.status != NSF_TRUNC;
		bad_err += !boundary && o.status != NSF_ERR;
		cuts++;
	}
	TAP_EQ(cuts, len, "truncation: cut at each of the %zu byte offsets", len);
	TAP_EQ(complete, 0, "truncation: no cut reads as a complete file");
	TAP_EQ(more_blocks, 0, "truncation: no cut reports more blocks than written");
	TAP_EQ(bad_trunc, 0, "truncation: cuts at record boundaries are clean truncations");
	TAP_EQ(bad_err, 0, "truncation: cuts inside records are errors");

	struct outcome o = read_all(p, at[nb - 2]);	/* trailer cut off */

	tap_ok(TAP_IS(o.status == NSF_TRUNC) && TAP_IS(o.blocks == 3),
	       "truncation: without the trailer, 3 blocks then TRUNC");
	o = read_all(p, at[3] + 20);
	tap_ok(TAP_IS(o.status == NSF_ERR) &&
	       TAP_IS(strstr(o.err, "cut at offset") != NULL),
	       "truncation: '%s'", o.err);
	free(p);
}

/*
 * Where each item of the generator's stream ends in trace file @p: the
 * items fill the DATA records in stream order (blocks compact).  Found
 * from the file's record and item headers, without the reader.  The
 * number of items, or 0 if the DATA records do not add up.
 */
static size_t item_ends(const unsigned char *stream, size_t slen,
			const unsigned char *p, size_t len, size_t *end,
			bool *block, size_t max)
{
	size_t at[64], nb = boundaries(p, len, at, 64), pos = 0, n = 0;

	for (size_t k = 0; k + 1 < nb; k++) {
		struct nsf_rec_hdr h;
		size_t in_rec = 0;

		memcpy(&h, p + at[k], sizeof(h));
		if (h.kind != NSF_DATA)
			continue;
		while (in_rec < h.len - sizeof(h) && pos < slen && n < max) {
			struct nsl_item_hdr ih, fh;

			/* the file's item: a block of the stream, compact */
			memcpy(&ih, stream + pos, sizeof(ih));
			memcpy(&fh, p + at[k] + sizeof(h) + in_rec, sizeof(fh));
			if (!fh.size || (fh.kind == NSL_ITEM_CBLOCK) !=
			    (ih.kind == NSL_ITEM_BLOCK))
				return 0;
			in_rec += fh.size;
			pos += ih.size;
			end[n] = at[k] + sizeof(h) + in_rec;
			block[n++] = ih.kind == NSL_ITEM_BLOCK;
		}
		if (in_rec != h.len - sizeof(h))
			return 0;
	}
	return pos == slen ? n : 0;
}

/*
 * A capture cut inside a DATA record gives every whole item before the
 * cut, then an error saying where the file ends.  At every 13th byte
 * from the first DATA record on (so every offset in an item, modulo 8,
 * is met) the blocks read must be those of the stream that end at or
 * before the cut; a cut at a record boundary is a clean truncation, one
 * inside a record header an error that recovers nothing more.
 */
static void cut_data(void)
{
	/* enough compact blocks for two DATA records */
	struct gen_opts g = { .n = 600, .loss_every = 7, .open_every = 3 };
	size_t len, slen, nitems, at[8], nb, wrong = 0, cuts = 0, data;
	unsigned char *p = make_file(&g, &len);
	unsigned char *stream = gen_stream(&g, &slen);
	size_t end[1024], whole = 100, cut;
	bool block[1024];
	uint64_t blocks = 0;
	struct outcome o;
	char want[256];

	nitems = item_ends(stream, slen, p, len, end, block, 1024);
	nb = boundaries(p, len, at, 8);
	data = at[3];		/* INFO, FIELDS, XFIELDS, then DATA */
	if (!tap_ok(TAP_IS(nb == 7) && TAP_IS(nitems == g.n + g.n / 7) &&
	       TAP_IS(end[nitems - 1] == at[5]) && TAP_IS(end[whole] < at[4]),
		    "cut DATA: %zu items in two DATA records", nitems))
		goto out;
	for (cut = data + sizeof(struct nsf_rec_hdr); cut < at[5]; cut += 13) {
		bool boundary = cut == at[4];
		bool in_header = cut > at[4] && cut < at[4] + sizeof(struct nsf_rec_hdr);
		uint64_t want_blocks = 0;

		o = read_all(p, cut);
		for (size_t i = 0; i < nitems; i++)
			want_blocks += block[i] && end[i] <= cut;
		if (o.blocks != want_blocks ||
		    o.status != (boundary ? NSF_TRUNC : NSF_ERR) ||
		    o.cut != (!boundary && !in_header)) {
			if (!wrong++)
				printf("# cut at %zu: %llu blocks, want %llu: %s\n",
				       cut, (unsigned long long)o.blocks,
				       (unsigned long long)want_blocks, o.err);
		}
		cuts++;
	}
	TAP_EQ(wrong, 0, "cut DATA: at %zu offsets, the blocks read are those wholly before the cut",
	       cuts);

	/* inside the first record, 100 items and part of one more before */
	for (size_t i = 0; i < whole; i++)
		blocks += block[i];
	cut = end[whole - 1] + 123;
	o = read_all(p, cut);
	snprintf(want, sizeof(want), "truncated: DATA record at offset %zu (%zu bytes) cut at offset %zu: its %zu whole items before the cut read (%llu blocks), unchecked by its CRC; %llu blocks in all",
		 data, at[4] - data, cut, whole, (unsigned long long)blocks,
		 (unsigned long long)blocks);
	tap_ok(TAP_IS(o.status == NSF_ERR) && TAP_IS(o.blocks == blocks) &&
	       TAP_IS(!strcmp(o.err, want)),
	       "cut DATA: %llu blocks, then '%s'", (unsigned long long)o.blocks,
	       o.err);

	/* five bytes into the second record's header */
	blocks = 0;
	for (size_t i = 0; i < nitems; i++)
		blocks += block[i] && end[i] <= at[4];
	o = read_all(p, at[4] + 5);
	snprintf(want, sizeof(want), "truncated: the file ends at offset %zu, in the middle of a record header at offset %zu: %llu blocks read",
		 at[4] + 5, at[4], (unsigned long long)blocks);
	tap_ok(TAP_IS(o.status == NSF_ERR) && TAP_IS(o.blocks == blocks) &&
	       TAP_IS(!strcmp(o.err, want)),
	       "cut DATA: '%s'", o.err);
out:
	free(stream);
	free(p);
}

static void corrupt(void)
{
	struct gen_opts g = { .n = 3, .loss_every = 2 };
	size_t len, at[64];
	unsigned char *good = make_file(&g, &len), *p = malloc(len + 64);
	struct outcome o;
	char want[96];
	static const struct {
		uint32_t len;
		const char *want;
	} lens[] = {
		{ 0, "corrupt record length 0 at offset 16" },
		{ 12, "corrupt record length 12 at offset 16" },
		{ 8, "corrupt record length 8 at offset 16" },
		{ 0xFFFFFFF8u, "corrupt record length 4294967288 at offset 16" },
		{ NSF_MAX_RECORD + 8, "corrupt record length 1048584 at offset 16" },
		{ 1u << 19, "record at offset 16 (524288 bytes) cut at offset" },
	};

	boundaries(good, len, at, 64);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memcpy(p, good, len);
		memcpy(p + 16 + 4, &lens[i].len, 4);
		o = read_all(p, len);
		tap_ok(TAP_IS(o.status == NSF_ERR) &&
		       TAP_IS(!strncmp(o.err, lens[i].want,
				       strlen(lens[i].want))),
		       "corrupt: INFO length %u: '%s'", lens[i].len, o.err);
	}

	memcpy(p, good, len);
	p[at[3] + 40] ^= 0x10;	/* inside the first DATA record */
	o = read_all(p, len);
	tap_ok(TAP_IS(o.status == NSF_ERR) &&
	       TAP_IS(strstr(o.err, "CRC mismatch in record at offset")) &&
	       TAP_IS(o.blocks == 0),
	       "corrupt: flipped bit in DATA: '%s'", o.err);

	memcpy(p, good, len);
	p[at[3] + 16 + 2] = 0x08;	/* first item's size: 8 */
	p[at[3] + 16 + 3] = 0;
	recrc(p, at[3]);
	o = read_all(p, len);
	tap_ok(TAP_IS(o.status == NSF_ERR) &&
	       TAP_IS(strstr(o.err, "block size 8 is below")),
	       "corrupt: bad item inside a good record: '%s'", o.err);

	uint32_t v = 0x04030201;

	memcpy(p, good, len);
	memcpy(p + 12, &v, 4);
	o = read_all(p, len);
	tap_ok(TAP_IS(!o.opened) &&
	       TAP_IS(!strcmp(o.err, "written on a machine of the other byte order: unsupported")),
	       "corrupt: byte-swapped header: '%s'", o.err);

	memcpy(p, good, len);
	p[0] = 'X';
	o = read_all(p, len);
	tap_ok(TAP_IS(!o.opened) &&
	       TAP_IS(!strcmp(o.err, "not a NetSlice trace file")),
	       "corrupt: bad magic");

	v = NSF_VERSION + 1;
	memcpy(p, good, len);
	memcpy(p + 8, &v, 4);
	o = read_all(p, len);
	snprintf(want, sizeof(want), "file format version %u, this nsdump reads 1 to %u",
		 NSF_VERSION + 1, NSF_VERSION);
	tap_ok(TAP_IS(!o.opened) && TAP_IS(!strcmp(o.err, want)),
	       "corrupt: newer format version: '%s'", o.err);
	v = 3;	/* blocks without devices, as format 3 wrote them */
	memcpy(p + 8, &v, 4);
	o = read_all(p, len);
	tap_ok(TAP_IS(o.opened) && TAP_IS(o.status == NSF_END) &&
	       TAP_IS(o.blocks == 3),
	       "file: format 3 still reads (%llu blocks)",
	       (unsigned long long)o.blocks);

	/* trailer says 4 blocks */
	size_t tr = at[boundaries(good, len, at, 64) - 2];
	uint64_t four = 4;

	memcpy(p, good, len);
	memcpy(p + tr + 16 + 24, &four, 8);
	recrc(p, tr);
	o = read_all(p, len);
	tap_ok(TAP_IS(o.status == NSF_ERR) &&
	       TAP_IS(!strcmp(o.err, "trailer says 4 blocks (5 lost), file holds 3 (5 lost)")),
	       "corrupt: trailer count mismatch: '%s'", o.err);

	memcpy(p, good, len);
	memset(p + len, 0, 8);
	o = read_all(p, len + 8);
	tap_ok(TAP_IS(o.status == NSF_ERR) &&
	       TAP_IS(strstr(o.err, "data after the trailer")),
	       "corrupt: bytes after the trailer: '%s'", o.err);

	/* an unknown record kind (and a reserved EVENTS one) is skipped */
	struct nsf_rec_hdr h = { .kind = 77, .len = 32 };
	struct nsf_reader r;
	struct ns_item it;
	int fd;

	memcpy(p, good, at[2]);
	memcpy(p + at[2], &h, sizeof(h));
	memset(p + at[2] + 16, 0x5A, 16);
	recrc(p, at[2]);
	memcpy(p + at[2] + 32, good + at[2], len - at[2]);
	fd = mem_fd(p, len + 32);
	nsf_reader_open(&r, fd, "t");
	while (nsf_read_item(&r, &it) == NSF_OK)
		;
	tap_ok(TAP_IS(r.done) && TAP_IS(r.blocks == 3) &&
	       TAP_IS(r.skipped_records == 1),
	       "corrupt: unknown record kind skipped by length");
	nsf_reader_close(&r);
	close(fd);

	free(p);
	free(good);
}

/* The entry @name of the FIELDS or XFIELDS record at @off, or NULL. */
static unsigned char *field_entry(unsigned char *p, size_t off, const char *name)
{
	struct nsf_rec_hdr h;

	memcpy(&h, p + off, sizeof(h));
	for (size_t at = sizeof(h); at + sizeof(struct ns_field) <= h.len;
	     at += sizeof(struct ns_field))
		if (!strncmp((char *)p + off + at, name, NS_FIELD_NAME))
			return p + off + at;
	return NULL;
}

/*
 * A struct size no field fits in must be refused when the layout is read,
 * not found out by reading past an item: each row edits one FIELDS or
 * XFIELDS entry of a good file (records: INFO, FIELDS, XFIELDS, DATA).
 */
static void bad_sizes(void)
{
	static const struct {
		const char *row;
		unsigned int rec;	/* 1 FIELDS, 2 XFIELDS */
		const char *name;
		int64_t offset;		/* -1: unchanged */
		uint32_t size;
		const char *why;
	} rows[] = {
		{ "record of 0 bytes", 1, "record", -1, 0, "implausible struct sizes" },
		{ "record of 4 bytes", 1, "record", -1, 4, "implausible struct sizes" },
		{ "record of 8 bytes, start at 8", 1, "record", -1, 8,
		  "field record.start (offset 8 size 8) out of bounds" },
		{ "block of 0 bytes", 1, "block", -1, 0, "implausible struct sizes" },
		{ "record.ticks far out", 1, "record.ticks", 0x10000000, 8,
		  "field record.ticks (offset 268435456 size 8) out of bounds" },
		{ "record.ticks of 3 bytes", 1, "record.ticks", -1, 3,
		  "field record.ticks (offset 16 size 3) out of bounds" },
		{ "event of 0 bytes: its fields unsized", 2, "event", -1, 0,
		  "field event.seq of a struct whose size is not given" },
		{ "event of 4 bytes", 2, "event", -1, 4, "implausible struct sizes" },
		{ "sysinfo of 0 bytes: its fields unsized", 2, "sysinfo", -1, 0,
		  "field sysinfo.abi_version of a struct whose size is not given" },
	};
	struct gen_opts g = { .n = 3 };
	size_t len, at[16];
	unsigned char *good = make_file(&g, &len), *p = malloc(len);

	boundaries(good, len, at, 16);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned char *e;
		struct outcome o;
		char want[160];

		memcpy(p, good, len);
		e = field_entry(p, at[rows[i].rec], rows[i].name);
		if (!e) {
			tap_ok(false, "layout: %s: no entry %s", rows[i].row,
			       rows[i].name);
			continue;
		}
		if (rows[i].offset >= 0)
			memcpy(e + 24, &(uint32_t){ rows[i].offset }, 4);
		memcpy(e + 28, &rows[i].size, 4);
		recrc(p, at[rows[i].rec]);
		o = read_all(p, len);
		snprintf(want, sizeof(want), "%s record at offset %zu: %s",
			 rows[i].rec == 1 ? "FIELDS" : "XFIELDS", at[rows[i].rec],
			 rows[i].why);
		tap_ok(TAP_IS(!o.opened) && TAP_IS(!strcmp(o.err, want)),
		       "layout: %s refused: '%s'",
		       rows[i].row, o.err);
	}
	free(p);
	free(good);
}

/*
 * The records that describe the items come once, before the first DATA:
 * a second one (CALIB freed and remade under a caller that holds its
 * tables) or a late one is refused, naming its offset.  Each row puts a
 * good file's records (0 INFO, 1 FIELDS, 2 XFIELDS, 3 EVENTS, 4 CALIB,
 * 5 DATA, 6 TRAILER) in another order.
 */
static void header_records(void)
{
	static const char *const kinds[] = {
		"INFO", "FIELDS", "XFIELDS", "EVENTS", "CALIB",
	};
	enum { GOOD, SECOND, LATE };
	static const struct {
		const char *row;
		int order[10];
		int bad;		/* position in order[] */
		int why;
	} rows[] = {
		{ "as written", { 0, 1, 2, 3, 4, 5, 6, -1 }, -1, GOOD },
		{ "XFIELDS before FIELDS", { 0, 2, 1, 3, 4, 5, 6, -1 }, -1, GOOD },
		{ "a second CALIB after DATA", { 0, 1, 2, 3, 4, 5, 4, 6, -1 }, 6, SECOND },
		{ "a second CALIB before DATA", { 0, 1, 2, 3, 4, 4, 5, 6, -1 }, 5, SECOND },
		{ "CALIB only after DATA", { 0, 1, 2, 3, 5, 4, 6, -1 }, 5, LATE },
		{ "a second EVENTS after DATA", { 0, 1, 2, 3, 4, 5, 3, 6, -1 }, 6, SECOND },
		{ "EVENTS only after DATA", { 0, 1, 2, 4, 5, 3, 6, -1 }, 5, LATE },
		{ "a second INFO after DATA", { 0, 1, 2, 3, 4, 5, 0, 6, -1 }, 6, SECOND },
		{ "a second FIELDS after DATA", { 0, 1, 2, 3, 4, 5, 1, 6, -1 }, 6, SECOND },
		{ "a second XFIELDS before DATA", { 0, 1, 2, 2, 3, 4, 5, 6, -1 }, 3, SECOND },
		{ "XFIELDS only after DATA", { 0, 1, 3, 4, 5, 2, 6, -1 }, 5, LATE },
	};
	struct gen_opts g = { .n = 3, .nevents = 1, .calib = true, .named = true };
	size_t len, at[16], nb;
	unsigned char *good = make_file(&g, &len), *p = malloc(2 * len);

	nb = boundaries(good, len, at, 16);
	if (!tap_ok(nb == 8, "header records: a file of 7 records"))
		goto out;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t off = sizeof(struct nsf_header), bad_off = 0;
		const char *kind;
		char want[128];
		struct outcome o;

		memcpy(p, good, off);
		for (int k = 0; rows[i].order[k] >= 0; k++) {
			int rec = rows[i].order[k];

			if (k == rows[i].bad)
				bad_off = off;
			memcpy(p + off, good + at[rec], at[rec + 1] - at[rec]);
			off += at[rec + 1] - at[rec];
		}
		o = read_all(p, off);
		if (rows[i].why == GOOD) {
			tap_ok(TAP_IS(o.status == NSF_END) &&
			       TAP_IS(o.blocks == 3),
			       "header records: %s: read whole (%s)", rows[i].row,
			       o.err);
			continue;
		}
		kind = kinds[rows[i].order[rows[i].bad]];
		if (rows[i].why == SECOND)
			snprintf(want, sizeof(want), "second %s record at offset %zu",
				 kind, bad_off);
		else
			snprintf(want, sizeof(want), "%s record at offset %zu after the first DATA record",
				 kind, bad_off);
		tap_ok(TAP_IS(o.status == NSF_ERR) &&
		       TAP_IS(!strcmp(o.err, want)),
		       "header records: %s: '%s'", rows[i].row, o.err);
	}
out:
	free(p);
	free(good);
}

/* A layout from an imagined older netslice.h: fewer fields, moved. */
static void old_layout(void)
{
	static const struct ns_field f[] = {
		{ "block", 0, 32 }, { "record", 0, 24 }, { "loss", 0, 32 },
		{ "item.kind", 0, 2 }, { "item.size", 2, 2 }, { "item.cpu", 4, 4 },
		{ "block.seq", 8, 8 }, { "block.tsc0", 16, 8 },
		{ "block.len", 24, 4 }, { "block.nrec", 28, 1 },
		{ "block.dir", 29, 1 }, { "block.gso_segs", 30, 2 },
		{ "block.rec", 32, 0 },
		{ "record.region", 0, 1 }, { "record.flags", 2, 2 },
		{ "record.ticks", 8, 8 }, { "record.start", 16, 8 },
		{ "loss.lost", 8, 8 }, { "loss.first_seq", 16, 8 },
		{ "loss.tsc", 24, 8 },
	};
	unsigned char file[4096], item[80] = { 0 }, loss[32] = { 0 };
	struct nsf_value info[2] = { { "abi_version", 0 }, { "tsc_khz", 1000 } };
	struct nsf_value trailer[2] = { { "blocks", 1 }, { "lost", 9 } };
	struct nsf_header fh = { .magic = "NSLTRACE", .version = 1,
				 .bom = NSF_BOM };
	struct nsl_item_hdr bh = { NSL_ITEM_BLOCK, 80, 1 }, lh = { NSL_ITEM_LOSS, 32, 0 };
	size_t off = 0;
	uint64_t u64;
	uint32_t u32;
	uint16_t u16;

#define PUT(p, o, v) (memcpy((p) + (o), &(v), sizeof(v)))
	memcpy(item, &bh, 8);
	u64 = 77; PUT(item, 8, u64);
	u64 = 5000; PUT(item, 16, u64);
	u32 = 1500; PUT(item, 24, u32);
	item[28] = 2;
	item[29] = NSL_DIR_RX;
	u16 = 3; PUT(item, 30, u16);
	item[32] = NSL_R_RX_NIC;
	u64 = 2000; PUT(item, 32 + 8, u64);
	item[56] = NSL_R_RX_IP;
	u16 = NSL_RF_MIGRATED; PUT(item, 56 + 2, u16);
	u64 = 700; PUT(item, 56 + 8, u64);
	u64 = 2100; PUT(item, 56 + 16, u64);
	memcpy(loss, &lh, 8);
	u64 = 9; PUT(loss, 8, u64);
	u64 = 76; PUT(loss, 16, u64);

	memcpy(file, &fh, 16);
	off = 16;
#define REC(kind, payload, plen) do {					\
		struct nsf_rec_hdr h_ = { kind, 16 + (plen), 0, 0 };	\
		memcpy(file + off, &h_, 16);				\
		memcpy(file + off + 16, payload, plen);			\
		recrc(file, off);					\
		off += 16 + (plen);					\
	} while (0)
	REC(NSF_INFO, info, sizeof(info));
	REC(NSF_FIELDS, f, sizeof(f));
	unsigned char data[112];

	memcpy(data, loss, 32);
	memcpy(data + 32, item, 80);
	REC(NSF_DATA, data, sizeof(data));
	REC(NSF_TRAILER, trailer, sizeof(trailer));

	struct nsf_reader r;
	struct ns_item it[2];
	int fd = mem_fd(file, off);
	bool ok = !nsf_reader_open(&r, fd, "old") && !r.layout.native &&
		  nsf_read_item(&r, &it[0]) == NSF_OK &&
		  nsf_read_item(&r, &it[1]) == NSF_OK;

	tap_ok(ok, "layout: older-layout file opens and reads (%s)", r.err);
	if (ok) {
		const struct nsl_block *b = &it[1].block;

		tap_ok(TAP_IS(it[0].type == NS_ITEM_LOSS) &&
		       TAP_IS(it[0].loss.lost == 9) &&
		       TAP_IS(it[0].loss.first_seq == 76) &&
		       TAP_IS(it[0].loss.tsc == 0),
		       "layout: loss item translated");
		tap_ok(TAP_IS(it[1].type == NS_ITEM_BLOCK) &&
		       TAP_IS(b->hdr.cpu == 1) && TAP_IS(b->seq == 77) &&
		       TAP_IS(b->tsc0 == 5000) && TAP_IS(b->len == 1500) &&
		       TAP_IS(b->nrec == 2) && TAP_IS(b->dir == NSL_DIR_RX) &&
		       TAP_IS(b->gso_segs == 3) && TAP_IS(b->conn == 0) &&
		       TAP_IS(b->tcp_seq == 0),
		       "layout: block fields found by name, missing ones zero");
		tap_ok(TAP_IS(b->rec[0].region == NSL_R_RX_NIC) &&
		       TAP_IS(b->rec[0].ticks == 2000) &&
		       TAP_IS(b->rec[1].region == NSL_R_RX_IP) &&
		       TAP_IS(b->rec[1].ticks == 700) &&
		       TAP_IS(b->rec[1].start == 2100) &&
		       TAP_IS(b->rec[1].flags == NSL_RF_MIGRATED) &&
		       TAP_IS(b->rec[1].count[0] == 0),
		       "layout: records translated with the file's stride");
		tap_ok(TAP_IS(nsf_read_item(&r, &it[0]) == NSF_END) &&
		       TAP_IS(r.blocks == 1) && TAP_IS(r.lost == 9),
		       "layout: trailer agrees");
	}
	nsf_reader_close(&r);
	close(fd);
}

/* Events and SYSINFO through -w and -r, and their description. */
static void magnet_file(void)
{
	struct gen_magnet m = { .writes = 3, .reads = 2, .addr = true,
				.sysinfo = true, .loss_at = 10 };
	size_t slen, flen, pos = 0, at[16], nb;
	unsigned char *stream = gen_magnet_stream(&m, &slen);
	int fd = memfd_create("nstest", 0);
	unsigned char *file;
	struct nsf_reader r;
	struct ns_item it;
	unsigned int n = 0, ev = 0, si = 0, mismatches = 0;
	enum nsf_status st;

	if (gen_magnet_file(&m, dup(fd)))
		exit(1);
	file = fd_bytes(fd, &flen);
	close(fd);
	fd = mem_fd(file, flen);
	tap_ok(TAP_IS(!nsf_reader_open(&r, fd, "mag")) &&
	       TAP_IS(r.layout.native) &&
	       TAP_IS(r.layout.event_size == sizeof(struct nsl_event_rec)) &&
	       TAP_IS(r.layout.sysinfo_size == sizeof(struct nsl_sysinfo)),
	       "file: XFIELDS describe event and sysinfo (%s)", r.err);
	while ((st = nsf_read_item(&r, &it)) == NSF_OK) {
		size_t taken;

		n++;
		ev += it.type == NS_ITEM_EVENT;
		si += it.type == NS_ITEM_SYSINFO;
		if (pos >= slen ||
		    !gen_same_item(stream + pos, slen - pos, &it, &taken))
			mismatches++;
		pos += taken;
	}
	/* 3 writes x 25 events + 2 bursts x 10, 24 + 6 blocks */
	tap_ok(TAP_IS(st == NSF_END) && TAP_IS(!mismatches) &&
	       TAP_IS(pos == slen) && TAP_IS(ev == 95) && TAP_IS(si == 1) &&
	       TAP_IS(r.blocks == 30) && TAP_IS(r.event_recs == 95) &&
	       TAP_IS(r.trailer_event_recs == 95) &&
	       TAP_IS(r.lost == GEN_LOST) && TAP_IS(n == 127),
	       "file: 95 events, a SYSINFO, 30 blocks and a loss item round-trip byte for byte");
	nsf_reader_close(&r);
	close(fd);

	/* FIELDS holds only what readers before XFIELDS knew */
	nb = boundaries(file, flen, at, 16);
	struct nsf_rec_hdr h1, h2;
	size_t nbase, next;

	ns_layout_native_part(false, &nbase);
	ns_layout_native_part(true, &next);
	memcpy(&h1, file + at[1], sizeof(h1));
	memcpy(&h2, file + at[2], sizeof(h2));
	tap_ok(TAP_IS(nb > 4) && TAP_IS(h1.kind == NSF_FIELDS) &&
	       TAP_IS(h1.len == 16 + 32 * nbase) && TAP_IS(nbase == 45) &&
	       TAP_IS(h2.kind == NSF_XFIELDS) &&
	       TAP_IS(h2.len == 16 + 32 * next),
	       "file: FIELDS as ABI 2 has them (45 entries), events described in XFIELDS");

	/* the trailer's event count is checked */
	{
		unsigned char *p = malloc(flen);
		struct nsf_rec_hdr t;
		uint64_t bad = 94;
		struct outcome o;

		memcpy(p, file, flen);
		memcpy(&t, p + at[nb - 2], sizeof(t));
		memcpy(p + at[nb - 2] + 16 + 4 * 32 + 24, &bad, 8);
		recrc(p, at[nb - 2]);
		o = read_all(p, flen);
		tap_ok(TAP_IS(t.kind == NSF_TRAILER) &&
		       TAP_IS(o.status == NSF_ERR) &&
		       TAP_IS(!strcmp(o.err, "trailer says 94 event records, file holds 95")),
		       "file: trailer event count checked: '%s'", o.err);
		free(p);
	}
	free(file);
	free(stream);
}

/* An event record of an imagined other layout: found by name. */
static void other_event_layout(void)
{
	static const struct ns_field ext[] = {
		{ "event", 0, 48 }, { "event.conn", 8, 8 }, { "event.tsc", 16, 8 },
		{ "event.type", 24, 2 }, { "event.bytes", 28, 4 },
		{ "event.flags", 32, 4 }, { "event.tcp.snd_cwnd", 36, 4 },
		{ "event.tcp.sport", 40, 2 }, { "event.future", 42, 2 },
		{ "gizmo", 0, 64 }, { "gizmo.x", 56, 8 },
	};
	struct ns_layout l;
	const struct ns_field *base;
	unsigned char in[48] = { 0 }, out[NS_LAYOUT_ITEM_MAX];
	struct nsl_item_hdr h = { NSL_ITEM_EVENT, 48, 3 };
	struct nsl_event_rec e;
	uint64_t conn = 0x2b, tsc = 123456789;
	uint16_t type = NSL_EV_TCP_RECV, sport = 43211;
	uint32_t bytes = 1448, flags = NSL_EVF_TCP | NSL_EVF_ADDR, cwnd = 17;
	char why[128] = "";
	size_t nbase, n;

	base = ns_layout_native_part(false, &nbase);
	memset(&l, 0, sizeof(l));
	memcpy(l.f, base, nbase * sizeof(*base));
	memcpy(l.f + nbase, ext, sizeof(ext));
	l.n = nbase + sizeof(ext) / sizeof(ext[0]);
	tap_ok(TAP_IS(!ns_layout_check(&l, why, sizeof(why))) &&
	       TAP_IS(!l.native) && TAP_IS(l.event_size == 48) &&
	       TAP_IS(l.sysinfo_size == 0),
	       "layout: other event layout accepted, unknown item kind ignored (%s)", why);
	memcpy(in, &h, 8);
	memcpy(in + 8, &conn, 8);
	memcpy(in + 16, &tsc, 8);
	memcpy(in + 24, &type, 2);
	memcpy(in + 28, &bytes, 4);
	memcpy(in + 32, &flags, 4);
	memcpy(in + 36, &cwnd, 4);
	memcpy(in + 40, &sport, 2);
	n = ns_layout_translate(&l, in, 48, out, sizeof(out), why, sizeof(why));
	memcpy(&e, out, sizeof(e));
	tap_ok(TAP_IS(n == sizeof(e)) && TAP_IS(e.hdr.size == sizeof(e)) &&
	       TAP_IS(e.hdr.cpu == 3) && TAP_IS(e.conn == 0x2b) &&
	       TAP_IS(e.tsc == tsc) && TAP_IS(e.type == NSL_EV_TCP_RECV) &&
	       TAP_IS(e.bytes == 1448) && TAP_IS(e.flags == flags) &&
	       TAP_IS(e.tcp.snd_cwnd == 17) && TAP_IS(e.tcp.sport == 43211) &&
	       TAP_IS(e.seq == 0) && TAP_IS(e.tcp.mss == 0),
	       "layout: event fields found by name (nested ones too), missing ones zero");
	n = ns_layout_translate(&l, in, 40, out, sizeof(out), why, sizeof(why));
	tap_ok(TAP_IS(!n) &&
	       TAP_IS(!strcmp(why, "event record of 40 bytes, expected 48")),
	       "layout: '%s'", why);
}

/*
 * Every byte of every item struct is one field's and only one's: a field
 * a struct gains that the layout does not name fails here, not as bytes
 * lost when a file of another layout is read (block.ndev and dev[], ABI
 * 6, went undescribed so until the stream fuzz target found it).
 */
static void layout_coverage(void)
{
	static const struct {
		const char *name;	/* its fields: "<name>.*" */
		size_t size;		/* bytes they must tile */
		bool hdr;		/* starts with item.kind, .size, .cpu */
		bool devs;		/* holds dev[] */
	} st[] = {
		{ "block", offsetof(struct nsl_block, rec), true, true },
		{ "record", sizeof(struct nsl_record), false, false },
		{ "dev", sizeof(struct nsl_dev), false, false },
		{ "loss", sizeof(struct nsl_loss), true, false },
		{ "event", sizeof(struct nsl_event_rec), true, false },
		{ "sysinfo", sizeof(struct nsl_sysinfo), true, false },
	};
	struct ns_layout l;
	char why[64];

	ns_layout_native(&l);
	tap_ok(TAP_IS(l.block_fixed == NSL_BLOCK_SIZE(0)) &&
	       TAP_IS(l.rec_off == offsetof(struct nsl_block, rec)) &&
	       TAP_IS(l.rec_size == sizeof(struct nsl_record)) &&
	       TAP_IS(l.dev_off == offsetof(struct nsl_block, dev)) &&
	       TAP_IS(l.dev_size == sizeof(struct nsl_dev)) &&
	       TAP_IS(l.ndevs == NSL_MAX_DEVS) &&
	       TAP_IS(l.loss_size == sizeof(struct nsl_loss)) &&
	       TAP_IS(l.event_size == sizeof(struct nsl_event_rec)) &&
	       TAP_IS(l.sysinfo_size == sizeof(struct nsl_sysinfo)),
	       "layout: this build's struct sizes, dev[] and rec[] where netslice.h has them");
	for (size_t s = 0; s < sizeof(st) / sizeof(st[0]); s++) {
		unsigned char seen[NS_LAYOUT_ITEM_MAX] = { 0 };
		size_t plen = strlen(st[s].name), bad = st[s].size, i;

		for (i = 0; i < l.n; i++) {
			const struct ns_field *f = &l.f[i];
			bool mine = !strncmp(f->name, st[s].name, plen) &&
				    f->name[plen] == '.';

			if (!f->size || !(mine || (st[s].hdr &&
					  !strncmp(f->name, "item.", 5))))
				continue;
			for (size_t b = f->offset; b < f->offset + f->size &&
						   b < sizeof(seen); b++)
				seen[b]++;
		}
		/* dev[]'s entries, each tiled as the "dev" row checks */
		for (i = 0; st[s].devs && i < l.n; i++) {
			const struct ns_field *f = &l.f[i];

			for (uint32_t d = 0; !strncmp(f->name, "dev.", 4) &&
					     d < l.ndevs; d++) {
				size_t at = l.dev_off + d * l.dev_size + f->offset;

				for (size_t b = at; b < at + f->size &&
						    b < sizeof(seen); b++)
					seen[b]++;
			}
		}
		for (i = 0; i < sizeof(seen) && bad == st[s].size; i++)
			if (i < st[s].size ? seen[i] != 1 : seen[i] != 0)
				bad = i;
		if (bad < st[s].size)
			snprintf(why, sizeof(why), ": byte %zu is in %u fields",
				 bad, seen[bad]);
		else if (bad > st[s].size)
			snprintf(why, sizeof(why), ": a field reaches byte %zu",
				 bad);
		tap_ok(bad == st[s].size,
		       "layout: every byte of %s (%zu) is one field's%s",
		       st[s].name, st[s].size, bad == st[s].size ? "" : why);
	}
}

/* A block with every field set, devices past ndev too. */
static void full_block(struct nsl_block *b, unsigned int nrec)
{
	unsigned char *p = (unsigned char *)b;

	for (size_t i = 0; i < sizeof(*b); i++)
		p[i] = 0x11 + i * 7;
	b->hdr.kind = NSL_ITEM_BLOCK;
	b->hdr.size = NSL_BLOCK_SIZE(nrec);
	b->nrec = nrec;
	b->nevents = NSL_MAX_EVENTS;
	b->ndev = 2;
	memset(&b->rec[nrec], 0, (NSL_MAX_RECORDS - nrec) * sizeof(b->rec[0]));
	for (unsigned int i = 0; i < nrec; i++)
		b->rec[i].region = NSL_R_TCP;
}

/*
 * This build's layout taken the long way (its fields in another order,
 * looked up by name), and as ABI 6 files written before the devices were
 * described carry it: a block comes back byte for byte, devices and the
 * bytes past ndev included.
 */
static void native_layout_ways(void)
{
	struct ns_layout nat, l;
	struct nsl_block b, out;
	struct ns_field t;
	size_t nbase, next, i, n;
	char why[128] = "";
	const struct ns_field *ext = ns_layout_native_part(true, &next);

	ns_layout_native_part(false, &nbase);
	ns_layout_native(&nat);
	l = nat;
	t = l.f[6];
	l.f[6] = l.f[l.n - 1];
	l.f[l.n - 1] = t;
	tap_ok(TAP_IS(!ns_layout_check(&l, why, sizeof(why))) &&
	       TAP_IS(!l.native) && TAP_IS(nat.native) &&
	       TAP_IS(l.block_fixed == nat.block_fixed) &&
	       TAP_IS(l.rec_off == nat.rec_off) &&
	       TAP_IS(l.rec_size == nat.rec_size) &&
	       TAP_IS(l.loss_size == nat.loss_size) &&
	       TAP_IS(l.event_size == nat.event_size) &&
	       TAP_IS(l.sysinfo_size == nat.sysinfo_size) &&
	       TAP_IS(l.dev_off == nat.dev_off) &&
	       TAP_IS(l.dev_size == nat.dev_size) &&
	       TAP_IS(l.ndevs == nat.ndevs) &&
	       TAP_IS(l.nrec_off == nat.nrec_off),
	       "layout: this build's fields in another order, checked by name, derive what its own do (%s)",
	       why);
	full_block(&b, 3);
	n = ns_layout_translate(&l, &b, b.hdr.size, &out, sizeof(out), why,
				sizeof(why));
	tap_ok(TAP_IS(n == NSL_BLOCK_SIZE(3)) && TAP_IS(!memcmp(&out, &b, n)),
	       "layout: a block translated by name comes back byte for byte, devices too (%s)",
	       why);

	/* XFIELDS up to block.ndev: what such files hold is this build's */
	for (i = 0; i < next && strcmp(ext[i].name, "block.ndev"); i++)
		;
	l = nat;
	l.n = nbase + i;
	tap_ok(TAP_IS(i < next) && TAP_IS(!ns_layout_check(&l, why, sizeof(why))) &&
	       TAP_IS(l.native) && TAP_IS(l.ndevs == 0) &&
	       TAP_IS(l.event_size == sizeof(struct nsl_event_rec)),
	       "layout: ABI 6 files from before the devices were described read as this build's (%s)",
	       why);
}

/* A file system that fills after @limit bytes: RLIMIT_FSIZE in a child. */
/* Bytes block @i of @g takes in a file: compact. */
static size_t file_block_size(const struct gen_opts *g, unsigned int i)
{
	uint64_t cblock[NSL_CBLOCK_MAX / 8];
	unsigned char item[sizeof(struct nsl_block)];
	struct ns_item it;

	if (ns_decode_item(item, gen_block(g, i, item), &it))
		return 0;
	return nsl_cblock_encode(&it.block, cblock);
}

/* What a writer in a child whose files stop at FULL_AT bytes does. */
#define FULL_AT		150000

/*
 * @fill writing into @fd in a child whose files may not pass FULL_AT
 * bytes; the writer's error, blocks and committed bytes in @counts.
 */
static void write_limited(void (*fill)(struct nsf_writer *w, void *arg),
			  void *arg, int fd, const char *path,
			  uint64_t counts[3])
{
	int pipefd[2], status;
	pid_t pid;

	if (pipe(pipefd))
		exit(1);
	pid = fork();
	if (!pid) {
		struct rlimit rl = { FULL_AT, FULL_AT };
		struct nsf_writer w;
		struct nsl_info info;

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		gen_info(&info);
		nsf_writer_open(&w, fd, path, &info);
		fill(&w, arg);
		nsf_writer_close(&w);
		counts[0] = w.err;
		counts[1] = w.blocks;
		counts[2] = w.committed;
		if (write(pipefd[1], counts, 3 * sizeof(*counts)) !=
		    3 * sizeof(*counts))
			_exit(1);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (read(pipefd[0], counts, 3 * sizeof(*counts)) != 3 * sizeof(*counts))
		counts[0] = 0;
	close(pipefd[0]);
	close(pipefd[1]);
}

/* The blocks of @arg (struct gen_opts) one by one, until one fails. */
static void fill_items(struct nsf_writer *w, void *arg)
{
	const struct gen_opts *g = arg;
	unsigned char item[sizeof(struct nsl_block)];
	struct ns_item it;

	for (unsigned int i = 0; i < g->n; i++) {
		ns_decode_item(item, gen_block(g, i, item), &it);
		if (nsf_write_item(w, &it))
			break;
	}
}

static void full_disk(void)
{
	struct gen_opts g = { .n = 3000 };
	char path[] = "/tmp/nsdump-test-XXXXXX";
	int fd = mkstemp(path);
	uint64_t counts[3] = { 0 };
	struct nsf_writer w;
	struct nsl_info info;

	if (fd < 0)
		exit(1);
	gen_info(&info);
	write_limited(fill_items, &g, fd, path, counts);

	size_t len, at[4];
	unsigned char *p = fd_bytes(fd, &len);
	struct outcome o = read_all(p, len);
	/*
	 * Every block there was room for: after the head (INFO, FIELDS,
	 * XFIELDS), whole DATA records of as many blocks (of six records,
	 * compact) as 64 KiB takes, then one record of the blocks that fit
	 * in what is left.
	 */
	size_t bsize = file_block_size(&g, 0), per = NSF_DATA_TARGET / bsize;
	size_t rec = sizeof(struct nsf_rec_hdr) + per * bsize, left, fit;

	boundaries(p, len, at, 4);
	left = (FULL_AT - at[3]) % rec;
	fit = left > sizeof(struct nsf_rec_hdr) ?
	      (left - sizeof(struct nsf_rec_hdr)) / bsize : 0;
	TAP_EQ(counts[1], (FULL_AT - at[3]) / rec * per + fit,
	       "full disk: the file keeps every block there was room for");
	tap_ok(TAP_IS(counts[0] == EFBIG) && TAP_IS(counts[1] > 0) &&
	       TAP_IS(counts[1] < g.n) &&
	       TAP_IS(file_block_size(&g, g.n - 1) == bsize),
	       "full disk: write fails after %llu blocks", (unsigned long long)counts[1]);
	tap_ok(len == counts[2], "full disk: file cut back to its %llu committed bytes",
	       (unsigned long long)counts[2]);
	tap_ok(TAP_IS(o.status == NSF_TRUNC) && TAP_IS(o.blocks == counts[1]),
	       "full disk: file reads as truncated with exactly the blocks reported");
	free(p);
	close(fd);
	unlink(path);

	fd = open("/dev/full", O_WRONLY);
	tap_ok(TAP_IS(fd >= 0) &&
	       TAP_IS(nsf_writer_open(&w, fd, "/dev/full", &info)) &&
	       TAP_IS(w.err == ENOSPC) && TAP_IS(w.blocks == 0) &&
	       TAP_IS(nsf_writer_close(&w)) && TAP_IS(w.err == ENOSPC),
	       "full disk: /dev/full gives ENOSPC, 0 blocks");
}

/*
 * A file of @n blocks written with @sample (NULL: nsf_writer_open()),
 * whose counts change after the open, as the kernel's do during a
 * capture: the trailer takes them as they are at the close.
 */
static unsigned char *sampled_file(struct nsl_sample *sample, unsigned int n,
				   size_t *len)
{
	struct gen_opts g = { .n = n };
	unsigned char item[sizeof(struct nsl_block)];
	int fd = memfd_create("nstest", 0);
	struct nsf_writer w;
	struct nsl_info info;
	unsigned char *p;

	gen_info(&info);
	if (sample)
		nsf_writer_open_sampled(&w, dup(fd), "s", &info, sample);
	else
		nsf_writer_open(&w, dup(fd), "s", &info);
	for (unsigned int i = 0; i < n; i++) {
		struct ns_item it;

		ns_decode_item(item, gen_block(&g, i, item), &it);
		nsf_write_item(&w, &it);
	}
	if (sample) {
		sample->taken = 512;
		sample->skipped = 1530;
	}
	nsf_writer_close(&w);
	p = fd_bytes(fd, len);
	close(fd);
	return p;
}

/* Renames value @from in the record at @off to @to, CRC made right. */
static bool rename_value(unsigned char *p, size_t off, const char *from,
			 const char *to)
{
	struct nsf_rec_hdr h;

	memcpy(&h, p + off, sizeof(h));
	for (size_t v = off + sizeof(h); v + 32 <= off + h.len; v += 32) {
		if (strcmp((const char *)p + v, from))
			continue;
		memset(p + v, 0, 24);
		memcpy(p + v, to, strlen(to));
		recrc(p, off);
		return true;
	}
	return false;
}

/*
 * Sampling in the kernel: INFO's sample_rate and sample_flags, TRAILER's
 * sample_taken and sample_skipped; a reader that does not know a name
 * skips it, and files without sampling are as before, byte for byte.
 */
static void sampling(void)
{
	struct nsl_sample s = { .rate = 4, .flags = NSL_SAMPLE_FLOWS };
	struct nsl_sample every = { .rate = 1 };
	size_t len, plain_len, every_len, at[5];
	unsigned char *p = sampled_file(&s, 10, &len);
	unsigned char *plain = sampled_file(NULL, 10, &plain_len);
	unsigned char *each = sampled_file(&every, 10, &every_len);
	struct nsf_reader r;
	struct ns_item it;
	int fd = mem_fd(p, len);
	enum nsf_status st = NSF_ERR;

	if (!nsf_reader_open(&r, fd, "s"))
		while ((st = nsf_read_item(&r, &it)) == NSF_OK)
			;
	tap_ok(TAP_IS(st == NSF_END) && TAP_IS(r.blocks == 10) &&
	       TAP_IS(r.sample.rate == 4) &&
	       TAP_IS(r.sample.flags == NSL_SAMPLE_FLOWS) &&
	       TAP_IS(r.sample.taken == 512) &&
	       TAP_IS(r.sample.skipped == 1530),
	       "file: sampling round-trips: rate 4, flows, 512 taken and 1530 passed over as at the close (%s)",
	       r.err);
	nsf_reader_close(&r);
	close(fd);
	tap_ok(len == plain_len + 4 * sizeof(struct nsf_value),
	       "file: sampling adds four named values, nothing else (%zu bytes, %zu without)",
	       len, plain_len);
	tap_ok(TAP_IS(every_len == plain_len) &&
	       TAP_IS(!memcmp(each, plain, plain_len)),
	       "file: 1 in 1 (no sampling) writes the file of nsdump before sampling, byte for byte");

	/* what a reader that knows none of the names makes of them */
	boundaries(p, len, at, 5);
	bool renamed = rename_value(p, at[0], "sample_rate", "x_rate") &&
		       rename_value(p, at[0], "sample_flags", "x_flags");
	size_t trailer = len - (5 + 2) * sizeof(struct nsf_value) -
			 sizeof(struct nsf_rec_hdr);

	renamed = renamed && rename_value(p, trailer, "sample_taken", "x_taken") &&
		  rename_value(p, trailer, "sample_skipped", "x_skipped");
	fd = mem_fd(p, len);
	st = NSF_ERR;
	if (!nsf_reader_open(&r, fd, "s"))
		while ((st = nsf_read_item(&r, &it)) == NSF_OK)
			;
	tap_ok(TAP_IS(renamed) && TAP_IS(st == NSF_END) &&
	       TAP_IS(r.blocks == 10) && TAP_IS(!r.sample.rate) &&
	       TAP_IS(!r.sample.taken) && TAP_IS(!r.sample.skipped),
	       "file: values of names a reader does not know are skipped, the file reads whole (%s)",
	       r.err);
	nsf_reader_close(&r);
	close(fd);
	free(p);
	free(plain);
	free(each);
}

/*
 * A mapped ring as the recorder sees one: each run in bytes of its own,
 * lent (ns_run.lent) until given back, then written over, so that a
 * writer that reads a run after giving it back writes bytes the items
 * never had.
 */
struct lender {
	unsigned char *held[4096];
	size_t n, scribbled;
};

static const unsigned char *lend(struct lender *l, const void *p, size_t n)
{
	unsigned char *c = malloc(n);

	if (!c || l->n == sizeof(l->held) / sizeof(l->held[0]))
		exit(1);
	memcpy(c, p, n);
	l->held[l->n++] = c;
	return c;
}

static void give_back(struct lender *l, struct nsf_writer *w)
{
	nsf_writer_give_back(w);
	for (size_t i = 0; i < l->n; i++) {
		memset(l->held[i], 0xee, 8);
		free(l->held[i]);
	}
	l->scribbled += l->n;
	l->n = 0;
}

/*
 * @stream written as a recorder writes it: runs of at most @chunk bytes
 * (ns_decode_run()), what no run takes item by item; 0: every item one
 * by one.  With @l, as from a mapped ring: each run lent, and given back
 * after every @every runs (0: only at the end).  The file's bytes in
 * *@flen, the counts the runs gave in @sum.
 */
static unsigned char *record(const unsigned char *stream, size_t len,
			     size_t chunk, size_t *flen, struct ns_run *sum,
			     struct lender *l, unsigned int every)
{
	int fd = memfd_create("nstest", 0);
	unsigned int runs = 0;
	struct nsf_writer w;
	struct nsl_info info;
	unsigned char *p;
	size_t off = 0;

	gen_info(&info);
	memset(sum, 0, sizeof(*sum));
	if (fd < 0 || nsf_writer_open(&w, dup(fd), "runs", &info)) {
		perror("record");
		exit(1);
	}
	while (off < len) {
		size_t left = len - off;
		struct ns_item it;
		struct ns_run r;

		ns_decode_run(stream + off, chunk && chunk < left ? chunk : left,
			      &r);
		if (chunk && r.len) {
			if (l) {
				r.buf = lend(l, stream + off, r.len);
				r.lent = true;
			}
			nsf_write_run(&w, &r);
			sum->blocks += r.blocks;
			sum->lost += r.lost;
			sum->loss_items += r.loss_items;
			off += r.len;
			if (l && every && ++runs % every == 0)
				give_back(l, &w);
			continue;
		}
		if (ns_decode_shallow(stream + off, left, &it))
			break;
		nsf_write_item(&w, &it);
		off += it.hdr.size;
	}
	if (l)
		give_back(l, &w);
	nsf_writer_close(&w);
	p = fd_bytes(fd, flen);
	close(fd);
	return p;
}

/* A recorder's runs make the file that its items one by one make. */
static void runs(void)
{
	struct gen_opts g = { .n = 3000, .loss_every = 37, .open_every = 5,
			      .nevents = 2, .flows = true };
	/* 1: no run (the items one by one), then runs of one item and more */
	static const size_t chunks[] = { 1, NSL_CBLOCK_MAX, 4096, 70000,
					 1 << 20 };
	size_t slen, want_len;
	unsigned char *stream = gen_stream(&g, &slen);
	struct ns_run none;
	unsigned char *want;

	slen = gen_compact(stream, slen);
	want = record(stream, slen, 0, &want_len, &none, NULL, 0);

	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct nsf_reader r;
		struct ns_item it;
		struct ns_run sum;
		size_t len;
		unsigned char *got = record(stream, slen, chunks[i], &len, &sum,
					    NULL, 0);
		int fd = mem_fd(got, len);
		enum nsf_status st = NSF_ERR;

		if (!nsf_reader_open(&r, fd, "runs"))
			while ((st = nsf_read_item(&r, &it)) == NSF_OK)
				;
		tap_ok(TAP_IS(len == want_len) &&
		       TAP_IS(!memcmp(got, want, len)) &&
		       TAP_IS(st == NSF_END) && TAP_IS(r.blocks == g.n) &&
		       TAP_IS(sum.blocks == (chunks[i] > 1 ? g.n : 0)) &&
		       TAP_IS(sum.lost == (chunks[i] > 1 ? r.lost : 0)),
		       "file: runs of up to %zu bytes write the bytes of the items one by one (%zu bytes, several DATA records)",
		       chunks[i], want_len);
		nsf_reader_close(&r);
		close(fd);
		free(got);
	}
	free(want);
	free(stream);
}

/*
 * The DATA records' payloads of the file at @p, one after another, in
 * *@n bytes; their count and the largest in @nrec and @max.
 */
static unsigned char *data_payload(const unsigned char *p, size_t len,
				   size_t *n, size_t *nrec, size_t *max)
{
	unsigned char *out = malloc(len);
	size_t off = sizeof(struct nsf_header);

	*n = *nrec = *max = 0;
	while (out && off + sizeof(struct nsf_rec_hdr) <= len) {
		struct nsf_rec_hdr h;

		memcpy(&h, p + off, sizeof(h));
		if (h.len < sizeof(h) || off + h.len > len)
			break;
		if (h.kind == NSF_DATA) {
			size_t pl = h.len - sizeof(h);

			memcpy(out + *n, p + off + sizeof(h), pl);
			*n += pl;
			++*nrec;
			if (pl > *max)
				*max = pl;
		}
		off += h.len;
	}
	return out;
}

/*
 * Runs lent by a ring are written from where they are: the file holds
 * the items' bytes, in the same order, whichever way each run went
 * (lent or copied: NSF_LEND_MIN) and wherever it was given back.
 */
static void lent_runs(void)
{
	static const struct {
		size_t chunk;
		unsigned int every;
		const char *what;
	} cases[] = {
		{ NSL_CBLOCK_MAX, 1, "runs of one block, copied, given back each" },
		{ 4096, 1, "runs of up to 4 KiB, each given back" },
		{ 12000, 1, "runs of 12 KB (a wake-up's), each given back" },
		{ 12000, 7, "runs of 12 KB, given back every 7" },
		{ 12000, 0, "runs of 12 KB, given back at the end" },
		{ 70000, 3, "runs longer than a record, every 3" },
		{ 1 << 20, 0, "one run of the whole stream" },
	};
	struct gen_opts g = { .n = 3000, .loss_every = 37, .open_every = 5,
			      .nevents = 2, .flows = true };
	size_t slen, want_len, want_n, want_nrec, want_max;
	unsigned char *stream = gen_stream(&g, &slen);
	unsigned char *want, *want_data;
	struct ns_run none;

	slen = gen_compact(stream, slen);
	want = record(stream, slen, 0, &want_len, &none, NULL, 0);
	want_data = data_payload(want, want_len, &want_n, &want_nrec,
				 &want_max);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lender l = { 0 };
		struct ns_run sum;
		size_t len, n, nrec, max;
		unsigned char *got = record(stream, slen, cases[i].chunk, &len,
					    &sum, &l, cases[i].every);
		unsigned char *data = data_payload(got, len, &n, &nrec, &max);
		struct outcome o = read_all(got, len);

		tap_ok(TAP_IS(o.status == NSF_END) && TAP_IS(o.blocks == g.n) &&
		       TAP_IS(n == want_n) &&
		       TAP_IS(!memcmp(data, want_data, want_n)) &&
		       TAP_IS(max <= NSF_DATA_TARGET) && TAP_IS(l.scribbled > 0),
		       "file: lent %s: the items' bytes in order, CRCs whole (%zu DATA records, %zu runs written over after their give-back)",
		       cases[i].what, nrec, l.scribbled);
		free(data);
		free(got);
	}
	free(want_data);
	free(want);
	free(stream);
}

/* A stream's runs of 20,000 bytes, lent, given back two at a time. */
struct lent_fill {
	const unsigned char *stream;
	size_t len;
};

static void fill_lent(struct nsf_writer *w, void *arg)
{
	const struct lent_fill *f = arg;
	struct lender l = { 0 };
	size_t off = 0;

	while (off < f->len) {
		struct ns_run r;

		ns_decode_run(f->stream + off, f->len - off < 20000 ?
			      f->len - off : 20000, &r);
		if (!r.len)
			break;
		r.buf = lend(&l, f->stream + off, r.len);
		r.lent = true;
		off += r.len;
		if (nsf_write_run(w, &r))
			break;
		if (l.n == 2)
			give_back(&l, w);
	}
	give_back(&l, w);
}

/*
 * The disk fills while a DATA record holds lent runs: what fits of
 * them is kept, from a copy made before they are given back.
 */
static void lent_full_disk(void)
{
	struct gen_opts g = { .n = 3000 };
	char path[] = "/tmp/nsdump-test-XXXXXX";
	int fd = mkstemp(path);
	uint64_t counts[3] = { 0 };
	struct lent_fill f;
	unsigned char *stream = gen_stream(&g, &f.len);

	f.len = gen_compact(stream, f.len);
	f.stream = stream;
	if (fd < 0)
		exit(1);
	write_limited(fill_lent, &f, fd, path, counts);

	size_t len;
	unsigned char *p = fd_bytes(fd, &len);
	struct outcome o = read_all(p, len);
	size_t bsize = file_block_size(&g, 0);

	tap_ok(TAP_IS(counts[0] == EFBIG) && TAP_IS(o.status == NSF_TRUNC) &&
	       TAP_IS(o.blocks == counts[1]) && TAP_IS(counts[1] > 0) &&
	       TAP_IS(len == counts[2]) &&
	       TAP_IS(FULL_AT - len < bsize + sizeof(struct nsf_rec_hdr)),
	       "full disk, runs lent: %llu blocks kept, the file %zu bytes of %d (room for less than one more)",
	       (unsigned long long)counts[1], len, FULL_AT);
	free(p);
	close(fd);
	unlink(path);
	free(stream);
}

void test_file(void)
{
	round_trip();
	truncation();
	cut_data();
	corrupt();
	bad_sizes();
	header_records();
	old_layout();
	magnet_file();
	other_event_layout();
	layout_coverage();
	native_layout_ways();
	full_disk();
	sampling();
	runs();
	lent_runs();
	lent_full_disk();
}
