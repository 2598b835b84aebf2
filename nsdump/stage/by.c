// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/devname.h"
#include "stage/by.h"

static const char *const names[] = {
	[NS_BY_CONN] = "conn", [NS_BY_CPU] = "cpu", [NS_BY_DIR] = "dir",
	[NS_BY_DEV] = "dev",
};

int ns_by_parse(const char *arg, enum ns_by_what *what)
{
	for (int w = NS_BY_CONN; w <= NS_BY_DEV; w++) {
		if (!strcmp(arg, names[w])) {
			*what = w;
			return 0;
		}
	}
	return -1;
}

const char *ns_by_name(enum ns_by_what what)
{
	return what >= NS_BY_CONN && what <= NS_BY_DEV ? names[what] : "none";
}

void ns_by_init(struct ns_by *by, enum ns_by_what what)
{
	memset(by, 0, sizeof(*by));
	by->what = what;
}

void ns_by_free(struct ns_by *by)
{
	for (size_t i = 0; i < by->n; i++) {
		for (int r = 0; r < NS_R_MAX; r++)
			ns_stats_free(&by->keys[i]->region[r]);
		free(by->keys[i]);
	}
	free(by->keys);
	ns_by_init(by, by->what);
}

uint64_t ns_by_key_of(const struct ns_by *by, const struct nsl_block *b)
{
	switch (by->what) {
	case NS_BY_CONN:
		return b->conn;
	case NS_BY_CPU:
		return b->hdr.cpu;
	case NS_BY_DIR:
		return b->dir;
	case NS_BY_DEV:
		return ns_dev_key(b->ifindex, 0);	/* namespace unknown */
	case NS_BY_NONE:
		break;
	}
	return 0;
}

/* Where @key is, or would go, in the sorted keys. */
static size_t position(const struct ns_by *by, uint64_t key)
{
	size_t lo = 0, hi = by->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (by->keys[mid]->key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct ns_by_key *get(struct ns_by *by, uint64_t key)
{
	size_t at = position(by, key);
	struct ns_by_key *k;

	if (at < by->n && by->keys[at]->key == key)
		return by->keys[at];
	if (by->n == by->cap) {
		size_t cap = by->cap ? 2 * by->cap : 16;
		struct ns_by_key **p = realloc(by->keys, cap * sizeof(*p));

		if (!p)
			return NULL;
		by->keys = p;
		by->cap = cap;
	}
	k = malloc(sizeof(*k));
	if (!k)
		return NULL;
	k->key = key;
	/* a store of one value: past it the histogram alone */
	for (int r = 0; r < NS_R_MAX; r++)
		ns_stats_init(&k->region[r], 1);
	memmove(by->keys + at + 1, by->keys + at,
		(by->n - at) * sizeof(by->keys[0]));
	by->keys[at] = k;
	by->n++;
	return k;
}

void ns_by_add(struct ns_by *by, uint64_t key, unsigned int region,
	       uint64_t ticks)
{
	struct ns_by_key *k = get(by, key);

	if (!k || region >= NS_R_MAX) {
		by->oom = true;
		return;
	}
	if (ns_stats_add(&k->region[region], ticks))
		by->oom = true;
}

/* A device as devname.h names it; "none" for a block handed to none. */
static void dev_text(const struct ns_by *by, uint64_t key, char *buf,
		     size_t len)
{
	if (!key)
		snprintf(buf, len, "none");
	else
		ns_dev_text(ns_dev_key_ifindex(key), ns_dev_key_netns(key),
			    by->live, buf, len);
}

void ns_by_key_text(const struct ns_by *by, uint64_t key, char *buf,
		    size_t len)
{
	if (by->what == NS_BY_CONN)
		snprintf(buf, len, "0x%llx", (unsigned long long)key);
	else if (by->what == NS_BY_DIR)
		snprintf(buf, len, "%s", key == NSL_DIR_RX ? "rx" : "tx");
	else if (by->what == NS_BY_DEV)
		dev_text(by, key, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)key);
}
