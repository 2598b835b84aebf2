// SPDX-License-Identifier: GPL-2.0
/*
 * Random mutations of a valid trace file and of a raw item stream, fixed
 * seed.  The readers must refuse or accept each without a sanitizer
 * report, and never report more blocks than the original holds.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "decode.h"
#include "file.h"
#include "filter.h"
#include "gen.h"
#include "report.h"
#include "tap.h"
#include "tests.h"

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
	tap_ok(errs > ITERATIONS / 2 && ends + truncs + errs == ITERATIONS,
	       "fuzz: most mutations are caught as errors");
	free(p);
	free(good);
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

static void magnet_emit(void *ctx, const struct ns_item *it)
{
	if (it->type == NS_ITEM_BLOCK)
		ns_report_block(ctx, &it->block);
	else
		ns_report_event(ctx, &it->event);
}

static void magnet_item(struct ns_report *rep, struct ns_magnet *mag,
			struct ns_filter *f, const struct ns_item *it)
{
	if (it->type == NS_ITEM_SYSINFO)
		ns_report_sysinfo(rep, &it->sysinfo);
	if (it->type == NS_ITEM_EVENT && ns_magnet_learn(mag, &it->event))
		ns_filter_release(f, it->event.conn, magnet_emit, rep);
	if ((it->type == NS_ITEM_BLOCK || it->type == NS_ITEM_EVENT) &&
	    ns_filter_offer(f, it) == NS_FILTER_PASS)
		magnet_emit(rep, it);
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
		struct ns_report rep;
		struct ns_magnet mag;
		struct ns_filter f;
		struct nsl_info info;
		size_t n, pos = 0;

		memcpy(p, good, len);
		n = mutate(p, len, len + 4096);
		gen_info(&info);
		ns_magnet_init(&mag);
		ns_filter_init(&f, &mag);
		ns_filter_add_ports(&f, "43211.0");
		ns_report_init(&rep, i % 2 ? &ns_json_printer : &ns_plain_printer,
			       null, GEN_TSC_KHZ);
		ns_clock_from_info(&rep.clock, &info);
		rep.mag = &mag;
		while (pos < n) {
			struct ns_item it;

			if (ns_decode_item(p + pos, n - pos, &it))
				break;
			pos += it.hdr.size;
			magnet_item(&rep, &mag, &f, &it);
		}
		bad += pos > n;
		ns_filter_finish(&f);
		ns_report_table(&rep);
		ns_report_free(&rep);
		ns_magnet_free(&mag);
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
		struct ns_report rep;
		struct ns_magnet mag;
		struct ns_filter f;
		struct ns_item it;
		size_t n;

		memcpy(p, good, len);
		n = mutate(p, len, len + 4096);
		fd = mem_fd(p, n);
		ns_magnet_init(&mag);
		ns_filter_init(&f, &mag);
		ns_filter_add_ports(&f, "0.5201");
		ns_report_init(&rep, i % 2 ? &ns_json_printer : &ns_plain_printer,
			       null, GEN_TSC_KHZ);
		rep.mag = &mag;
		if (!nsf_reader_open(&r, fd, "fuzz")) {
			ns_clock_from_info(&rep.clock, &r.info);
			while (nsf_read_item(&r, &it) == NSF_OK)
				magnet_item(&rep, &mag, &f, &it);
			too_many += r.event_recs > 60 || r.blocks > 19;
		}
		ns_filter_finish(&f);
		ns_report_table(&rep);
		ns_report_free(&rep);
		ns_magnet_free(&mag);
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
	fuzz_stream();
	fuzz_magnet();
	fuzz_magnet_stream();
}
