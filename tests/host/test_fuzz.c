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
#include "gen.h"
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

void test_fuzz(void)
{
	fuzz_file();
	fuzz_stream();
}
