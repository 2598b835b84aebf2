// SPDX-License-Identifier: GPL-2.0
/*
 * ns_crc32(): the CRC trace files carry, zlib's values, now computed by
 * ISA-L; the same values as the bitwise loop it began as and as zlib.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "source/crc32.h"
#include "tap.h"
#include "tests.h"

/* The loop ns_crc32() had before zlib, bit by bit, as the reference. */
static uint32_t bitwise(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = ~0u;

	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
	}
	return ~c;
}

void test_crc(void)
{
	static unsigned char buf[100003];
	uint32_t split;

	TAP_EQ(ns_crc32(0, "123456789", 9), 0xCBF43926u,
	       "crc32: the check value of CRC-32/ISO-HDLC");
	TAP_EQ(ns_crc32(0, "", 0), 0, "crc32: nothing is 0");
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	TAP_EQ(ns_crc32(0, buf, sizeof(buf)), bitwise(buf, sizeof(buf)),
	       "crc32: 100003 bytes as the bitwise loop gives them");
	split = ns_crc32(ns_crc32(0, buf, 777), buf + 777, sizeof(buf) - 777);
	TAP_EQ(split, ns_crc32(0, buf, sizeof(buf)),
	       "crc32: in two calls as in one (the record header, then its payload)");

	/* Every length to 300 and random ones to 100003, at odd offsets. */
	unsigned int bad = 0, runs = 0;

	srand(7);
	for (size_t len = 0; len < 300; len++) {
		for (size_t off = 0; off < 8; off++, runs++) {
			uint32_t seed = (uint32_t)rand();

			bad += ns_crc32(seed, buf + off, len) !=
			       crc32_z(seed, buf + off, len);
		}
	}
	for (int i = 0; i < 2000; i++, runs++) {
		size_t off = (size_t)rand() % 64;
		size_t len = (size_t)rand() % (sizeof(buf) - off);
		uint32_t seed = (uint32_t)rand();

		bad += ns_crc32(seed, buf + off, len) !=
		       crc32_z(seed, buf + off, len);
	}
	TAP_EQ(bad, 0, "crc32: zlib's crc32_z() values in %u runs (every length to 300 at 8 offsets, 2000 random), any seed",
	       runs);
}
