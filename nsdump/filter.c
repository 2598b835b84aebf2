// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "filter.h"

void ns_filter_init(struct ns_filter *f, const struct ns_magnet *conns)
{
	memset(f, 0, sizeof(*f));
	f->dir = NS_DIR_ANY;
	f->conns = conns;
}

void ns_filter_free(struct ns_filter *f)
{
	for (size_t i = 0; i < f->nheld; i++)
		free(f->held[i]);
	free(f->held);
	f->held = NULL;
	f->nheld = f->cap = 0;
}

bool ns_filter_active(const struct ns_filter *f)
{
	return f->nports || f->dir != NS_DIR_ANY;
}

static int parse_port(const char *s, char **end, uint16_t *port)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno || v > 65535)
		return -1;
	*port = v;
	return 0;
}

int ns_filter_add_ports(struct ns_filter *f, const char *arg)
{
	uint16_t l, r;
	char *end;

	if (f->nports == NS_FILTER_PORTS || parse_port(arg, &end, &l) ||
	    *end != '.' || parse_port(end + 1, &end, &r) || *end)
		return -1;
	f->port[f->nports].local = l;
	f->port[f->nports].remote = r;
	f->nports++;
	return 0;
}

int ns_filter_set_dir(struct ns_filter *f, const char *arg)
{
	if (!strcmp(arg, "tx"))
		f->dir = NSL_DIR_TX;
	else if (!strcmp(arg, "rx"))
		f->dir = NSL_DIR_RX;
	else
		return -1;
	return 0;
}

static uint64_t item_conn(const struct ns_item *it)
{
	return it->type == NS_ITEM_BLOCK ? it->block.conn : it->event.conn;
}

static int item_dir(const struct ns_item *it)
{
	if (it->type == NS_ITEM_BLOCK)
		return it->block.dir;
	return ns_event_is_send(it->event.type) ? NSL_DIR_TX : NSL_DIR_RX;
}

static bool ports_match(const struct ns_filter *f, const struct ns_conn *c)
{
	for (unsigned int i = 0; i < f->nports; i++)
		if ((!f->port[i].local || f->port[i].local == c->lport) &&
		    (!f->port[i].remote || f->port[i].remote == c->rport))
			return true;
	return false;
}

static void count_undecided(struct ns_filter *f, const struct ns_item *it)
{
	if (it->type == NS_ITEM_BLOCK)
		f->undecided_blocks++;
	else
		f->undecided_events++;
}

static enum ns_filter_verdict hold(struct ns_filter *f,
				   const struct ns_item *it)
{
	struct ns_item *copy;

	if (f->nheld == NS_FILTER_HOLD) {
		count_undecided(f, f->held[0]);
		free(f->held[0]);
		memmove(f->held, f->held + 1, --f->nheld * sizeof(f->held[0]));
	}
	if (f->nheld == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct ns_item **p = realloc(f->held, cap * sizeof(*p));

		if (!p)
			goto undecided;
		f->held = p;
		f->cap = cap;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		goto undecided;
	*copy = *it;
	copy->raw = NULL;	/* the read buffer moves on */
	f->held[f->nheld++] = copy;
	return NS_FILTER_HELD;
undecided:
	count_undecided(f, it);
	return NS_FILTER_DROP;
}

enum ns_filter_verdict ns_filter_offer(struct ns_filter *f,
				       const struct ns_item *it)
{
	const struct ns_conn *c;
	uint64_t conn = item_conn(it);

	if (f->dir != NS_DIR_ANY && item_dir(it) != f->dir)
		return NS_FILTER_DROP;
	if (!f->nports)
		return NS_FILTER_PASS;
	if (it->type == NS_ITEM_BLOCK && !conn)
		return NS_FILTER_DROP;	/* never met a socket */
	c = ns_magnet_find(f->conns, conn);
	if (c && c->have_ports)
		return ports_match(f, c) ? NS_FILTER_PASS : NS_FILTER_DROP;
	return hold(f, it);
}

void ns_filter_release(struct ns_filter *f, uint64_t conn,
		       ns_filter_emit emit, void *ctx)
{
	const struct ns_conn *c = ns_magnet_find(f->conns, conn);
	bool match = c && c->have_ports && ports_match(f, c);
	size_t keep = 0;

	for (size_t i = 0; i < f->nheld; i++) {
		struct ns_item *it = f->held[i];

		if (item_conn(it) != conn) {
			f->held[keep++] = it;
			continue;
		}
		if (match)
			emit(ctx, it);
		free(it);
	}
	f->nheld = keep;
}

void ns_filter_finish(struct ns_filter *f)
{
	for (size_t i = 0; i < f->nheld; i++)
		count_undecided(f, f->held[i]);
	ns_filter_free(f);
}
