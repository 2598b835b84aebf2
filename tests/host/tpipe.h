/* SPDX-License-Identifier: GPL-2.0 */
/* nsdump's item pipeline (pipeline.h) as the tests drive it. */
#ifndef _NS_TPIPE_H
#define _NS_TPIPE_H

#include <stdio.h>
#include "stage/pipeline.h"
#include "view/report.h"

struct tpipe {
	struct ns_pipeline p;
	struct ns_filter f;
	struct ns_report r;	/* a view when tpipe_init() had a printer */
	char *text;		/* what it printed, after tpipe_finish() */
	size_t size;
	FILE *out;		/* the memstream of text, while open */
};

/*
 * Stages as nsdump sets them for a file of gen_info() (clock, tsc_khz),
 * corrected by @cs (NULL: raw), with a report through @pr into t->text
 * (NULL: accumulate only).  Set t->f, t->r, -M before the first item.
 */
void tpipe_init(struct tpipe *t, const struct ns_calib_set *cs,
		const struct ns_printer *pr);
/* The same, the report printing to @out (the caller's to close). */
void tpipe_init_to(struct tpipe *t, const struct ns_calib_set *cs,
		   const struct ns_printer *pr, FILE *out);
void tpipe_push(struct tpipe *t, const struct ns_item *it);
void tpipe_block(struct tpipe *t, const struct nsl_block *b);
/* The items of a raw stream (as read() gives them), up to a bad one. */
void tpipe_bytes(struct tpipe *t, const void *p, size_t len);
/* End of input: the report's tables into t->text. */
void tpipe_finish(struct tpipe *t);
void tpipe_free(struct tpipe *t);
/* @pr's table of what was accumulated so far: malloc'd text. */
char *tpipe_table(struct tpipe *t, const struct ns_printer *pr);

#endif /* _NS_TPIPE_H */
