/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the report says of a join (source/join.h): the per-layer table
 * (and --by's) once per direction, each over the joined blocks its host
 * sent, with the wire between the sender's regions and the receiver's;
 * then the clock estimate and the blocks left unmatched, by reason.
 * The report feeds it each joined block that passed the filter.
 */
#ifndef _NS_JOINREP_H
#define _NS_JOINREP_H

#include <stdbool.h>
#include <stdio.h>
#include "stage/accum.h"
#include "stage/join.h"

/* Unmatched blocks listed per host, direction and reason, without -v. */
#define NS_JOIN_LIST	10

struct ns_joinrep {
	const struct ns_join *join;
	const uint64_t *lost;	/* per host, items the kernel dropped */
	struct ns_acc acc[2];	/* by sending host */
	struct ns_by by[2];
};

/* Per-direction accumulators like @like (rate, calibration, clock). */
void ns_joinrep_init(struct ns_joinrep *jr, const struct ns_join *j,
		     const uint64_t lost[2], const struct ns_acc *like);
void ns_joinrep_free(struct ns_joinrep *jr);
/* A joined block that passed the filter. */
void ns_joinrep_item(struct ns_joinrep *jr, const struct ns_citem *ci);
/* "host 0 > host 1" as the tables head a direction: the files' names. */
const char *ns_joinrep_host(const struct ns_joinrep *jr, unsigned int h);
/* The clock and the unmatched blocks, as text; @verbose lists them all. */
void ns_joinrep_plain(const struct ns_joinrep *jr, FILE *f, bool verbose);

#endif /* _NS_JOINREP_H */
