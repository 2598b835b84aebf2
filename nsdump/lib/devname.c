// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <sys/stat.h>
#include "lib/devname.h"

uint32_t ns_dev_own_netns(void)
{
	static bool done;
	static uint32_t netns;
	struct stat st;

	if (!done && !stat("/proc/self/ns/net", &st))
		netns = (uint32_t)st.st_ino;
	done = true;
	return netns;
}

bool ns_dev_lookup(uint32_t ifindex, uint32_t netns, bool live, char *name)
{
	/* another namespace's index may name one of ours: never ask */
	if (!live || !ifindex || (netns && netns != ns_dev_own_netns()))
		return false;
	return if_indextoname(ifindex, name) != NULL;
}

void ns_dev_text(uint32_t ifindex, uint32_t netns, bool live, char *buf,
		 size_t len)
{
	char name[IF_NAMESIZE];

	if (ns_dev_lookup(ifindex, netns, live, name))
		snprintf(buf, len, "%s", name);
	else if (netns)
		snprintf(buf, len, "if%u@%u", ifindex, netns);
	else
		snprintf(buf, len, "if%u", ifindex);
}

const char *ns_dev_dir_name(uint8_t dir)
{
	return dir == NSL_DIR_RX ? "rx" : "tx";
}

/* "eth0/tx": a device and which way the packet went through it. */
static void dev_with_dir(const struct nsl_dev *d, bool live, char *buf,
			 size_t len)
{
	char dev[NS_DEV_TEXT - 3];	/* room left for "/rx" */

	ns_dev_text(d->ifindex, d->netns, live, dev, sizeof(dev));
	snprintf(buf, len, "%s/%s", dev, ns_dev_dir_name(d->dir));
}

void ns_dev_path(const struct nsl_block *b, bool live, char *buf,
		 size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < b->ndev && used < len; i++) {
		char dev[NS_DEV_TEXT];

		dev_with_dir(&b->dev[i], live, dev, sizeof(dev));
		used += snprintf(buf + used, len - used, "%s%s", i ? ">" : "",
				 dev);
	}
	if (b->ndev && (b->flags & NSL_BF_DEVTRUNC) && used < len)
		snprintf(buf + used, len - used, ">...");
}

int ns_dev_of_record(const struct nsl_block *b, unsigned int rec)
{
	int dev = NS_DEV_NONE;

	if (!b->ndev)
		return NS_DEV_NONE;
	/* the last device opened at or before it; before them all, the first */
	for (unsigned int i = 0; i < b->ndev; i++)
		if (b->dev[i].first <= rec)
			dev = (int)i;
	return dev == NS_DEV_NONE ? 0 : dev;
}

bool ns_dev_record_text(const struct nsl_block *b, unsigned int rec,
			bool live, char *buf, size_t len)
{
	int dev = ns_dev_of_record(b, rec);

	buf[0] = 0;
	if (dev == NS_DEV_NONE)
		return false;
	dev_with_dir(&b->dev[dev], live, buf, len);
	return true;
}

bool ns_region_of_device(unsigned int region)
{
	switch (region) {
	case NSL_R_LINK:
	case NSL_R_QDISC:
	case NSL_R_NIC:
	case NSL_R_RX_NIC:
	case NSL_R_RX_LINK:
	case NSL_R_BACKLOG:
		return true;
	default:
		return false;
	}
}

bool ns_dev_crossed(const struct nsl_block *b, uint32_t ifindex,
		    uint32_t netns)
{
	if (!b->ndev)
		return b->ifindex == ifindex;
	for (unsigned int i = 0; i < b->ndev; i++)
		if (b->dev[i].ifindex == ifindex &&
		    (!netns || b->dev[i].netns == netns))
			return true;
	return false;
}
