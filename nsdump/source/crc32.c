// SPDX-License-Identifier: GPL-2.0
/*
 * The CRC-32 of trace file records: zlib's (its polynomial and
 * conditioning, crc32_z()'s values), computed by ISA-L's
 * crc32_gzip_refl(), which folds with carry-less multiplies where the
 * CPU has them and picks its code at run time.  zlib 1.2.13's tables took
 * 4 (natively) to 7 (under QEMU TCG) instructions a byte: the largest
 * single part of what nsdump -w spent on each block it recorded.
 * tests/host/test_crc.c holds the two libraries to the same values.
 */
#include <isa-l/crc.h>
#include "source/crc32.h"

uint32_t ns_crc32(uint32_t crc, const void *buf, size_t len)
{
	/* ISA-L counts lengths in 64 bits, as crc32_z() does */
	return crc32_gzip_refl(crc, buf, len);
}
