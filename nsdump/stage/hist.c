// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "stage/hist.h"

void ns_hist_init(struct ns_hist *h)
{
	memset(h, 0, sizeof(*h));
}

/* Bucket b of @v: bucket 0 below 2^k, else v's top bit less k - 1. */
static unsigned int bucket_of(uint64_t v)
{
	if (v < NS_HIST_SUB)
		return 0;
	return 64 - __builtin_clzll(v) - NS_HIST_BITS;
}

/*
 * Only the buckets from min's to max's can hold a value: a recorder's
 * dozens of empty histograms cost next to nothing at the exit.
 */
void ns_hist_free(struct ns_hist *h)
{
	if (!h->n)
		return;		/* as ns_hist_init() left it */
	for (unsigned int b = bucket_of(h->min); b <= bucket_of(h->max); b++)
		free(h->bucket[b]);
	ns_hist_init(h);
}

/* Counters of bucket @b: 2^k in bucket 0, for sub-indexes 0 .. 2^k - 1;
 * 2^(k-1) above, for sub-indexes 2^(k-1) .. 2^k - 1. */
static unsigned int counters(unsigned int b)
{
	return b ? NS_HIST_HALF : NS_HIST_SUB;
}

static unsigned int first_sub(unsigned int b)
{
	return b ? NS_HIST_HALF : 0;
}

int ns_hist_add(struct ns_hist *h, uint64_t v)
{
	unsigned int b = bucket_of(v);
	uint64_t sub = v >> b;

	if (!h->n || v < h->min)
		h->min = v;
	if (!h->n || v > h->max)
		h->max = v;
	h->n++;
	if (!h->bucket[b]) {
		h->bucket[b] = calloc(counters(b), sizeof(uint64_t));
		if (!h->bucket[b]) {
			h->oom = true;
			return -1;
		}
	}
	h->bucket[b][sub - first_sub(b)]++;
	return 0;
}

uint64_t ns_hist_percentile(const struct ns_hist *h, uint32_t ppm)
{
	unsigned __int128 want;
	uint64_t seen = 0;

	if (!h->n)
		return 0;
	if (ppm > 1000000)
		ppm = 1000000;
	want = ((unsigned __int128)ppm * h->n + 999999) / 1000000;
	if (!want)
		want = 1;
	if (want >= h->n)
		return h->max;	/* the largest value is known exactly */
	for (unsigned int b = 0; b < NS_HIST_BUCKETS; b++) {
		if (!h->bucket[b])
			continue;
		for (unsigned int i = 0; i < counters(b); i++) {
			uint64_t v = (uint64_t)(first_sub(b) + i) << b;

			seen += h->bucket[b][i];
			if (seen < want)
				continue;
			/* the counter's range holds min or max exactly */
			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;	/* values memory could not count */
}

uint64_t ns_hist_count_le(const struct ns_hist *h, uint64_t v)
{
	uint64_t seen = 0;

	if (!h->n || v < h->min)
		return 0;
	if (v >= h->max)
		return h->n;	/* values memory could not count too */
	for (unsigned int b = 0; b <= bucket_of(v); b++) {
		if (!h->bucket[b])
			continue;
		for (unsigned int i = 0; i < counters(b); i++) {
			if ((uint64_t)(first_sub(b) + i) << b > v)
				break;
			seen += h->bucket[b][i];
		}
	}
	return seen;
}

unsigned int ns_hist_buckets_used(const struct ns_hist *h)
{
	unsigned int n = 0;

	for (unsigned int b = 0; b < NS_HIST_BUCKETS; b++)
		n += h->bucket[b] != NULL;
	return n;
}
