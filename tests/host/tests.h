/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NS_TESTS_H
#define _NS_TESTS_H

#include <stddef.h>

void test_decode(void);
void test_stats(void);
void test_report(void);
void test_file(void);
void test_fuzz(void);
void test_counters(void);
void test_calib(void);
void test_magnet(void);
void test_crc(void);
void test_expr(void);
void test_views(void);
void test_capture(void);
void test_opts(void);
void test_metrics(void);

/* A memfd holding @len bytes of @p, offset 0. */
int mem_fd(const void *p, size_t len);
/* The whole content of @fd (from offset 0) into malloc'd memory. */
unsigned char *fd_bytes(int fd, size_t *len);
/*
 * Offsets where the records of trace file @p start, then its end (the
 * clean cut points), at most @max: how many.
 */
size_t boundaries(const unsigned char *p, size_t len, size_t *at, size_t max);
/* Fix up the CRC of the record at @off after a test edited it. */
void recrc(unsigned char *p, size_t off);

#endif /* _NS_TESTS_H */
