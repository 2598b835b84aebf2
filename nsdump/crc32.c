// SPDX-License-Identifier: GPL-2.0
/* Bitwise-table CRC-32; a trace record is small, speed is not a concern. */
#include "crc32.h"

static uint32_t table[256];

static void build_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		table[i] = c;
	}
}

uint32_t ns_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!table[1])
		build_table();
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
