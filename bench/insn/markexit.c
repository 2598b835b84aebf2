// SPDX-License-Identifier: GPL-2.0
/*
 * Preloaded into nsdump by bench/insnprof.sh (LD_PRELOAD): executes the
 * plugin's marker once, where the capture's work ends -- its rings
 * drained, its file written and closed -- so that a window can end
 * there, as it begins after the capture's start, and what follows be
 * counted on its own, once per capture.
 *
 * That point is nsdump's close() of its file, named by
 * INSNPROF_MARK_AFTER: what comes after it is the capture's teardown, as
 * opening the device was its start-up (unmapping the rings, closing
 * /dev/ns, where the module turns the hooks' static key off and patches
 * every hook site, and the process's exit).  Without the variable, or a
 * capture that never closes that file, the mark is taken once main() has
 * returned, by the destructor: a preloaded library's destructor runs
 * after those of the libraries the program loaded.  Either way it writes
 * one line to stderr, so that the script knows the mark was taken by
 * nsdump and not missed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mark.h"

static bool marked;

static void mark_once(void)
{
	static const char note[] = "insnprof: marked at exit\n";

	if (marked)
		return;
	marked = true;
	nsl_insn_mark();
	if (write(STDERR_FILENO, note, sizeof(note) - 1) < 0)
		return;
}

/* Whether @fd is the file INSNPROF_MARK_AFTER names: its device and inode. */
static bool is_marked_file(int fd)
{
	const char *path = getenv("INSNPROF_MARK_AFTER");
	struct stat a, b;

	return path && fstat(fd, &a) == 0 && S_ISREG(a.st_mode) &&
	       stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int close(int fd)
{
	static int (*real_close)(int);
	bool last = !marked && is_marked_file(fd);
	int ret;

	if (!real_close)
		real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	ret = real_close(fd);
	if (last)
		mark_once();
	return ret;
}

__attribute__((destructor)) static void markexit(void)
{
	mark_once();
}
