// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <time.h>
#include "view/tstamp.h"

void ns_tstamp_init(struct ns_tstamper *s, enum ns_tstamp_mode mode)
{
	s->mode = mode;
	s->have_ref = false;
	s->ref_us = 0;
}

/* Whole microseconds, rounded down (before the epoch too). */
static int64_t floor_us(int64_t ns)
{
	return ns / 1000 - (ns % 1000 < 0);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* "2026-11-21 " (@date) and "23:41:07.123456 " in local time. */
static void wall(int64_t us, bool date, char *buf, size_t len)
{
	time_t sec = (time_t)floor_div(us, 1000000);
	struct tm tm;

	if (!localtime_r(&sec, &tm)) {
		snprintf(buf, len, "%lld ", (long long)us);
		return;
	}
	if (date)
		snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%06lld ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (long long)(us - floor_div(us, 1000000) * 1000000));
	else
		snprintf(buf, len, "%02d:%02d:%02d.%06lld ", tm.tm_hour,
			 tm.tm_min, tm.tm_sec,
			 (long long)(us - floor_div(us, 1000000) * 1000000));
}

/* tcpdump's relative stamp: a sign (' ' or '-'), hours uncapped. */
static void relative(int64_t d_us, char *buf, size_t len)
{
	uint64_t a = d_us < 0 ? -(uint64_t)d_us : (uint64_t)d_us;
	uint64_t sec = a / 1000000;

	snprintf(buf, len, "%c%02llu:%02llu:%02llu.%06llu ", d_us < 0 ? '-' : ' ',
		 (unsigned long long)(sec / 3600),
		 (unsigned long long)(sec % 3600 / 60),
		 (unsigned long long)(sec % 60),
		 (unsigned long long)(a % 1000000));
}

void ns_tstamp(struct ns_tstamper *s, int64_t ns, char *buf, size_t len)
{
	int64_t us = floor_us(ns);

	switch (s->mode) {
	case NS_TS_NONE:
		buf[0] = 0;
		break;
	case NS_TS_EPOCH:
		snprintf(buf, len, "%lld.%06lld ",
			 (long long)floor_div(us, 1000000),
			 (long long)(us - floor_div(us, 1000000) * 1000000));
		break;
	case NS_TS_DELTA:
	case NS_TS_SINCE_FIRST:
		if (!s->have_ref)
			s->ref_us = us;
		s->have_ref = true;
		relative(us - s->ref_us, buf, len);
		if (s->mode == NS_TS_DELTA)
			s->ref_us = us;
		break;
	case NS_TS_DATE:
		wall(us, true, buf, len);
		break;
	case NS_TS_TIME:
	default:
		wall(us, false, buf, len);
		break;
	}
}
