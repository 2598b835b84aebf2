// SPDX-License-Identifier: GPL-2.0
/*
 * nsmark: executes insncount.so's marker instruction once per line read
 * from standard input, and answers each with a line saying how many it
 * executed.  A script keeps it running as a coprocess, so that a mark
 * costs the guest a pipe's round trip and no process start:
 *
 *	coproc MARK { bench/insn/nsmark; }
 *	echo >&"${MARK[1]}"; read -r n <&"${MARK[0]}"
 *
 * The plugin numbers its snapshots by every marker executed in the guest
 * (lat_tcp --insn-mark runs one too), so the script keeps that count.
 * Without the plugin the instruction is a NOP and no snapshot appears:
 * the script checks that it did.
 */
#include <stdio.h>
#include "mark.h"

int main(void)
{
	unsigned int n = 0;
	int c;

	while ((c = getchar()) != EOF) {
		if (c != '\n')
			continue;
		nsl_insn_mark();
		printf("%u\n", ++n);
		fflush(stdout);
	}
	return 0;
}
