// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "source/decode.h"
#include "stage/magnet.h"
#include "view/flags.h"
#include "view/pcapopt.h"

/* A payload being written: big-endian, never past NS_PCAPOPT_MAX. */
struct put {
	uint8_t *p;
	size_t n;
};

static void put_be(struct put *w, uint64_t v, unsigned int bytes)
{
	if (w->n + bytes > NS_PCAPOPT_MAX)
		return;
	for (unsigned int i = 0; i < bytes; i++)
		w->p[w->n + i] = (uint8_t)(v >> 8 * (bytes - 1 - i));
	w->n += bytes;
}

/* A string's bytes, at most 255, after its length when @counted. */
static void put_text(struct put *w, const char *s, bool counted)
{
	size_t len = strlen(s);

	len = len > 255 ? 255 : len;
	if (counted)
		put_be(w, len, 1);
	if (w->n + len <= NS_PCAPOPT_MAX) {
		memcpy(w->p + w->n, s, len);
		w->n += len;
	}
}

/* What every kind begins with; a block and an event its seq and conn. */
static void put_head(struct put *w, unsigned int kind, uint32_t cpu)
{
	put_be(w, NS_PCAPOPT_VERSION, 1);
	put_be(w, kind, 1);
	put_be(w, 0, 2);	/* the length, once known: end() */
	put_be(w, cpu, 4);
}

static void put_conn_head(struct put *w, unsigned int kind, uint32_t cpu,
			  uint64_t seq, uint64_t conn)
{
	put_head(w, kind, cpu);
	put_be(w, seq, 8);
	put_be(w, conn, 8);
}

static size_t end(struct put *w)
{
	w->p[2] = (uint8_t)(w->n >> 8);
	w->p[3] = (uint8_t)w->n;
	return w->n;
}

/* @ticks in ns, as nsdump's µs with three decimals give them. */
static uint64_t ns_of(const struct ns_acc *acc, uint64_t ticks)
{
	return (uint64_t)llround(ns_acc_us(acc, ticks) * 1000);
}

static void put_record(struct put *w, const struct ns_acc *acc,
		       const struct ns_citem *ci, unsigned int k)
{
	const struct nsl_block *b = &ci->it->block;
	const struct nsl_record *r = &b->rec[k];
	bool corr = ns_acc_corrected(acc) && !(r->flags & NSL_RF_OPEN);

	put_be(w, r->region, 1);
	put_be(w, r->depth, 1);
	put_be(w, r->flags, 2);
	put_be(w, r->cpu, 2);
	put_be(w, r->nmerged, 2);
	put_be(w, ns_of(acc, r->start), 8);
	put_be(w, ns_of(acc, r->ticks), 8);
	put_be(w, ns_of(acc, corr ? ci->corr[k].ticks : r->ticks), 8);
	for (unsigned int e = 0; e < b->nevents; e++)
		put_be(w, corr ? ci->corr[k].count[e] : r->count[e], 8);
}

size_t ns_pcapopt_block(const struct ns_acc *acc, const struct ns_citem *ci,
			const char *path, uint8_t out[NS_PCAPOPT_MAX])
{
	const struct nsl_block *b = &ci->it->block;
	struct put w = { .p = out };
	char lbl[16];

	put_conn_head(&w, NS_PCAPOPT_BLOCK, b->hdr.cpu, b->seq, b->conn);
	put_be(&w, b->flags, 4);
	put_be(&w, b->len, 4);
	put_be(&w, b->tcp_seq, 4);
	put_be(&w, b->gso_segs, 2);
	put_be(&w, b->dir, 1);
	put_be(&w, b->nrec, 1);
	put_be(&w, b->ndev, 1);
	put_be(&w, b->nevents, 1);
	put_be(&w, ns_acc_corrected(acc), 1);
	put_be(&w, strlen(path) > 255 ? 255 : strlen(path), 1);
	for (unsigned int i = 0; i < b->ndev; i++) {
		put_be(&w, b->dev[i].ifindex, 4);
		put_be(&w, b->dev[i].netns, 4);
		put_be(&w, b->dev[i].dir, 1);
		put_be(&w, b->dev[i].first, 1);
		put_be(&w, 0, 2);
	}
	for (unsigned int k = 0; k < b->nrec; k++)
		put_record(&w, acc, ci, k);
	put_text(&w, path, false);
	for (unsigned int e = 0; e < b->nevents; e++)
		put_text(&w, ns_acc_event_label(acc, e, lbl, sizeof(lbl)), true);
	return end(&w);
}

size_t ns_pcapopt_event(const struct nsl_event_rec *ev,
			uint8_t out[NS_PCAPOPT_MAX])
{
	const char *name = ns_event_type_name(ev->type);
	struct put w = { .p = out };

	put_conn_head(&w, NS_PCAPOPT_EVENT, ev->hdr.cpu, ev->seq, ev->conn);
	put_be(&w, ev->type, 4);
	put_be(&w, ev->bytes, 4);
	put_be(&w, ev->flags, 4);
	put_text(&w, name ? name : "", true);
	return end(&w);
}

size_t ns_pcapopt_loss(const struct nsl_loss *l, uint8_t out[NS_PCAPOPT_MAX])
{
	struct put w = { .p = out };

	put_head(&w, NS_PCAPOPT_LOSS, l->hdr.cpu);
	put_be(&w, l->first_seq, 8);
	put_be(&w, l->lost, 8);
	return end(&w);
}

/* ---- what a person reads ---- */

/* snprintf at @used of @len, never past the end. */
#define APPEND(buf, len, used, ...) do {					\
	if ((used) < (len))						\
		(used) += snprintf((buf) + (used), (len) - (used), __VA_ARGS__); \
} while (0)

void ns_pcapopt_block_text(const struct ns_acc *acc, const struct ns_citem *ci,
			   const char *path, char *buf, size_t len)
{
	const struct nsl_block *b = &ci->it->block;
	bool corr = ns_acc_corrected(acc);
	char flags[128];
	size_t used = 0;

	APPEND(buf, len, used, "%s", b->dir == NSL_DIR_RX ? "rx" : "tx");
	for (unsigned int k = 0; k < b->nrec; k++) {
		const struct nsl_record *r = &b->rec[k];
		const char *name = ns_region_name(r->region);

		if (r->flags & NSL_RF_OPEN)
			APPEND(buf, len, used, " %s open", name ? name : "?");
		else
			APPEND(buf, len, used, " %s %.3fus", name ? name : "?",
			       ns_acc_us(acc, corr ? ci->corr[k].ticks : r->ticks));
	}
	ns_block_flags(b->flags, flags, sizeof(flags));
	APPEND(buf, len, used, " | %s | %s | cpu %u seq %llu%s", *path ? path : "no device",
	       *flags ? flags : "no flags", b->hdr.cpu,
	       (unsigned long long)b->seq, corr ? "" : " | raw");
}

void ns_pcapopt_event_text(const struct nsl_event_rec *ev, char *buf,
			   size_t len)
{
	const char *name = ns_event_type_name(ev->type);
	char flags[64];

	ns_event_flags(ev->flags, flags, sizeof(flags));
	snprintf(buf, len, "%s %u bytes | conn 0x%llx | %s | cpu %u seq %llu",
		 name ? name : "MAGNET_?", ev->bytes,
		 (unsigned long long)ev->conn, *flags ? flags : "no flags",
		 ev->hdr.cpu, (unsigned long long)ev->seq);
}

void ns_pcapopt_loss_text(const struct nsl_loss *l, char *buf, size_t len)
{
	snprintf(buf, len, "%llu items lost | cpu %u from seq %llu",
		 (unsigned long long)l->lost, l->hdr.cpu,
		 (unsigned long long)l->first_seq);
}

void ns_pcapopt_base64(const uint8_t *in, size_t n, char *buf, size_t len)
{
	static const char digit[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t used = strlen(NS_PCAPOPT_PREFIX);

	if (len < used + 4 * ((n + 2) / 3) + 1) {
		buf[0] = 0;
		return;
	}
	memcpy(buf, NS_PCAPOPT_PREFIX, used);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 |
			     (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		buf[used++] = digit[v >> 18];
		buf[used++] = digit[(v >> 12) & 63];
		buf[used++] = i + 1 < n ? digit[(v >> 6) & 63] : '=';
		buf[used++] = i + 2 < n ? digit[v & 63] : '=';
	}
	buf[used] = 0;
}
