/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _NS_TESTS_H
#define _NS_TESTS_H

#include <stddef.h>

void test_decode(void);
void test_stats(void);
void test_report(void);
void test_file(void);
void test_fuzz(void);
void test_events(void);
void test_calib(void);
void test_magnet(void);

/* A memfd holding @len bytes of @p, offset 0. */
int mem_fd(const void *p, size_t len);
/* The whole content of @fd (from offset 0) into malloc'd memory. */
unsigned char *fd_bytes(int fd, size_t *len);

#endif /* _NS_TESTS_H */
