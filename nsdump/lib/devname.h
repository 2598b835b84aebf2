/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The devices a block crossed (ABI 6, struct nsl_dev), as every view
 * names them.  An ifindex names a device only within its network
 * namespace, and only on the host that captured it: a device prints as
 * its name (if_indextoname) where the blocks are read live and it is in
 * nsdump's own namespace, else as "if<ifindex>@<netns>" (netns: the
 * namespace's inode, as /proc/PID/ns/net shows it).  A block of an older
 * module has no devices, only its ifindex: "if<ifindex>", namespace
 * unknown.  A trace file may come from another host, so its devices
 * print as numbers.
 *
 * Which device a record belongs to is the ABI's rule (include/netslice.h
 * above struct nsl_dev): from the device's first record up to the next
 * device's first; the records before the first device's are its too.
 */
#ifndef _NS_DEVNAME_H
#define _NS_DEVNAME_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

/* Room for "if4294967295@4294967295/rx" and for a name. */
#define NS_DEV_TEXT	32
/* A block's path: every device and ">..." (NSL_BF_DEVTRUNC). */
#define NS_DEV_PATH	(NSL_MAX_DEVS * (NS_DEV_TEXT + 1) + 8)
#define NS_DEV_NONE	(-1)	/* ns_dev_of_record(): the block names none */

/* The inode of nsdump's own network namespace, read once; 0: unknown. */
uint32_t ns_dev_own_netns(void);
/*
 * @name (IF_NAMESIZE bytes) of device @ifindex in @netns (0: unknown,
 * taken as this host's) when @live and it is in nsdump's namespace;
 * false: not resolved here.
 */
bool ns_dev_lookup(uint32_t ifindex, uint32_t netns, bool live, char *name);
/* Its name if resolved, else "if<ifindex>@<netns>" or "if<ifindex>". */
void ns_dev_text(uint32_t ifindex, uint32_t netns, bool live, char *buf,
		 size_t len);
/* "tx" (queued to it) or "rx" (received from it). */
const char *ns_dev_dir_name(uint8_t dir);
/* "eth0.9/tx>eth0/tx": the devices in the order crossed; "" for none. */
void ns_dev_path(const struct nsl_block *b, bool live, char *buf,
		 size_t len);
/* The index in b->dev of the device record @rec belongs to, or NS_DEV_NONE. */
int ns_dev_of_record(const struct nsl_block *b, unsigned int rec);
/*
 * "eth0/tx": the device record @rec ran on, as ns_dev_path() names it
 * (@len NS_DEV_TEXT); false and "" when the block names none, so that a
 * view of an older block shows nothing rather than an empty device.
 */
bool ns_dev_record_text(const struct nsl_block *b, unsigned int rec,
			bool live, char *buf, size_t len);
/*
 * Whether @region is a device's own: its queue and driver on the way out
 * (link, qdisc, nic), its hand-up to the stack on the way in (rx-nic,
 * rx-link, backlog).  --by dev counts only these under a device.
 */
bool ns_region_of_device(unsigned int region);
/*
 * Whether @b crossed device @ifindex of namespace @netns (0: any
 * namespace); a block without devices by its ifindex alone.
 */
bool ns_dev_crossed(const struct nsl_block *b, uint32_t ifindex,
		    uint32_t netns);

/* A device as one 64-bit key (--by dev): the namespace above the index. */
static inline uint64_t ns_dev_key(uint32_t ifindex, uint32_t netns)
{
	return (uint64_t)netns << 32 | ifindex;
}

static inline uint32_t ns_dev_key_ifindex(uint64_t key)
{
	return (uint32_t)key;
}

static inline uint32_t ns_dev_key_netns(uint64_t key)
{
	return (uint32_t)(key >> 32);
}

#endif /* _NS_DEVNAME_H */
