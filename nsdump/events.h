/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counter events by name (-e EVENT[,EVENT], -L): the place for libpfm4
 * (pfm_get_os_event_encoding into struct nsl_events, then NSIOCSEVENT and
 * NSIOCSEMODE).  Not built in yet: both calls say so.
 */
#ifndef _NS_EVENTS_H
#define _NS_EVENTS_H

#include <stddef.h>
#include <stdio.h>
#include "netslice.h"

/* Parse "cycles,instructions"; 0, or -1 with @err set. */
int ns_events_parse(const char *spec, struct nsl_events *ev,
		    const char *names[NSL_MAX_EVENTS], char *err, size_t errlen);
/* -L: list the events this machine offers; 0 or -1 with @err set. */
int ns_events_list(FILE *out, char *err, size_t errlen);

#endif /* _NS_EVENTS_H */
