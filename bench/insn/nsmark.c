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
 *
 * nsmark --rep runs the plugin's own check instead (tests/vm/t_insn.sh):
 * a marker, REP_TIMES copies of REP_BYTES bytes by `rep movsb`, a
 * marker.  The plugin should count REP_TIMES instructions for them, not
 * one per byte.
 */
#include <stdio.h>
#include <string.h>
#include "mark.h"

#define REP_TIMES	100
#define REP_BYTES	4096

static int rep_check(void)
{
	static unsigned char src[REP_BYTES], dst[REP_BYTES];

	nsl_insn_mark();
	for (int i = 0; i < REP_TIMES; i++) {
#if defined(__x86_64__) || defined(__i386__)
		void *d = dst, *s = src;
		size_t n = sizeof(dst);

		__asm__ volatile("rep movsb"
				 : "+D"(d), "+S"(s), "+c"(n) : : "memory");
#endif
	}
	nsl_insn_mark();
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int n = 0;
	int c;

	if (argc > 1 && !strcmp(argv[1], "--rep"))
		return rep_check();

	while ((c = getchar()) != EOF) {
		if (c != '\n')
			continue;
		nsl_insn_mark();
		printf("%u\n", ++n);
		fflush(stdout);
	}
	return 0;
}
