// SPDX-License-Identifier: GPL-2.0
/*
 * Random mutations of a valid trace file and of a raw item stream, fixed
 * seed.  The readers must refuse or accept each without a sanitizer
 * report, and never report more blocks than the original holds.  Most
 * byte mutations of a file break a record's CRC; fuzz_records() mutates
 * inside records and makes their CRCs right again, so that the parsers
 * behind the CRC check get the mutations.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "source/decode.h"
#include "source/file.h"
#include "stage/filter.h"
#include "gen.h"
#include "view/report.h"
#include "stage/rtt.h"
#include "tap.h"
#include "tests.h"
#include "tpipe.h"

#define ITERATIONS	3000

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(uint64_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? rng % n : 0;
}

static size_t mutate(unsigned char *p, size_t len, size_t cap)
{
	static const uint32_t special[] = {
		0, 1, 8, 16, 0x7fffffff, 0xffffffff, 0xfffffff8, 1u << 20,
	};
	unsigned int n = 1 + rnd(4);

	while (n--) {
		size_t at = rnd(len);

		switch (rnd(5)) {
		case 0:	/* flip a bit */
			p[at] ^= 1u << rnd(8);
			break;
		case 1:	/* a random byte */
			p[at] = rnd(256);
			break;
		case 2:	/* a special u32 at an aligned place */
			at &= ~(size_t)3;
			if (at + 4 <= len) {
				uint32_t v = special[rnd(8)];

				memcpy(p + at, &v, 4);
			}
			break;
		case 3:	/* cut */
			len = at;
			break;
		case 4: {	/* duplicate a chunk */
			unsigned char tmp[256];
			size_t from = rnd(len), n2 = rnd(sizeof(tmp));

			if (from + n2 <= len && len + n2 <= cap) {
				memcpy(tmp, p + from, n2);
				memmove(p + at + n2, p + at, len - at);
				memcpy(p + at, tmp, n2);
				len += n2;
			}
			break;
		}
		}
		if (!len)
			break;
	}
	return len;
}

static void fuzz_file(void)
{
	struct gen_opts g = { .n = 20, .loss_every = 3, .open_every = 5,
			      .nevents = 1 };
	int fd = memfd_create("nsfuzz", 0), too_many = 0;
	size_t len;
	unsigned char *good, *p;
	unsigned int ends = 0, truncs = 0, errs = 0;

	gen_file(&g, dup(fd));
	good = fd_bytes(fd, &len);
	close(fd);
	p = malloc(len + 4096);
	for (int i = 0; i < ITERATIONS; i++) {
		struct nsf_reader r;
		struct ns_item it;
		enum nsf_status st = NSF_ERR;
		size_t n;

		memcpy(p, good, len);
		n = mutate(p, len, len + 4096);
		fd = mem_fd(p, n);
		if (!nsf_reader_open(&r, fd, "fuzz"))
			while ((st = nsf_read_item(&r, &it)) == NSF_OK)
				;
		too_many += r.blocks > 20;
		ends += st == NSF_END;
		truncs += st == NSF_TRUNC;
		errs += st == NSF_ERR;
		nsf_reader_close(&r);
		close(fd);
	}
	printf("# file fuzz: %u complete, %u truncated, %u errors\n", ends,
	       truncs, errs);
	TAP_EQ(too_many, 0, "fuzz: %d mutated files, none reports more than 20 blocks",
	       ITERATIONS);
	tap_ok(TAP_IS(errs > ITERATIONS / 2) &&
	       TAP_IS(ends + truncs + errs == ITERATIONS),
	       "fuzz: most mutations are caught as errors");
	free(p);
	free(good);
}

/*
 * One record of trace file @p (@len bytes, room for @cap) mutated, its
 * CRC made right: bytes or a u32 of its payload, its length (the rest
 * moved), its kind, or a copy of it put before another.  The new length.
 */
static size_t mutate_record(unsigned char *p, size_t len, size_t cap)
{
	static const uint32_t special[] = {
		0, 1, 2, 3, 4, 8, 16, 24, 255, 4096, 65535, 65536, 65537,
		0x7fffffff, 0xffffffff, 0xfffffff8,
	};
	size_t at[64], nrec = boundaries(p, len, at, 64) - 1, off, plen;
	struct nsf_rec_hdr h;

	if (!nrec || at[nrec] != len)
		return len;
	off = at[rnd(nrec)];
	memcpy(&h, p + off, sizeof(h));
	plen = h.len - sizeof(h);
	switch (rnd(8)) {
	case 0:	/* a byte */
	case 1:
		if (plen)
			p[off + sizeof(h) + rnd(plen)] ^= 1 + rnd(255);
		break;
	case 2:	/* a u32 of the payload: sizes, offsets, counts */
	case 3:
	case 4: {
		uint32_t v = special[rnd(sizeof(special) / sizeof(special[0]))];
		size_t where = rnd(plen / 4) * 4;

		if (plen < 4)
			break;
		/* mostly where the parsers look: a field's offset or size */
		if ((h.kind == NSF_FIELDS || h.kind == NSF_XFIELDS) && rnd(2))
			where = rnd(plen / 32) * 32 + 24 + 4 * rnd(2);
		else if (h.kind == NSF_CALIB && rnd(2))
			where = 4 * rnd(4);	/* ncpus, ncost, nev, tsc_khz */
		memcpy(p + off + sizeof(h) + where, &v, 4);
		break;
	}
	case 5: {	/* 8 to 64 bytes fewer or more, the rest moved */
		size_t d = 8 * (1 + rnd(8));
		size_t end = off + h.len;

		if (rnd(2) && plen >= d) {
			memmove(p + end - d, p + end, len - end);
			len -= d;
			h.len -= d;
		} else if (len + d <= cap) {
			memmove(p + end + d, p + end, len - end);
			memset(p + end, rnd(2) ? 0 : 0xff, d);
			len += d;
			h.len += d;
		}
		break;
	}
	case 6:	/* another kind */
		h.kind = 1 + rnd(NSF_XFIELDS);
		break;
	case 7: {	/* a copy before another record */
		size_t to = at[rnd(nrec + 1)];

		if (len + h.len > cap)
			break;
		memmove(p + to + h.len, p + to, len - to);
		memcpy(p + to, p + off + (off >= to ? h.len : 0), h.len);
		return len + h.len;
	}
	}
	memcpy(p + off, &h, sizeof(h));
	recrc(p, off);
	return len;
}

/*
 * Two files, every record kind among them: blocks with CALIB and EVENTS
 * (corrected as -r does: with the file's calibration, --rtt too), and
 * event records with XFIELDS.  Each error must come from a parser.
 */
static void fuzz_records(void)
{
	struct gen_opts g = { .n = 20, .loss_every = 3, .open_every = 5,
			      .nevents = 2, .invalid_every = 4,
			      .shared_every = 6, .calib = true, .named = true };
	struct gen_magnet m = { .writes = 2, .reads = 1, .addr = true,
				.sysinfo = true, .loss_at = 5 };
	static const char *const parsers[] = {
		"INFO record", "XFIELDS record", "FIELDS record",
		"EVENTS record", "CALIB record", "item at offset",
		"TRAILER record", "trailer says",
	};
	unsigned int by_parser[8] = { 0 }, crc = 0, other = 0, too_many = 0;
	unsigned char *good[2], *p;
	size_t len[2], cap;
	FILE *null = fopen("/dev/null", "w");

	for (int f = 0; f < 2; f++) {
		int fd = memfd_create("nsfuzz", 0);

		if (f ? gen_magnet_file(&m, dup(fd)) : gen_file(&g, dup(fd)))
			exit(1);
		good[f] = fd_bytes(fd, &len[f]);
		close(fd);
	}
	cap = (len[0] > len[1] ? len[0] : len[1]) * 3;
	p = malloc(cap);
	for (int i = 0; i < ITERATIONS; i++) {
		size_t n = len[i % 2];
		struct nsf_reader r;
		struct ns_calib_set calib;
		struct tpipe t;
		struct ns_rtt rtt;
		struct ns_item it;
		enum nsf_status st = NSF_ERR;
		int fd;

		memcpy(p, good[i % 2], n);
		for (unsigned int k = 1 + rnd(2); k--; )
			n = mutate_record(p, n, cap);
		fd = mem_fd(p, n);
		ns_rtt_init(&rtt);
		if (!nsf_reader_open(&r, fd, "fuzz")) {
			calib = r.calib;	/* lent, as main() takes it */
			tpipe_init_to(&t, r.have_calib ? &calib : NULL,
				      i % 4 < 2 ? &ns_plain_printer : &ns_json_printer,
				      null);
			t.p.acc.rtt = &rtt;
			t.r.verbose = 1;
			ns_clock_from_info(&t.p.acc.clock, &r.info);
			if (r.have_events)
				ns_acc_set_counters(&t.p.acc, &r.events);
			while ((st = nsf_read_item(&r, &it)) == NSF_OK)
				tpipe_push(&t, &it);
			tpipe_finish(&t);
			tpipe_free(&t);
		}
		/* a copied DATA record is read up to the trailer's count */
		too_many += r.blocks > n / NSL_BLOCK_SIZE(0) ||
			    (st == NSF_END && r.blocks > 20);
		if (st == NSF_ERR) {
			size_t k = 0;

			while (k < 8 && !strstr(r.err, parsers[k]))
				k++;
			if (k < 8)
				by_parser[k]++;
			else if (strstr(r.err, "CRC mismatch"))
				crc++;
			else
				other++;
		}
		ns_rtt_free(&rtt);
		nsf_reader_close(&r);
		close(fd);
	}
	printf("# record fuzz: refused by INFO %u, XFIELDS %u, FIELDS %u, EVENTS %u, CALIB %u, items %u, TRAILER %u+%u, elsewhere %u\n",
	       by_parser[0], by_parser[1], by_parser[2], by_parser[3],
	       by_parser[4], by_parser[5], by_parser[6], by_parser[7], other);
	TAP_EQ(too_many, 0, "fuzz: %d files mutated inside records: no more blocks than bytes allow, complete ones 20 at most",
	       ITERATIONS);
	TAP_EQ(crc, 0, "fuzz: inside records, no mutation stops at a CRC");
	tap_ok(TAP_IS(by_parser[1]) && TAP_IS(by_parser[2]) &&
	       TAP_IS(by_parser[3]) && TAP_IS(by_parser[4]) &&
	       TAP_IS(by_parser[5]),
	       "fuzz: FIELDS, XFIELDS, EVENTS, CALIB and item parsers each refuse some");
	fclose(null);
	free(p);
	free(good[0]);
	free(good[1]);
}

static void fuzz_stream(void)
{
	struct gen_opts g = { .n = 20, .loss_every = 3, .nevents = 4 };
	size_t len;
	unsigned char *good = gen_stream(&g, &len), *p = malloc(len + 4096);
	int too_many = 0;

	for (int i = 0; i < ITERATIONS; i++) {
		size_t n, pos = 0;
		unsigned int blocks = 0;
		unsigned char *exact;

		memcpy(p, good, len);
		n = mutate(p, len, len);
		exact = malloc(n ? n : 1);	/* ASan: no read past n */
		memcpy(exact, p, n);
		while (pos < n) {
			struct ns_item it;

			if (ns_decode_item(exact + pos, n - pos, &it))
				break;
			blocks += it.type == NS_ITEM_BLOCK;
			pos += it.hdr.size;
		}
		too_many += pos > n || blocks > n / NSL_BLOCK_SIZE(0);
		free(exact);
	}
	TAP_EQ(too_many, 0, "fuzz: %d mutated raw streams decode within bounds",
	       ITERATIONS);
	free(p);
	free(good);
}

/* -M -p @ports: the pipeline nsdump builds for them, printing to @out. */
static void magnet_pipe(struct tpipe *t, const char *ports, bool json,
			FILE *out)
{
	tpipe_init_to(t, NULL, json ? &ns_json_printer : &ns_plain_printer,
		      out);
	ns_filter_add_ports(&t->f, ports);
	ns_pipeline_magnet(&t->p);
	t->r.mag = &t->p.conns;
}

/* A raw stream of event records, mutated, through -M -p's printers. */
static void fuzz_magnet_stream(void)
{
	struct gen_magnet m = { .writes = 2, .reads = 1, .addr = true,
				.sysinfo = true, .loss_at = 5 };
	size_t len;
	unsigned char *good = gen_magnet_stream(&m, &len), *p = malloc(len + 4096);
	FILE *null = fopen("/dev/null", "w");
	int bad = 0;

	for (int i = 0; i < ITERATIONS; i++) {
		struct tpipe t;
		size_t n, pos = 0;

		memcpy(p, good, len);
		n = mutate(p, len, len + 4096);
		magnet_pipe(&t, "43211.0", i % 2, null);
		while (pos < n) {
			struct ns_item it;

			if (ns_decode_item(p + pos, n - pos, &it))
				break;
			pos += it.hdr.size;
			tpipe_push(&t, &it);
		}
		bad += pos > n;
		tpipe_finish(&t);
		tpipe_free(&t);
	}
	TAP_EQ(bad, 0, "fuzz: %d mutated raw streams of event records through -M -p",
	       ITERATIONS);
	fclose(null);
	free(p);
	free(good);
}

/* Event records and SYSINFO through the reader, -M and -p, mutated. */
static void fuzz_magnet(void)
{
	struct gen_magnet m = { .writes = 2, .reads = 1, .addr = true,
				.sysinfo = true, .loss_at = 5 };
	int fd = memfd_create("nsfuzz", 0), too_many = 0;
	size_t len;
	unsigned char *good, *p;
	FILE *null = fopen("/dev/null", "w");

	gen_magnet_file(&m, dup(fd));
	good = fd_bytes(fd, &len);
	close(fd);
	p = malloc(len + 4096);
	for (int i = 0; i < ITERATIONS; i++) {
		struct nsf_reader r;
		struct tpipe t;
		struct ns_item it;
		size_t n;

		memcpy(p, good, len);
		n = mutate(p, len, len + 4096);
		fd = mem_fd(p, n);
		magnet_pipe(&t, "0.5201", i % 2, null);
		if (!nsf_reader_open(&r, fd, "fuzz")) {
			ns_clock_from_info(&t.p.acc.clock, &r.info);
			while (nsf_read_item(&r, &it) == NSF_OK)
				tpipe_push(&t, &it);
			too_many += r.event_recs > 60 || r.blocks > 19;
		}
		tpipe_finish(&t);
		tpipe_free(&t);
		nsf_reader_close(&r);
		close(fd);
	}
	TAP_EQ(too_many, 0, "fuzz: %d mutated files with event records, -M and -p: within bounds",
	       ITERATIONS);
	fclose(null);
	free(p);
	free(good);
}

void test_fuzz(void)
{
	fuzz_file();
	fuzz_records();
	fuzz_stream();
	fuzz_magnet();
	fuzz_magnet_stream();
}
