// SPDX-License-Identifier: GPL-2.0
/*
 * A build without libpfm4-dev: files are read and the device captures
 * durations, but no event can be named, so -e and -L say why.
 */
#include <stdio.h>
#include <string.h>
#include "source/counters.h"

#define NO_LIBPFM4	"this nsdump was built without libpfm4, which names counter events: install libpfm4-dev and rebuild for -e and -L"

bool ns_counters_available(char *why, size_t len)
{
	snprintf(why, len, "%s", NO_LIBPFM4);
	return false;
}

int ns_counters_parse(const char *spec, struct ns_counters *sel,
		      const struct ns_counter_host *host, char *err,
		      size_t errlen)
{
	(void)host;
	memset(sel, 0, sizeof(*sel));
	snprintf(err, errlen, "-e %s: %s", spec, NO_LIBPFM4);
	return -1;
}

int ns_counters_list(const struct ns_counter_lister *l,
		     const struct ns_counter_host *host, char *err,
		     size_t errlen)
{
	(void)l;
	(void)host;
	snprintf(err, errlen, "-L: %s", NO_LIBPFM4);
	return -1;
}
