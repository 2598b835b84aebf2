// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the trace-file reader (nsdump -r).  The input is a
 * trace file; the harness makes the CRC of every whole record right
 * before reading it, so that a mutation reaches the INFO, FIELDS,
 * XFIELDS, EVENTS, CALIB, DATA (items, translated when the layout is
 * not this build's) and TRAILER parsers instead of stopping at the CRC
 * check, which tests/host/test_file.c covers.  What must hold of any
 * file besides the sanitizers' rules: no more blocks than its bytes can
 * carry, every item returned is one the decoder accepts, and a file read
 * to its end agrees with its trailer.  Each block is corrected with the
 * file's own calibration, as -r does.
 */
#include <stdlib.h>
#include <string.h>
#include "source/file.h"
#include "stage/correct.h"
#include "fuzz.h"

/* The input with each whole record's CRC made right; its length. */
static unsigned char *fix_crcs(const uint8_t *data, size_t size)
{
	unsigned char *p = malloc(size ? size : 1);
	size_t off = sizeof(struct nsf_header);

	if (!p)
		return NULL;
	memcpy(p, data, size);
	while (off + sizeof(struct nsf_rec_hdr) <= size) {
		struct nsf_rec_hdr h;

		memcpy(&h, p + off, sizeof(h));
		if (h.len < sizeof(h) || h.len > size - off)
			break;
		h.crc = nsf_record_crc(&h, p + off + sizeof(h),
				       h.len - sizeof(h));
		memcpy(p + off, &h, sizeof(h));
		off += h.len;
	}
	return p;
}

static void check_item(const struct ns_item *it)
{
	if (it->type == NS_ITEM_BLOCK) {
		FUZZ_ASSERT(it->block.nrec <= NSL_MAX_RECORDS);
		FUZZ_ASSERT(it->block.nevents <= NSL_MAX_EVENTS);
		for (unsigned int i = 0; i < it->block.nrec; i++)
			FUZZ_ASSERT(ns_region_name(it->block.rec[i].region));
	} else if (it->type == NS_ITEM_EVENT) {
		FUZZ_ASSERT(ns_event_type_name(it->event.type));
	}
	FUZZ_ASSERT(it->hdr.size >= 8 && it->hdr.size % 8 == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *p = fix_crcs(data, size);
	struct nsf_reader r;
	struct ns_item it;
	enum nsf_status st = NSF_ERR;
	int fd;

	if (!p)
		return 0;
	fd = fuzz_fd(p, size);
	if (fd < 0)
		abort();
	if (!nsf_reader_open(&r, fd, "fuzz")) {
		FUZZ_ASSERT(r.have_info && r.have_fields && r.info.tsc_khz);
		while ((st = nsf_read_item(&r, &it)) == NSF_OK) {
			struct ns_rec_corr corr[NSL_MAX_RECORDS];

			check_item(&it);
			if (it.type == NS_ITEM_BLOCK && r.have_calib)
				ns_correct_block(&r.calib, &it.block, corr);
		}
	}
	/* a block takes 8 bytes at the least (a layout's smallest) */
	FUZZ_ASSERT(r.blocks <= size / 8);
	if (r.layout.native)
		FUZZ_ASSERT(r.blocks <= size / NSL_BLOCK_SIZE(0));
	if (st == NSF_END)
		FUZZ_ASSERT(r.done && r.blocks == r.trailer_blocks &&
			    r.lost == r.trailer_lost);
	FUZZ_ASSERT(r.cut ? st == NSF_ERR : r.cut_items == 0);
	nsf_reader_close(&r);
	free(p);
	return 0;
}
