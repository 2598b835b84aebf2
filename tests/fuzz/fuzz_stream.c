// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the raw item stream of /dev/ns, decoded as nsdump
 * decodes a read() (main.c's consume_buffer): item after item until one
 * is bad, whose error is described.  What must hold of every item the
 * decoder accepts:
 *  - translated with this build's own layout (what the reader does with a
 *    file of another layout), it comes out byte for byte the same;
 *  - written with -w's writer and read back with -r's reader, all of
 *    them come back byte for byte (a block, which the writer makes
 *    compact, as the struct it decodes to), and the trailer agrees.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "source/file.h"
#include "fuzz.h"

static struct ns_layout native;

/* The bytes of a decoded item as the writer takes them. */
static const void *item_bytes(const struct ns_item *it)
{
	switch (it->type) {
	case NS_ITEM_BLOCK: return &it->block;
	case NS_ITEM_LOSS: return &it->loss;
	case NS_ITEM_EVENT: return &it->event;
	case NS_ITEM_SYSINFO: return &it->sysinfo;
	default: return it->raw;
	}
}

static void check_translate(const struct ns_item *it)
{
	unsigned char out[NS_LAYOUT_ITEM_MAX];
	char why[128];
	size_t n;

	/* unknown kinds are copied only up to the largest struct */
	if (it->type == NS_ITEM_SKIPPED && it->hdr.size > sizeof(out))
		return;
	n = ns_layout_translate(&native, it->raw, it->hdr.size, out,
				sizeof(out), why, sizeof(why));
	FUZZ_ASSERT(n == it->hdr.size);
	/* a compact block is not in the layout: it passes as it is */
	FUZZ_ASSERT(!memcmp(out, it->hdr.kind == NSL_ITEM_CBLOCK ? it->raw :
			    item_bytes(it), n));
}

/* @got read back from the file is @want, decoded from the input. */
static void check_same(const struct ns_item *got, const struct ns_item *want)
{
	FUZZ_ASSERT(got->type == want->type);
	if (want->type != NS_ITEM_BLOCK) {
		FUZZ_ASSERT(got->hdr.size == want->hdr.size);
		FUZZ_ASSERT(!memcmp(item_bytes(got), item_bytes(want),
				    want->hdr.size));
		return;
	}
	/* all but the kind and size, which the compact form changes */
	FUZZ_ASSERT(got->block.hdr.cpu == want->block.hdr.cpu);
	FUZZ_ASSERT(!memcmp(&got->block.seq, &want->block.seq,
			    NSL_BLOCK_SIZE(NSL_MAX_RECORDS) -
			    offsetof(struct nsl_block, seq)));
}

/* The items of @data before the first bad one: how many bytes they take. */
static size_t decode_all(const uint8_t *data, size_t size,
			 struct nsf_writer *w)
{
	size_t pos = 0;

	while (pos < size) {
		struct ns_item it;
		enum ns_decode_error err;
		char why[128];

		err = ns_decode_item(data + pos, size - pos, &it);
		if (err) {
			ns_decode_describe(err, &it, why, sizeof(why));
			break;
		}
		FUZZ_ASSERT(it.hdr.size >= 8 && it.hdr.size <= size - pos);
		check_translate(&it);
		FUZZ_ASSERT(!nsf_write_item(w, &it));
		pos += it.hdr.size;
	}
	return pos;
}

/* The file of @w's items read back: the same items, in order. */
static void read_back(int fd, const uint8_t *data, size_t good,
		      const struct nsf_writer *w)
{
	struct nsf_reader r;
	struct ns_item want, got;
	size_t pos = 0;

	FUZZ_ASSERT(lseek(fd, 0, SEEK_SET) == 0);
	FUZZ_ASSERT(!nsf_reader_open(&r, fd, "fuzz"));
	while (nsf_read_item(&r, &got) == NSF_OK) {
		FUZZ_ASSERT(pos < good);
		FUZZ_ASSERT(!ns_decode_item(data + pos, good - pos, &want));
		check_same(&got, &want);
		pos += want.hdr.size;
	}
	FUZZ_ASSERT(pos == good && r.done);
	FUZZ_ASSERT(r.blocks == w->blocks && r.lost == w->lost &&
		    r.event_recs == w->event_recs);
	nsf_reader_close(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nsl_info info = {
		.abi_version = NSL_ABI_VERSION, .tsc_khz = 3000000,
		.block_size = sizeof(struct nsl_block), .ncpus = 2,
	};
	struct nsf_writer w;
	size_t good;
	int fd = fuzz_fd(NULL, 0);

	if (!native.n)
		ns_layout_native(&native);
	/* the writer closes what it is given */
	FUZZ_ASSERT(fd >= 0 && !nsf_writer_open(&w, dup(fd), "fuzz", &info));
	good = decode_all(data, size, &w);
	FUZZ_ASSERT(!nsf_writer_close(&w));
	read_back(fd, data, good, &w);
	return 0;
}
