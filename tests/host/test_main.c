// SPDX-License-Identifier: GPL-2.0
/* Host unit tests of nsdump's pieces; TAP on stdout. */
#include <stdlib.h>
#include <time.h>
#define TAP_IMPLEMENT
#include "tap.h"
#include "tests.h"

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
	test_metrics();
	return tap_failed ? 1 : 0;
}
