// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "lib/clock.h"

void ns_clock_from_info(struct ns_clock *c, const struct nsl_info *info)
{
	memset(c, 0, sizeof(*c));
	c->ref_tsc = info->ref_tsc;
	c->ref_ns = info->ref_realtime_ns;
	c->tsc_khz = info->tsc_khz;
}

void ns_clock_from_sysinfo(struct ns_clock *c, const struct nsl_sysinfo *s)
{
	c->ref_tsc = s->ref_tsc;
	c->ref_ns = s->ref_realtime_ns;
	if (s->tsc_khz)
		c->tsc_khz = s->tsc_khz;
	c->sysinfo = true;
}

/* Signed nanoseconds from ref_tsc, exact, clamped to what int64 holds. */
static int64_t elapsed_ns(const struct ns_clock *c, uint64_t tsc)
{
	__int128 d = (int64_t)(tsc - c->ref_tsc);

	if (!c->tsc_khz)
		return 0;
	d = d * 1000000 / c->tsc_khz;
	if (d > INT64_MAX / 2)
		return INT64_MAX / 2;
	if (d < -(INT64_MAX / 2))
		return -(INT64_MAX / 2);
	return (int64_t)d;
}

int64_t ns_clock_ns(const struct ns_clock *c, uint64_t tsc)
{
	return (int64_t)(c->ref_ns & INT64_MAX) + elapsed_ns(c, tsc);
}

void ns_clock_format(const struct ns_clock *c, uint64_t tsc, char *buf,
		     size_t len)
{
	int64_t ns = ns_clock_ns(c, tsc), sec;
	struct tm tm;
	time_t t;
	size_t n;

	if (!c->ref_ns) {
		int64_t e = elapsed_ns(c, tsc);
		uint64_t a = e < 0 ? -(uint64_t)e : (uint64_t)e;

		snprintf(buf, len, "%c%llu.%09llu", e < 0 ? '-' : '+',
			 (unsigned long long)(a / 1000000000),
			 (unsigned long long)(a % 1000000000));
		return;
	}
	sec = ns / 1000000000;
	if (ns % 1000000000 < 0)
		sec--;
	t = (time_t)sec;
	if (!localtime_r(&t, &tm) ||
	    !(n = strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))) {
		snprintf(buf, len, "%lld", (long long)ns);
		return;
	}
	snprintf(buf + n, len - n, ".%09lld", (long long)(ns - sec * 1000000000));
}
