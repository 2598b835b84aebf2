// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "fuzz.h"

int fuzz_fd(const void *p, size_t len)
{
	/* one memfd for the process: a new one per input costs more than
	 * the parsing it feeds */
	static int fd = -1;

	if (fd < 0)
		fd = memfd_create("nsfuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) ||
	    pwrite(fd, p, len, 0) != (ssize_t)len ||
	    lseek(fd, 0, SEEK_SET))
		return -1;
	return fd;
}

void fuzz_fail(const char *cond, const char *file, int line)
{
	fprintf(stderr, "%s:%d: property failed: %s\n", file, line, cond);
	abort();
}
