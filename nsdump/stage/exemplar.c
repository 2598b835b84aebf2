// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "stage/exemplar.h"

static const struct ns_sink_ops exemplar_ops;

void ns_exemplars_init(struct ns_exemplars *e, bool numbered)
{
	memset(e, 0, sizeof(*e));
	e->sink.ops = &exemplar_ops;
	e->numbered = numbered;
}

void ns_exemplars_clear(struct ns_exemplars *e)
{
	e->n = 0;
}

void ns_exemplars_free(struct ns_exemplars *e)
{
	free(e->series);
	e->series = NULL;
	e->n = e->cap = 0;
}

/* The namespace of the device @b was handed to, as its devices say. */
static uint32_t block_netns(const struct nsl_block *b)
{
	for (unsigned int i = 0; i < b->ndev && i < NSL_MAX_DEVS; i++)
		if (b->dev[i].ifindex == b->ifindex)
			return b->dev[i].netns;
	return 0;
}

/* Same histogram: the namespace only where both know it. */
static bool same_key(const struct ns_ex_key *a, const struct ns_ex_key *b)
{
	return a->region == b->region && a->dir == b->dir &&
	       a->family == b->family && a->proto == b->proto &&
	       a->ifindex == b->ifindex &&
	       (!a->netns || !b->netns || a->netns == b->netns);
}

static struct ns_ex_series *lookup(const struct ns_exemplars *e,
				   const struct ns_ex_key *k)
{
	for (unsigned int i = 0; i < e->n; i++)
		if (same_key(&e->series[i].key, k))
			return &e->series[i];
	return NULL;
}

/* @k's series, made (empty) if new; NULL past NS_EX_SERIES. */
static struct ns_ex_series *series_of(struct ns_exemplars *e,
				      const struct ns_ex_key *k)
{
	struct ns_ex_series *s = lookup(e, k), *more;

	if (s)
		return s;
	if (e->n == e->cap) {
		unsigned int cap = e->cap ? e->cap * 2 : 16;

		if (cap > NS_EX_SERIES)
			return NULL;
		more = realloc(e->series, cap * sizeof(*more));
		if (!more)
			return NULL;
		e->series = more;
		e->cap = cap;
	}
	s = &e->series[e->n++];
	memset(s, 0, sizeof(*s));
	s->key = *k;
	return s;
}

void ns_exemplars_add(struct ns_exemplars *e, const struct nsl_block *b,
		      double now)
{
	struct ns_ex_key k = {
		.dir = b->dir, .family = b->family, .proto = b->proto,
		.ifindex = b->ifindex, .netns = block_netns(b),
	};
	__u64 val[NSL_R_MAX];
	uint32_t have;
	int open;

	e->blocks++;
	have = nsl_agg_values(b, e->tau_o, e->tau_b, val, &open);
	for (unsigned int r = 0; r < NSL_R_MAX; r++) {
		struct ns_ex_series *s;

		if (!(have & 1u << r))
			continue;
		k.region = r;
		s = series_of(e, &k);
		if (!s) {
			e->unkept++;
			continue;
		}
		s->at[nsl_agg_bucket(val[r])] = (struct ns_exemplar){
			.ticks = val[r], .time = now, .cpu = b->hdr.cpu,
			.seq = b->seq, .block = e->numbered ? e->blocks : 0,
		};
	}
}

const struct ns_exemplar *ns_exemplars_of(const struct ns_exemplars *e,
					  const struct nsl_agg_hist *h)
{
	struct ns_ex_key k = {
		.region = h->region, .dir = h->dir, .family = h->family,
		.proto = h->proto, .ifindex = h->ifindex, .netns = h->netns,
	};
	const struct ns_ex_series *s = lookup(e, &k);

	return s ? s->at : NULL;
}

const struct ns_exemplar *ns_exemplars_find(const struct ns_exemplars *e,
					    const struct nsl_agg_hist *h,
					    unsigned int bucket)
{
	const struct ns_exemplar *at = ns_exemplars_of(e, h);

	if (!at || bucket >= NSL_AGG_BUCKETS || !at[bucket].time)
		return NULL;
	return &at[bucket];
}

static enum ns_flow exemplar_item(struct ns_sink *sink,
				  const struct ns_citem *ci)
{
	struct ns_exemplars *e = (struct ns_exemplars *)sink;
	struct timespec ts;

	if (ci->it->type != NS_ITEM_BLOCK)
		return NS_FLOW_MORE;
	clock_gettime(CLOCK_REALTIME, &ts);
	ns_exemplars_add(e, &ci->it->block, ts.tv_sec + ts.tv_nsec / 1e9);
	return NS_FLOW_MORE;
}

static int exemplar_finish(struct ns_sink *sink, char *why, size_t len)
{
	(void)sink;
	(void)why;
	(void)len;
	return 0;
}

static const struct ns_sink_ops exemplar_ops = {
	.item	= exemplar_item,
	.finish	= exemplar_finish,
};
