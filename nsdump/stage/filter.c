// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include "lib/devname.h"
#include "stage/filter.h"
#include "stage/tuple.h"

void ns_filter_init(struct ns_filter *f, struct ns_magnet *conns)
{
	memset(f, 0, sizeof(*f));
	f->dir = NS_DIR_ANY;
	f->conns = conns;
	ns_expr_init(&f->expr);
}

static void free_held(struct ns_filter *f)
{
	for (size_t i = 0; i < f->nheld; i++)
		free(f->held[i]);
	free(f->held);
	f->held = NULL;
	f->nheld = f->cap = 0;
}

void ns_filter_free(struct ns_filter *f)
{
	free_held(f);
	ns_expr_free(&f->expr);
}

bool ns_filter_active(const struct ns_filter *f)
{
	return f->nports || f->dir != NS_DIR_ANY || f->ifindex ||
	       ns_expr_active(&f->expr);
}

/* "if<ifindex>" or "if<ifindex>@<netns>", as devname.h prints a device. */
static int parse_dev_text(const char *s, unsigned int *ifindex,
			  uint32_t *netns)
{
	unsigned long long index, ns = 0;
	char *end;

	if (strncmp(s, "if", 2) || s[2] < '1' || s[2] > '9')
		return -1;
	errno = 0;
	index = strtoull(s + 2, &end, 10);
	if (*end == '@' && end[1] >= '1' && end[1] <= '9')
		ns = strtoull(end + 1, &end, 10);
	if (errno || *end || index > UINT32_MAX || ns > UINT32_MAX)
		return -1;
	*ifindex = (unsigned int)index;
	*netns = (uint32_t)ns;
	return 0;
}

int ns_filter_set_interface(struct ns_filter *f, const char *name)
{
	unsigned int index;

	f->netns = 0;
	if (!strcmp(name, "any")) {
		f->ifindex = 0;
		return 0;
	}
	index = if_nametoindex(name);
	if (index) {
		f->ifindex = index;
		f->netns = ns_dev_own_netns();	/* a name is ours */
		return 0;
	}
	return parse_dev_text(name, &f->ifindex, &f->netns);
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

/* What offer() made of an item. */
enum verdict {
	PASS,		/* hand it on now */
	DROP,
	UNDECIDED,	/* its connection is not known well enough yet */
};

/* -p: the connection's ports. */
static enum verdict ports_verdict(const struct ns_filter *f,
				  const struct ns_item *it)
{
	uint64_t conn = item_conn(it);
	const struct ns_conn *c;

	if (!f->nports)
		return PASS;
	if (it->type == NS_ITEM_BLOCK && !conn)
		return DROP;	/* never met a socket */
	c = ns_magnet_find(f->conns, conn);
	if (c && c->have_ports)
		return ports_match(f, c) ? PASS : DROP;
	return UNDECIDED;
}

/* The expression, over a block's flow or an event's connection's. */
static enum verdict expr_verdict(const struct ns_filter *f,
				 const struct ns_item *it)
{
	struct ns_tuple t;

	if (!ns_expr_active(&f->expr))
		return PASS;
	if (it->type == NS_ITEM_BLOCK) {
		if (!ns_tuple_from_block(&it->block, &t))
			return DROP;	/* no flow: not IP, or ABI 1 */
	} else if (!ns_tuple_from_event(&it->event,
					ns_magnet_find(f->conns, it->event.conn),
					&t)) {
		return UNDECIDED;
	}
	return ns_expr_match(&f->expr, &t) ? PASS : DROP;
}

static enum verdict offer(const struct ns_filter *f, const struct ns_item *it)
{
	enum verdict ports, expr;

	if (it->type != NS_ITEM_BLOCK && it->type != NS_ITEM_EVENT)
		return PASS;
	if (f->dir != NS_DIR_ANY && item_dir(it) != f->dir)
		return DROP;
	if (f->ifindex && it->type == NS_ITEM_BLOCK &&
	    !ns_dev_crossed(&it->block, f->ifindex, f->netns))
		return DROP;
	ports = ports_verdict(f, it);
	if (ports == DROP)
		return DROP;
	expr = expr_verdict(f, it);
	if (expr == DROP)
		return DROP;
	return ports == PASS && expr == PASS ? PASS : UNDECIDED;
}

/* Keep a copy until its connection is known; false if it cannot be. */
static bool hold(struct ns_filter *f, const struct ns_citem *ci)
{
	struct ns_held *copy;

	if (f->nheld == NS_FILTER_HOLD) {
		count_undecided(f, &f->held[0]->item);
		free(f->held[0]);
		memmove(f->held, f->held + 1, --f->nheld * sizeof(f->held[0]));
	}
	if (f->nheld == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct ns_held **p = realloc(f->held, cap * sizeof(*p));

		if (!p)
			goto undecided;
		f->held = p;
		f->cap = cap;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		goto undecided;
	copy->item = *ci->it;
	copy->item.raw = NULL;	/* the read buffer moves on */
	copy->ci = *ci;
	copy->ci.it = &copy->item;
	f->held[f->nheld++] = copy;
	return true;
undecided:
	count_undecided(f, ci->it);
	return false;
}

/* @conn became better known: decide its held items again. */
static void release(struct ns_filter *f, uint64_t conn, ns_filter_emit emit,
		    void *ctx)
{
	size_t keep = 0;

	for (size_t i = 0; i < f->nheld; i++) {
		struct ns_held *h = f->held[i];
		enum verdict v = UNDECIDED;

		if (item_conn(&h->item) == conn)
			v = offer(f, &h->item);
		if (v == UNDECIDED) {
			f->held[keep++] = h;
			continue;
		}
		if (v == PASS)
			emit(ctx, &h->ci);
		free(h);
	}
	f->nheld = keep;
}

/* What @it teaches about its connection; true if that is news. */
static bool learn(struct ns_filter *f, const struct ns_item *it)
{
	if (it->type == NS_ITEM_EVENT)
		return ns_magnet_learn(f->conns, &it->event) && f->nports;
	if (it->type == NS_ITEM_BLOCK && ns_expr_active(&f->expr))
		return ns_magnet_learn_block(f->conns, &it->block);
	return false;
}

void ns_filter_item(struct ns_filter *f, const struct ns_citem *ci,
		    ns_filter_emit emit, void *ctx)
{
	const struct ns_item *it = ci->it;

	/* No filter (a recorder): every block passes, none teaches. */
	if (it->type == NS_ITEM_BLOCK && !ns_filter_active(f)) {
		emit(ctx, ci);
		return;
	}
	if (learn(f, it) && f->nheld)
		release(f, item_conn(it), emit, ctx);
	switch (offer(f, it)) {
	case PASS:
		emit(ctx, ci);
		break;
	case UNDECIDED:
		hold(f, ci);
		break;
	case DROP:
		break;
	}
}

void ns_filter_finish(struct ns_filter *f)
{
	for (size_t i = 0; i < f->nheld; i++)
		count_undecided(f, &f->held[i]->item);
	free_held(f);
}
