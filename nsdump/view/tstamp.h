/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The time stamp that starts a packet or event line, in tcpdump's forms
 * (its -t family, the same count of t's):
 *
 *   (none)   23:41:07.123456          time of day, local time (TZ)
 *   -t       no stamp
 *   -tt      1795304467.123456        seconds since the epoch
 *   -ttt      00:00:00.000012         since the line before (' ' or '-')
 *   -tttt    2026-11-21 23:41:07.123456   date and time of day
 *   -ttttt    00:00:01.000012         since the first line
 *
 * Microseconds, truncated, as tcpdump's.  The wall clock is the trace's
 * (SYSINFO, or the file's INFO: TSC and realtime read together).
 */
#ifndef _NS_TSTAMP_H
#define _NS_TSTAMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ns_tstamp_mode {
	NS_TS_TIME = 0,		/* the t's counted, as tcpdump counts them */
	NS_TS_NONE = 1,
	NS_TS_EPOCH = 2,
	NS_TS_DELTA = 3,
	NS_TS_DATE = 4,
	NS_TS_SINCE_FIRST = 5,
	NS_TS_MAX = 5,
};

struct ns_tstamper {
	enum ns_tstamp_mode mode;
	bool have_ref;
	int64_t ref_us;		/* the line before (-ttt), the first (-ttttt), µs */
};

void ns_tstamp_init(struct ns_tstamper *s, enum ns_tstamp_mode mode);
/*
 * The stamp of a line at @ns (nanoseconds since the epoch) into @buf,
 * with the space after it ("" for -t); remembers it for the next one.
 */
void ns_tstamp(struct ns_tstamper *s, int64_t ns, char *buf, size_t len);

#endif /* _NS_TSTAMP_H */
