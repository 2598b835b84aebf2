// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "stage/pipeline.h"

void ns_pipeline_init(struct ns_pipeline *p, uint32_t tsc_khz,
		      const struct ns_calib_set *calib,
		      struct ns_filter *filter)
{
	memset(p, 0, sizeof(*p));
	p->calib = calib;
	p->filter = filter;
	p->values = true;
	ns_magnet_init(&p->conns);
	filter->conns = &p->conns;
	ns_acc_init(&p->acc, tsc_khz);
	p->acc.calib = calib;
}

void ns_pipeline_magnet(struct ns_pipeline *p)
{
	p->acc.mag = &p->conns;
}

void ns_pipeline_record_only(struct ns_pipeline *p)
{
	p->values = false;
	p->acc.counts_only = true;
}

bool ns_pipeline_shallow(const struct ns_pipeline *p)
{
	return !p->values && !p->taps && !ns_filter_active(p->filter);
}

bool ns_pipeline_runs(const struct ns_pipeline *p)
{
	const struct ns_sink *v = p->views;

	return ns_pipeline_shallow(p) && !p->count && v && !v->next &&
	       v->ops->run;
}

static void append(struct ns_sink **list, struct ns_sink *s)
{
	while (*list)
		list = &(*list)->next;
	s->next = NULL;
	*list = s;
}

void ns_pipeline_add_tap(struct ns_pipeline *p, struct ns_sink *s)
{
	append(&p->taps, s);
}

void ns_pipeline_add_view(struct ns_pipeline *p, struct ns_sink *s)
{
	append(&p->views, s);
}

static void to_sinks(struct ns_pipeline *p, struct ns_sink *list,
		     const struct ns_citem *ci)
{
	for (struct ns_sink *s = list; s; s = s->next)
		p->flow = ns_flow_worst(p->flow, s->ops->item(s, ci));
}

static bool count_reached(const struct ns_pipeline *p)
{
	return p->count && p->passed >= p->count;
}

/*
 * What passed the filter, now or released later: accumulate, views.
 * Nothing past -c's count: a record that made a connection known may
 * release several blocks at once.
 */
static void passed(void *ctx, const struct ns_citem *ci)
{
	struct ns_pipeline *p = ctx;
	enum ns_item_type type = ci->it->type;

	if (count_reached(p))
		return;
	p->passed += type == NS_ITEM_BLOCK;
	p->passed_events += type == NS_ITEM_EVENT;
	ns_acc_item(&p->acc, ci);
	to_sinks(p, p->views, ci);
}

enum ns_flow ns_pipeline_push(struct ns_pipeline *p, const struct ns_item *it)
{
	struct ns_citem ci;

	if (count_reached(p))
		return NS_FLOW_DONE;
	p->captured += it->type == NS_ITEM_BLOCK;
	p->event_recs += it->type == NS_ITEM_EVENT;
	p->skipped += it->type == NS_ITEM_SKIPPED;
	if (p->values) {
		ns_correct_item(p->calib, it, &ci);
	} else {
		ci.it = it;
		ci.join = NULL;
		ci.overhead = 0;
	}
	return ns_pipeline_push_corrected(p, &ci);
}

enum ns_flow ns_pipeline_push_corrected(struct ns_pipeline *p,
					const struct ns_citem *ci)
{
	if (count_reached(p))
		return NS_FLOW_DONE;
	to_sinks(p, p->taps, ci);
	ns_filter_item(p->filter, ci, passed, p);
	if (p->flow == NS_FLOW_MORE && count_reached(p))
		return NS_FLOW_DONE;
	return p->flow;
}

/* What ns_pipeline_push() does to each of the run's items, at once. */
enum ns_flow ns_pipeline_push_run(struct ns_pipeline *p,
				  const struct ns_run *r)
{
	struct ns_sink *s = p->views;

	p->captured += r->blocks;
	p->passed += r->blocks;
	ns_acc_run(&p->acc, r);
	p->flow = ns_flow_worst(p->flow, s->ops->run(s, r));
	return p->flow;
}

enum ns_flow ns_pipeline_give_back(struct ns_pipeline *p)
{
	for (struct ns_sink *s = p->views; s; s = s->next)
		if (s->ops->give_back)
			p->flow = ns_flow_worst(p->flow, s->ops->give_back(s));
	return p->flow;
}

void ns_pipeline_idle(struct ns_pipeline *p)
{
	for (struct ns_sink *s = p->views; s; s = s->next)
		if (s->ops->idle)
			s->ops->idle(s);
}

static int finish_sinks(struct ns_sink *list,
			void (*fail)(void *ctx, const char *why), void *ctx)
{
	int ret = 0;

	for (struct ns_sink *s = list; s; s = s->next) {
		char why[512];

		if (!s->ops->finish(s, why, sizeof(why)))
			continue;
		fail(ctx, why);
		ret = -1;
	}
	return ret;
}

int ns_pipeline_finish(struct ns_pipeline *p,
		       void (*fail)(void *ctx, const char *why), void *ctx)
{
	int ret;

	ns_filter_finish(p->filter);
	ns_acc_finish(&p->acc);
	ret = finish_sinks(p->taps, fail, ctx);
	if (finish_sinks(p->views, fail, ctx))
		ret = -1;
	return ret;
}

static void free_sinks(struct ns_sink *list)
{
	while (list) {
		struct ns_sink *next = list->next;

		if (list->ops->free)
			list->ops->free(list);
		list = next;
	}
}

void ns_pipeline_free(struct ns_pipeline *p)
{
	free_sinks(p->taps);
	free_sinks(p->views);
	p->taps = p->views = NULL;
	ns_acc_free(&p->acc);
	ns_magnet_free(&p->conns);
}
