/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump -r a -r b: two hosts' trace files joined (stage/join.h).  Both
 * files are read whole, each block corrected by its own file's
 * calibration; the sends matched with their receive blocks and the
 * clocks aligned; then one joined block per receive block joined, in
 * the order of their sends, on host 0's (the first file's) TSC: the
 * sender's records, a wire record from the sender's hand-off to its
 * driver (the start of its last nic) to the receiver's rx-nic start,
 * then the receiver's records, moved to host 0's clock by the estimate
 * and scaled by the two tsc_khz.  A TSO send's records are in the block
 * of each of its frames, all but the first's flagged SHARED.  A joined
 * block is a send block that carries receive regions (NSL_BF_RX), as a
 * loopback block is; past NSL_MAX_RECORDS it is cut (NSL_BF_TRUNC).
 */
#ifndef _NS_SOURCE_JOIN_H
#define _NS_SOURCE_JOIN_H

#include <signal.h>
#include <stddef.h>
#include "source/source.h"
#include "stage/join.h"

struct ns_join_input {
	struct ns_file_source file[2];
	bool open[2];
	struct ns_join join;
	uint64_t lost[2];	/* items the kernel dropped, per file */
	struct ns_joined *info;	/* per joined block, in order */
	size_t n, next;
	struct ns_item it;	/* the block handed out */
	struct ns_citem ci;
};

/*
 * Reads @path[0] and @path[1] whole and joins them; @raw: no correction;
 * @window_ns: the longest wire time (0: the join's own).  0, or -1 with
 * @why set.
 */
int ns_join_open(struct ns_join_input *in, const char *const path[2],
		 bool raw, double window_ns, volatile sig_atomic_t *stop,
		 char *why, size_t len);
/* The next joined block, corrected; NULL after the last. */
const struct ns_citem *ns_join_next(struct ns_join_input *in);
/* Host 0's INFO, as the pipeline's clock takes it. */
const struct nsl_info *ns_join_info(const struct ns_join_input *in);
void ns_join_close(struct ns_join_input *in);

#endif /* _NS_SOURCE_JOIN_H */
