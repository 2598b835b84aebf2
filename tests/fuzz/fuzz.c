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

/*
 * stderr as it was before libFuzzer's -close_fd_mask=2 sent it to
 * /dev/null (run.sh and smoke.sh close it: nsdump's messages): a failed
 * property is said there, in the run's log.
 */
static int report_fd = 2;

__attribute__((constructor)) static void keep_stderr(void)
{
	int fd = dup(2);

	if (fd >= 0)
		report_fd = fd;
}

void fuzz_fail(const char *cond, const char *file, int line)
{
	dprintf(report_fd, "%s:%d: property failed: %s\n", file, line, cond);
	abort();
}
