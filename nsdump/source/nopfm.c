// SPDX-License-Identifier: GPL-2.0
/*
 * A build without libpfm4-dev: files are read and the device captures
 * durations, but no event can be named, so -e and -L say why.
 */
#include <stdio.h>
#include <string.h>
#include "source/events.h"

#define NO_LIBPFM4	"this nsdump was built without libpfm4, which names counter events: install libpfm4-dev and rebuild for -e and -L"

bool ns_events_available(char *why, size_t len)
{
	snprintf(why, len, "%s", NO_LIBPFM4);
	return false;
}

int ns_events_parse(const char *spec, struct ns_evsel *sel,
		    const struct ns_event_host *host, char *err, size_t errlen)
{
	(void)host;
	memset(sel, 0, sizeof(*sel));
	snprintf(err, errlen, "-e %s: %s", spec, NO_LIBPFM4);
	return -1;
}

int ns_events_list(const struct ns_event_lister *l,
		   const struct ns_event_host *host, char *err, size_t errlen)
{
	(void)l;
	(void)host;
	snprintf(err, errlen, "-L: %s", NO_LIBPFM4);
	return -1;
}
