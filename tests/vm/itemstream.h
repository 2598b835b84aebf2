/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One checker of what a reader of /dev/ns is given, for the C tests
 * (ioctl_test and stress).  Feed it each read's bytes, or each item taken
 * from a mapped ring; it says whether the items are whole and sound and
 * counts them.  Python's twin is nsrec.py.
 */
#ifndef NS_ITEMSTREAM_H
#define NS_ITEMSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NS_STREAM_MAXCPUS	256

struct ns_stream {
	/* Set by the caller before the first item. */
	uint32_t ncpus;			/* nsl_info.ncpus */
	bool track;			/* one reader of one open: one sysinfo
					 * first, per-CPU seqs continuous, gaps
					 * only where a loss item says */
	int nic_ifindex;		/* count this device's blocks apart */

	uint64_t next_seq[NS_STREAM_MAXCPUS];
	uint64_t reads, bytes;		/* calls, and the bytes fed */
	uint64_t items;			/* blocks and event records */
	uint64_t blocks, events, losses, lost, sysinfos;
	uint64_t nic_blocks, lo_blocks, rx_blocks;
	char bad[200];			/* the first thing wrong, or "" */
};

void ns_stream_bad(struct ns_stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
bool ns_stream_take(struct ns_stream *s, const void *buf, size_t n);

#endif
