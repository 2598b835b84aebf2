/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one TAP emitter of the C tests (the shell's is tests/tap.sh, the
 * Python checks' tests/vm/tap.py):
 *
 *	tap_ok(cond, fmt, ...)	"ok N - ..." or "not ok N - ...", counted;
 *				returns cond
 *	tap_passed, tap_failed	the counts
 *	tap_finish()		"1..N" and "N passed, N failed"; the exit
 *				status, 0 or 1
 *	TAP_IS(term)		a term of a compound check, named when it is
 *				the one that failed (tapterm.h)
 *
 * One file of the program defines TAP_IMPLEMENT before including this.
 * A program whose lines must not interleave (threads) points tap_vline at
 * a function that writes one line whole, and defines TAP_SAY the same way
 * before including (tapterm.h).
 */
#ifndef _NS_TAP_C_H
#define _NS_TAP_C_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "tapterm.h"

extern int tap_passed, tap_failed;
/* Writes @prefix, then @fmt formatted, then the end of the line. */
extern void (*tap_vline)(const char *prefix, const char *fmt, va_list ap);

__attribute__((format(printf, 2, 3)))
bool tap_ok(bool cond, const char *fmt, ...);
int tap_finish(void);

#ifdef TAP_IMPLEMENT
int tap_passed, tap_failed;

static void tap_vline_stdout(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

void (*tap_vline)(const char *prefix, const char *fmt, va_list ap) =
	tap_vline_stdout;

bool tap_ok(bool cond, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%sok %d - ", cond ? "" : "not ",
		 tap_passed + tap_failed + 1);
	if (cond)
		tap_passed++;
	else
		tap_failed++;
	va_start(ap, fmt);
	tap_vline(prefix, fmt, ap);
	va_end(ap);
	return cond;
}

int tap_finish(void)
{
	printf("1..%d\n%d passed, %d failed\n", tap_passed + tap_failed,
	       tap_passed, tap_failed);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}
#endif /* TAP_IMPLEMENT */

#endif /* _NS_TAP_C_H */
