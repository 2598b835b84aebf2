/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by conn|cpu|dir|dev: each region's latency per connection, per CPU
 * (the one that handed the block over, as the packet lines' "cpu"), per
 * direction, or per device: a block that names the devices it crossed
 * (ABI 6) under each of them, with that device's records only (the
 * accumulator splits it, accum.c), one of an older module under its
 * ifindex (the last device it was handed to or taken from).  A device's
 * key is ns_dev_key() (devname.h).  Per key and region an ns_stats that keeps no values: n,
 * mean, min and max exact, percentiles from its log-linear histogram
 * (hist.h: within NS_HIST_REL_ERROR, bounded memory whatever the number
 * of packets or keys).
 */
#ifndef _NS_BY_H
#define _NS_BY_H

#include <stddef.h>
#include <stdint.h>
#include "netslice.h"
#include "source/decode.h"
#include "stage/stats.h"

enum ns_by_what {
	NS_BY_NONE,
	NS_BY_CONN,
	NS_BY_CPU,
	NS_BY_DIR,
	NS_BY_DEV,
};

struct ns_by_key {
	uint64_t key;
	struct ns_stats region[NS_R_MAX];
};

struct ns_by {
	enum ns_by_what what;
	struct ns_by_key **keys;	/* sorted by key */
	size_t n, cap;
	bool oom;
	bool live;		/* from /dev/ns: devices named as on this host */
};

/* "conn", "cpu", "dir", "dev": 0, or -1 if none of them. */
int ns_by_parse(const char *arg, enum ns_by_what *what);
const char *ns_by_name(enum ns_by_what what);
void ns_by_init(struct ns_by *by, enum ns_by_what what);
void ns_by_free(struct ns_by *by);
/* The key of block @b for this breakdown (--by dev: its ifindex). */
uint64_t ns_by_key_of(const struct ns_by *by, const struct nsl_block *b);
/* One block's value (ticks) for @region under @key. */
void ns_by_add(struct ns_by *by, uint64_t key, unsigned int region,
	       uint64_t ticks);
/* "0x2a", "3", "tx", "eth0" or "if2@4026531840" (devname.h). */
void ns_by_key_text(const struct ns_by *by, uint64_t key, char *buf,
		    size_t len);

#endif /* _NS_BY_H */
