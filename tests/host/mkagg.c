// SPDX-License-Identifier: GPL-2.0
/*
 * mkagg: aggregate-mode snapshots for the tests of nsdump --serve, as the
 * kernel's /dev/ns-hist (NSL_AGG_DEV) gives them (struct
 * nsl_agg_head, then its struct nsl_agg_hist).
 *   mkagg [-L load_id] [-s scale] [-z] file
 * A known snapshot: tsc_khz MKAGG_KHZ, the span and regions tcp, udp and
 * queue over four groups (group 0 "other"; lo tx ipv4 tcp; lo rx ipv6
 * udp; if7@MKAGG_NETNS tx ipv4 udp), bucket b0 + k holding scale *
 * MKAGG_SHAPE[k] values (b0 in hist_base()), each at its bucket's low
 * bound plus a half.  Prints what it wrote, one JSON object a line per
 * histogram: its key, "buckets" {index: count} and "sum".  -z: the
 * module aggregates nothing (conf.flags 0, a new load).
 *   mkagg -f raw [-t tau_o,tau_b] file
 * The snapshot the kernel would fold from the blocks of raw (mkblocks -R):
 * each block's values by nsl_agg_values(), groups in the order first
 * seen, the 16th on in group 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "source/decode.h"
#include "source/histograms.h"

#define MKAGG_KHZ	2000000u	/* 2 GHz: a tick is 0.5 ns */
#define MKAGG_NETNS	99u
#define MKAGG_MAX	(NSL_AGG_GROUPS * NSL_R_MAX)

static const unsigned int shape[] = { 1, 4, 10, 20, 4, 1 };
static const uint8_t regions[] = { NSL_AGG_SPAN, NSL_R_TCP, NSL_R_UDP,
				   NSL_R_QUEUE };

struct snap {
	struct nsl_agg_head head;
	struct nsl_agg_hist hist[MKAGG_MAX];
};

static void key(struct nsl_agg_hist *h, uint8_t dir, uint16_t family,
		uint16_t proto, uint32_t ifindex, uint32_t netns)
{
	h->dir = dir;
	h->family = family;
	h->proto = proto;
	h->ifindex = ifindex;
	h->netns = netns;
}

/* Group g's key (0: other); @own the namespace of "lo". */
static void group_key(struct nsl_agg_hist *h, unsigned int g, uint32_t own)
{
	switch (g) {
	case 1:
		key(h, NSL_DIR_TX, AF_INET, 6, 1, own);
		break;
	case 2:
		key(h, NSL_DIR_RX, AF_INET6, 17, 1, own);
		break;
	case 3:
		key(h, NSL_DIR_TX, AF_INET, 17, 7, MKAGG_NETNS);
		break;
	}
	h->group = g;
}

static unsigned int hist_base(unsigned int r, unsigned int g)
{
	return 64 + 4 * r + 3 * g;
}

static void fill(struct nsl_agg_hist *h, unsigned int b0, unsigned int scale)
{
	for (unsigned int k = 0; k < sizeof(shape) / sizeof(shape[0]); k++) {
		uint64_t lo = nsl_agg_bucket_low(b0 + k);
		uint64_t mid = lo + (nsl_agg_bucket_low(b0 + k + 1) - lo) / 2;

		h->bucket[b0 + k] = scale * shape[k];
		h->sum_ticks += (uint64_t)scale * shape[k] * mid;
	}
}

static void print_hist(const struct nsl_agg_hist *h)
{
	const char *sep = "";

	printf("{\"region\": %u, \"dir\": %u, \"family\": %u, \"proto\": %u, \"group\": %u, \"ifindex\": %u, \"netns\": %u, \"sum\": %llu, \"buckets\": {",
	       h->region, h->dir, h->family, h->proto, h->group, h->ifindex,
	       h->netns, (unsigned long long)h->sum_ticks);
	for (unsigned int i = 0; i < NSL_AGG_BUCKETS; i++)
		if (h->bucket[i]) {
			printf("%s\"%u\": %u", sep, i, h->bucket[i]);
			sep = ", ";
		}
	printf("}}\n");
}

static void head(struct snap *s, uint64_t load_id)
{
	s->head.magic = NSL_AGG_MAGIC;
	s->head.abi_version = NSL_ABI_VERSION;
	s->head.load_id = load_id;
	s->head.since_realtime_ns = 1795304467000000000ull;
	s->head.tsc_khz = MKAGG_KHZ;
	s->head.conf.flags = NSL_AGG_ON;
	s->head.tau_o = 20;
	s->head.tau_b = 10;
}

static uint32_t own_netns(void)
{
	char link[64];
	ssize_t n = readlink("/proc/self/ns/net", link, sizeof(link) - 1);

	if (n <= 0)
		return 0;
	link[n] = 0;
	return (uint32_t)strtoul(strchr(link, '[') ? strchr(link, '[') + 1 : "0",
				 NULL, 10);
}

static void known(struct snap *s, unsigned int scale)
{
	uint32_t own = own_netns();

	for (unsigned int g = 0; g < 4; g++)
		for (unsigned int k = 0; k < sizeof(regions); k++) {
			struct nsl_agg_hist *h = &s->hist[s->head.nhist++];

			group_key(h, g, own);
			h->region = regions[k];
			fill(h, hist_base(h->region, g), scale);
			if (h->region == NSL_AGG_SPAN) {
				s->head.blocks += ns_agg_count(h);
				s->head.other += g ? 0 : ns_agg_count(h);
			}
			print_hist(h);
		}
	s->head.trunc = 3;
	s->head.open = 2;
	s->head.exemplars = 5;
	s->head.threshold_ticks = 1000;
	s->head.emitted = s->head.blocks + 7;
}

/* ---- -f: folded from blocks, as the kernel does ---- */

/* The namespace of the device @b was handed to (stage/exemplar.c's rule). */
static uint32_t block_netns(const struct nsl_block *b)
{
	for (unsigned int i = 0; i < b->ndev && i < NSL_MAX_DEVS; i++)
		if (b->dev[i].ifindex == b->ifindex)
			return b->dev[i].netns;
	return 0;
}

/* @b's group: its slot, a new one while there are, else 0. */
static unsigned int group_of(const struct nsl_block *b,
			     struct nsl_agg_hist keys[NSL_AGG_GROUPS],
			     unsigned int *ngroups)
{
	struct nsl_agg_hist k = { 0 };

	key(&k, b->dir, b->family, b->proto, b->ifindex, block_netns(b));
	for (unsigned int g = 1; g < *ngroups; g++)
		if (keys[g].dir == k.dir && keys[g].family == k.family &&
		    keys[g].proto == k.proto && keys[g].ifindex == k.ifindex &&
		    keys[g].netns == k.netns)
			return g;
	if (*ngroups >= NSL_AGG_GROUPS)
		return 0;
	keys[*ngroups] = k;
	return (*ngroups)++;
}

static struct nsl_agg_hist *hist_of(struct snap *s, unsigned int region,
				    const struct nsl_agg_hist *gk, unsigned int g)
{
	struct nsl_agg_hist *h;

	for (unsigned int i = 0; i < s->head.nhist; i++)
		if (s->hist[i].region == region && s->hist[i].group == g)
			return &s->hist[i];
	h = &s->hist[s->head.nhist++];
	*h = *gk;
	h->region = region;
	h->group = g;
	return h;
}

static void fold(struct snap *s, const struct nsl_block *b,
		 struct nsl_agg_hist keys[NSL_AGG_GROUPS], unsigned int *ngroups)
{
	unsigned int g = group_of(b, keys, ngroups);
	__u64 val[NSL_R_MAX];
	int open;
	uint32_t have = nsl_agg_values(b, s->head.tau_o, s->head.tau_b, val,
				       &open);

	s->head.blocks++;
	s->head.open += open;
	s->head.other += !g;
	for (unsigned int r = 0; r < NSL_R_MAX; r++) {
		struct nsl_agg_hist *h;

		if (!(have & 1u << r))
			continue;
		h = hist_of(s, r, &keys[g], g);
		h->bucket[nsl_agg_bucket(val[r])]++;
		h->sum_ticks += val[r];
	}
}

/* All of file @name, malloc'd. */
static unsigned char *slurp(const char *name, size_t *len)
{
	FILE *f = fopen(name, "r");
	unsigned char *p = NULL;
	long n;

	if (f && !fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 &&
	    !fseek(f, 0, SEEK_SET) && (p = malloc(n + 1)) &&
	    fread(p, 1, n, f) == (size_t)n)
		*len = n;
	else
		p = (free(p), NULL);
	if (f)
		fclose(f);
	return p;
}

static int fold_file(struct snap *s, const char *raw)
{
	struct nsl_agg_hist keys[NSL_AGG_GROUPS] = { { 0 } };
	unsigned int ngroups = 1;
	size_t len = 0, at = 0;
	unsigned char *p = slurp(raw, &len);
	struct ns_item it;

	if (!p) {
		perror(raw);
		return -1;
	}
	while (at < len && !ns_decode_item(p + at, len - at, &it)) {
		if (it.type == NS_ITEM_BLOCK)
			fold(s, &it.block, keys, &ngroups);
		at += it.hdr.size;
	}
	free(p);
	s->head.emitted = s->head.blocks;
	for (unsigned int i = 0; i < s->head.nhist; i++)
		print_hist(&s->hist[i]);
	return 0;
}

static int write_snap(const struct snap *s, const char *name)
{
	size_t len = sizeof(s->head) + s->head.nhist * sizeof(s->hist[0]);
	FILE *f = fopen(name, "w");

	if (!f || fwrite(s, 1, len, f) != len || fclose(f)) {
		perror(name);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct snap s;
	unsigned long long load_id = 1, tau_o = 20, tau_b = 10;
	unsigned int scale = 1;
	const char *raw = NULL;
	bool off = false;
	int c;

	while ((c = getopt(argc, argv, "L:s:zf:t:")) != -1) {
		switch (c) {
		case 'L': load_id = strtoull(optarg, NULL, 0); break;
		case 's': scale = atoi(optarg); break;
		case 'z': off = true; break;
		case 'f': raw = optarg; break;
		case 't':
			if (sscanf(optarg, "%llu,%llu", &tau_o, &tau_b) != 2)
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1)
		return 2;
	head(&s, load_id);
	s.head.tau_o = tau_o;
	s.head.tau_b = tau_b;
	if (raw ? fold_file(&s, raw) : (known(&s, scale), 0))
		return 1;
	if (off)
		s.head.conf.flags = 0;
	return write_snap(&s, argv[optind]) ? 1 : 0;
}
