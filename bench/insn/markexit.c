// SPDX-License-Identifier: GPL-2.0
/*
 * Preloaded into nsdump by bench/insnprof.sh (LD_PRELOAD): executes the
 * plugin's marker once nsdump's main() has returned -- its rings drained,
 * its file written and closed -- and before the process's exit unmaps
 * it.  So a window can end where the capture's work ends, as it begins
 * after the capture's start, and the exit be counted on its own.  A
 * preloaded library's destructor runs after those of the libraries the
 * program loaded, so nothing of nsdump's runs after the mark but libc's
 * exit.  It writes one line to stderr, so that the script knows the mark
 * was taken by nsdump and not missed.
 */
#include <unistd.h>

#include "mark.h"

__attribute__((destructor)) static void markexit(void)
{
	static const char note[] = "insnprof: marked at exit\n";

	nsl_insn_mark();
	if (write(STDERR_FILENO, note, sizeof(note) - 1) < 0)
		return;
}
