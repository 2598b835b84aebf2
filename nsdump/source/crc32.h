/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NS_CRC32_H
#define _NS_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32 (IEEE 802.3, reflected, as zlib): start with crc = 0. */
uint32_t ns_crc32(uint32_t crc, const void *buf, size_t len);

#endif /* _NS_CRC32_H */
