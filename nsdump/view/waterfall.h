/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HTML report's waterfall (html.h): one table row per packet, as a
 * browser's network panel draws a request, its regions as bars on a
 * time axis from NSI, nested by depth (nest.h), coloured by layer.  All
 * rows of a table share the axis, so that bars compare across rows.  The
 * bars are where the TSC put them, raw; each bar's title gives its raw
 * and corrected durations, flags and counters.
 */
#ifndef _NS_WATERFALL_H
#define _NS_WATERFALL_H

#include <stdbool.h>
#include <stdio.h>
#include "stage/accum.h"
#include "view/shortlist.h"

/*
 * A <table class="waterfall" id="@id">, closed; rows in the given order.
 * Where blocks crossed devices (ABI 6), a column gives each row's path
 * and each bar's title its record's device, named as devname.h does
 * (@live: read from /dev/ns on this host); a table of blocks without
 * devices is drawn as before they existed.
 */
void ns_waterfall(FILE *f, const struct ns_acc *a, const struct ns_listed *rows,
		  unsigned int n, const char *id, bool live);

#endif /* _NS_WATERFALL_H */
