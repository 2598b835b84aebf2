// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "msg.h"
#include "serve.h"
#include "source/version.h"
#include "view/metrics.h"

#define SERVE_BATCH	4096	/* items per turn of the loop, at most */

/* NSIOCSAGG on @d, which must speak ABI 7: 0, or -1 with @why. */
static int agg_on(struct ns_serve *s, struct ns_dev *d, char *why, size_t len)
{
	int err;

	if (d->info.abi_version < NS_AGG_ABI) {
		snprintf(why, len, "%s: this netslice.ko speaks ABI %u: aggregate mode needs ABI %u",
			 d->path, d->info.abi_version, NS_AGG_ABI);
		return -1;
	}
	err = ns_dev_agg(d, &s->conf);
	if (!err)
		return 0;
	snprintf(why, len, "%s: NSIOCSAGG: %s", d->path, strerror(err));
	return -1;
}

/*
 * Aggregation and collection on, on the device held or on o->dev opened
 * for it and let go (the module then free to be reloaded).
 */
static int set_up(struct ns_serve *s, char *why, size_t len)
{
	struct ns_dev d;

	if (s->dev)
		return agg_on(s, s->dev, why, len);
	if (ns_dev_open(&d, s->o->dev, 0)) {
		snprintf(why, len, "%s", d.err);
		return -1;
	}
	if (agg_on(s, &d, why, len)) {
		ns_dev_release(&d);
		return -1;
	}
	if (ns_dev_start(&d)) {
		snprintf(why, len, "%s", d.err);
		return -1;
	}
	ns_dev_release(&d);
	return 0;
}

/* The snapshots stopped: said once, until they come back. */
static void lost(struct ns_serve *s, enum ns_agg_status st, const char *why)
{
	if (s->have || !s->seen)
		ns_note("%s%s: netslice_up 0 until it is back", why,
			st == NS_AGG_ABSENT ? " (is netslice.ko loaded?)" : "");
	ns_agg_free(&s->snap);
	s->have = false;
	s->seen = true;
}

/* A snapshot of another load: its counters start again. */
static void new_load(struct ns_serve *s, const struct nsl_agg_head *h)
{
	if (s->seen && h->load_id == s->load_id) {
		if (!s->have)
			ns_note("%s: readable again, the same load", s->path);
		return;
	}
	if (s->seen)
		ns_note("%s: a new load of the module (load id %" PRIx64 "): its counters start again",
			s->path, (uint64_t)h->load_id);
	s->seen = true;
	s->load_id = h->load_id;
	if (s->ex)
		ns_exemplars_clear(s->ex);
}

/* The snapshot now, or netslice_up 0. */
static void refresh(struct ns_serve *s)
{
	struct ns_agg_snap snap;
	enum ns_agg_status st;
	char why[512];

	s->next_read = ns_http_now() + NS_SERVE_READ_MS;
	st = ns_agg_read(s->path, &snap, why, sizeof(why));
	if (st != NS_AGG_OK) {
		lost(s, st, why);
		return;
	}
	new_load(s, &snap.head);
	ns_agg_free(&s->snap);
	s->snap = snap;
	s->have = true;
	if (s->ex) {
		s->ex->tau_o = snap.head.tau_o;
		s->ex->tau_b = snap.head.tau_b;
	}
}

/* A load that does not aggregate (a new one) is set up, once. */
static void set_again(struct ns_serve *s)
{
	char why[512];

	if (!s->have || s->snap.head.conf.flags || s->set_for == s->load_id)
		return;
	s->set_for = s->load_id;
	if (set_up(s, why, sizeof(why))) {
		ns_note("%s: aggregation stays off on this load", why);
		return;
	}
	ns_note("%s: aggregation switched on", s->o->dev);
	refresh(s);
}

static void answer(void *ctx, const struct ns_http_req *req,
		   struct ns_http_resp *r)
{
	struct ns_serve *s = ctx;
	enum ns_metrics_format f = ns_metrics_negotiate(req->accept);
	struct ns_metrics_in in = {
		.ex = s->ex, .version = NSDUMP_VERSION,
		.abi = NSL_ABI_VERSION, .live = true,
	};

	if (strcmp(req->path, "/metrics")) {
		r->status = 404;
		r->type = "text/plain; charset=utf-8";
		r->body = strdup("not found: the metrics are at /metrics\n");
		r->len = r->body ? strlen(r->body) : 0;
		return;
	}
	refresh(s);
	set_again(s);
	in.snap = s->have ? &s->snap : NULL;
	r->status = 200;
	r->body = ns_metrics_text(&in, f, &r->len);
	r->type = r->body ? ns_metrics_content_type(f) : NULL;
}

int ns_serve_open(struct ns_serve *s, const struct ns_opts *o,
		  struct ns_dev *dev, struct ns_exemplars *ex)
{
	bool optional = getenv("NSDUMP_AGG") && *getenv("NSDUMP_AGG");
	char why[512];

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->dev = dev;
	s->ex = ex;
	s->path = ns_agg_path();
	s->conf = o->exemplars;
	s->conf.flags |= NSL_AGG_ON;
	if (ns_http_listen(&s->http, o->serve, answer, s, why, sizeof(why))) {
		ns_error("%s", why);
		return -1;
	}
	if (set_up(s, why, sizeof(why))) {
		if (!optional || dev) {
			ns_error("%s", why);
			ns_serve_close(s);
			return -1;
		}
		ns_note("%s; serving %s as it is", why, s->path);
	}
	refresh(s);
	s->set_for = s->load_id;	/* set up already */
	fprintf(stderr, "nsdump: serving http://%s/metrics, the histograms of %s\n",
		s->http.where, s->path);
	fflush(stderr);
	return 0;
}

/* Up to SERVE_BATCH of @src's items through @p, until it is idle. */
static enum ns_flow drain(struct ns_source *src, struct ns_pipeline *p)
{
	enum ns_flow flow = NS_FLOW_MORE;
	struct ns_item it;

	for (unsigned int i = 0; i < SERVE_BATCH && flow == NS_FLOW_MORE; i++) {
		switch (ns_source_next(src, &it)) {
		case NS_SOURCE_ITEM:
			flow = ns_pipeline_push(p, &it);
			break;
		case NS_SOURCE_RUN:
			flow = ns_pipeline_push_run(p, &src->run);
			break;
		case NS_SOURCE_RECLAIM:
			flow = ns_pipeline_give_back(p);
			break;
		case NS_SOURCE_IDLE:
			ns_pipeline_idle(p);
			return NS_FLOW_MORE;
		case NS_SOURCE_STATS:
			break;
		case NS_SOURCE_END:
			return NS_FLOW_DONE;
		case NS_SOURCE_FAIL:
			ns_error("%s", src->err);
			return NS_FLOW_FAIL;
		}
	}
	return flow;
}

/* How long poll() may wait: the next snapshot, or a client's deadline. */
static int wait_ms(const struct ns_serve *s)
{
	int64_t left = s->next_read - ns_http_now();
	int conn = ns_http_timeout(&s->http);

	if (left < 0)
		left = 0;
	return conn >= 0 && conn < left ? conn : (int)left;
}

enum ns_flow ns_serve_loop(struct ns_serve *s, struct ns_source *src,
			   struct ns_pipeline *p, volatile sig_atomic_t *stop)
{
	struct pollfd pfd[NS_HTTP_POLLFDS + 1];
	enum ns_flow flow = NS_FLOW_MORE;
	unsigned int n;

	while (flow == NS_FLOW_MORE && !*stop) {
		n = ns_http_pollfds(&s->http, pfd);
		if (src)
			pfd[n] = (struct pollfd){ .fd = s->dev->fd, .events = POLLIN };
		if (poll(pfd, n + !!src, wait_ms(s)) < 0 && errno != EINTR) {
			ns_error("poll: %s", strerror(errno));
			return NS_FLOW_FAIL;
		}
		if (src && (pfd[n].revents || ns_http_now() >= s->next_read))
			flow = drain(src, p);
		ns_http_serve(&s->http, pfd, n);
		if (ns_http_now() >= s->next_read) {
			refresh(s);
			set_again(s);
		}
	}
	if (src) {
		ns_pipeline_give_back(p);
		ns_source_done(src);
	}
	return flow == NS_FLOW_MORE ? NS_FLOW_DONE : flow;
}

void ns_serve_close(struct ns_serve *s)
{
	struct nsl_agg keep = { .flags = NSL_AGG_ON };

	/* the histograms go on; the exemplars stop with their reader */
	if (s->dev && s->dev->fd >= 0)
		ns_dev_agg(s->dev, &keep);
	ns_http_close(&s->http);
	ns_agg_free(&s->snap);
}
