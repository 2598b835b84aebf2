/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fuzz targets share: the libFuzzer entry point each defines,
 * and a memfd to hand an input to code that reads a file descriptor.
 */
#ifndef _NS_FUZZ_H
#define _NS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memfd holding exactly @len bytes of @p, at offset 0; -1 on error. */
int fuzz_fd(const void *p, size_t len);

/* A property of every input failed: abort, so that it is a crash. */
#define FUZZ_ASSERT(cond) \
	do { if (!(cond)) fuzz_fail(#cond, __FILE__, __LINE__); } while (0)
__attribute__((noreturn))
void fuzz_fail(const char *cond, const char *file, int line);

#endif /* _NS_FUZZ_H */
