// SPDX-License-Identifier: GPL-2.0
/* Host unit tests of nsdump's pieces; TAP on stdout. */
#include <stdlib.h>
#include <time.h>
#include "tap.h"
#include "tests.h"

int tap_passed, tap_failed;

bool tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", tap_passed + tap_failed + 1);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (cond)
		tap_passed++;
	else
		tap_failed++;
	return cond;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* wall-clock times print in local time: UTC for exact text */
	setenv("TZ", "UTC", 1);
	tzset();
	test_crc();
	test_decode();
	test_stats();
	test_report();
	test_file();
	test_fuzz();
	test_counters();
	test_calib();
	test_magnet();
	test_expr();
	test_views();
	test_capture();
	test_opts();
	return tap_failed ? 1 : 0;
}
