// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "source/join.h"

/* The file's calibration (its CPUs' rate filled in), or NULL. */
static const struct ns_calib_set *file_calib(struct nsf_reader *r, bool raw)
{
	if (raw || !r->have_calib || !ns_calib_count(&r->calib))
		return NULL;
	if (!r->calib.tsc_khz)
		r->calib.tsc_khz = r->info.tsc_khz;
	return &r->calib;
}

/* Host @h's items: blocks kept corrected, the first SYSINFO's clock. */
static int load(struct ns_join_input *in, unsigned int h, bool raw,
		char *why, size_t len)
{
	struct ns_file_source *f = &in->file[h];
	const struct ns_calib_set *cs = file_calib(&f->reader, raw);
	bool clocked = false;
	struct ns_citem ci;
	struct ns_item it;

	ns_clock_from_info(&in->join.host[h].clock, &f->reader.info);
	for (;;) {
		switch (ns_source_next(&f->src, &it)) {
		case NS_SOURCE_ITEM:
			break;
		case NS_SOURCE_FAIL:
			snprintf(why, len, "%s", f->src.err);
			return -1;
		case NS_SOURCE_END:
			return 0;
		default:
			continue;
		}
		if (it.type == NS_ITEM_SYSINFO && !clocked) {
			ns_clock_from_sysinfo(&in->join.host[h].clock, &it.sysinfo);
			clocked = true;
		} else if (it.type == NS_ITEM_LOSS) {
			in->lost[h] += it.loss.lost;
		}
		if (it.type != NS_ITEM_BLOCK)
			continue;
		ns_correct_item(cs, &it, &ci);
		if (ns_join_add(&in->join, h, &ci)) {
			snprintf(why, len, "join: out of memory");
			return -1;
		}
	}
}

/* Joined receive blocks by their send's time, then their own. */
static int info_cmp(const void *x, const void *y, void *ctx)
{
	const struct ns_join *j = ctx;
	const struct ns_joined *a = x, *b = y;
	double ta = j->b[a->tx].t, tb = j->b[b->tx].t;

	if (a->from != b->from) {	/* on host 0's clock */
		ta -= a->from ? ns_join_offset_at(j, ta) : 0;
		tb -= b->from ? ns_join_offset_at(j, tb) : 0;
	}
	if (ta != tb)
		return ta < tb ? -1 : 1;
	if (a->tx != b->tx)
		return a->tx < b->tx ? -1 : 1;
	return j->b[a->rx].b.tcp_seq < j->b[b->rx].b.tcp_seq ? -1 :
	       j->b[a->rx].b.tcp_seq > j->b[b->rx].b.tcp_seq;
}

/* One entry per receive block joined, sorted, TSO parts numbered. */
static int list_joined(struct ns_join_input *in)
{
	const struct ns_join *j = &in->join;

	in->info = calloc(j->n + 1, sizeof(*in->info));
	if (!in->info)
		return -1;
	for (size_t i = 0; i < j->n; i++) {
		const struct ns_jblock *r = &j->b[i];
		struct ns_joined *x;

		if (r->tx || r->why != NS_JW_JOINED)
			continue;
		x = &in->info[in->n++];
		x->tx = r->peer;
		x->rx = i;
		x->from = j->b[r->peer].host;
		x->to = r->host;
		x->uncert_ns = j->clock.uncert_ns;
	}
	qsort_r(in->info, in->n, sizeof(*in->info), info_cmp, &in->join);
	for (size_t i = 0, k; i < in->n; i = k) {
		for (k = i; k < in->n && in->info[k].tx == in->info[i].tx; k++)
			in->info[k].part = (uint16_t)(k - i);
		for (size_t m = i; m < k; m++)
			in->info[m].parts = (uint16_t)(k - i);
	}
	return 0;
}

int ns_join_open(struct ns_join_input *in, const char *const path[2],
		 bool raw, double window_ns, volatile sig_atomic_t *stop,
		 char *why, size_t len)
{
	static volatile sig_atomic_t no_stats;

	memset(in, 0, sizeof(*in));
	ns_join_init(&in->join);
	in->join.window_ns = window_ns;
	for (unsigned int h = 0; h < 2; h++) {
		in->join.host[h].name = path[h];
		if (ns_source_file(&in->file[h], path[h], stop, &no_stats)) {
			snprintf(why, len, "%s", in->file[h].src.err);
			return -1;
		}
		in->open[h] = true;
		if (load(in, h, raw, why, len))
			return -1;
	}
	if (!ns_join_match(&in->join) && !list_joined(in))
		return 0;
	snprintf(why, len, "join: out of memory");
	return -1;
}

const struct nsl_info *ns_join_info(const struct ns_join_input *in)
{
	return &in->file[0].reader.info;
}

void ns_join_close(struct ns_join_input *in)
{
	for (unsigned int h = 0; h < 2; h++)
		if (in->open[h])
			ns_source_close(&in->file[h].src);
	free(in->info);
	ns_join_free(&in->join);
}

/* ---- the joined block ---- */

/* Host 0's time (ns from its anchor) of @tsc on @host's clock. */
static double ref_ns(const struct ns_join *j, unsigned int host, uint64_t tsc)
{
	double t = ns_join_host_ns(j, host, tsc);

	return host ? t - ns_join_offset_at(j, t) : t;
}

/* Ticks of host 0 in @ns. */
static int64_t ticks0(const struct ns_join *j, double ns)
{
	return llround(ns * j->host[0].clock.tsc_khz / 1e6);
}

/* @k's records onto @o (tsc0 at host 0's @t0 ns), from @o->nrec on. */
static void put_records(const struct ns_join *j, const struct ns_jblock *k,
			double t0, bool shared, struct nsl_block *o,
			struct ns_rec_corr *oc)
{
	uint32_t khz = j->host[k->host].clock.tsc_khz;
	double scale = khz ? (double)j->host[0].clock.tsc_khz / khz : 1;
	double base = ref_ns(j, k->host, k->b.tsc0) - t0;

	for (unsigned int i = 0; i < k->b.nrec; i++) {
		struct nsl_record *r = &o->rec[o->nrec];

		if (o->nrec == NSL_MAX_RECORDS) {
			o->flags |= NSL_BF_TRUNC;
			return;
		}
		*r = k->b.rec[i];
		r->start = (uint64_t)(ticks0(j, base) +
				      llround((double)(int64_t)r->start * scale));
		r->ticks = (uint64_t)llround((double)r->ticks * scale);
		oc[o->nrec] = k->corr[i];
		oc[o->nrec].ticks = (uint64_t)llround((double)k->corr[i].ticks *
						      scale);
		if (shared)
			r->flags |= NSL_RF_SHARED;
		o->nrec++;
	}
}

/* @k's devices onto @o, their records from @first on. */
static void put_devices(const struct nsl_block *k, unsigned int first,
			struct nsl_block *o)
{
	for (unsigned int i = 0; i < k->ndev; i++) {
		if (o->ndev == NSL_MAX_DEVS) {
			o->flags |= NSL_BF_DEVTRUNC;
			return;
		}
		o->dev[o->ndev] = k->dev[i];
		o->dev[o->ndev].first = (uint8_t)(k->dev[i].first + first);
		o->ndev++;
	}
}

/* The wire: from the send's hand-off to the receive's rx-nic start. */
static void put_wire(const struct ns_join *j, const struct ns_jblock *t,
		     const struct ns_jblock *r, double t0,
		     struct ns_joined *x, struct nsl_block *o,
		     struct ns_rec_corr *oc)
{
	double from = ref_ns(j, t->host, t->b.tsc0 + t->b.rec[t->rec].start);
	double to = ref_ns(j, r->host, r->b.tsc0 + r->b.rec[r->rec].start);
	struct nsl_record *w = &o->rec[o->nrec];

	x->wire_ns = to - from;
	x->wire = o->nrec;
	if (o->nrec == NSL_MAX_RECORDS) {
		o->flags |= NSL_BF_TRUNC;
		return;
	}
	memset(w, 0, sizeof(*w));
	memset(&oc[o->nrec], 0, sizeof(oc[0]));
	w->region = NS_R_WIRE;
	w->nmerged = 1;
	w->cpu = t->b.hdr.cpu;
	w->start = (uint64_t)ticks0(j, from - t0);
	w->ticks = x->wire_ns > 0 ? (uint64_t)ticks0(j, x->wire_ns) : 0;
	oc[o->nrec].ticks = w->ticks;
	o->nrec++;
}

/* The block of joined entry @x into @o, corrections into @oc. */
static void build(const struct ns_join *j, struct ns_joined *x,
		  struct nsl_block *o, struct ns_rec_corr *oc)
{
	const struct ns_jblock *t = &j->b[x->tx], *r = &j->b[x->rx];
	double t0 = ref_ns(j, t->host, t->b.tsc0);

	*o = t->b;
	o->nrec = o->ndev = 0;
	o->tsc0 = j->host[0].clock.ref_tsc + (uint64_t)ticks0(j, t0);
	o->flags |= NSL_BF_RX | (r->b.flags & (NSL_BF_ABSORBED |
					       NSL_BF_COALESCED));
	if (x->parts > 1) {	/* a TSO send's frame */
		o->len = r->b.len;
		o->tcp_seq = r->b.tcp_seq;
		o->gso_segs = 1;
	}
	put_records(j, t, t0, x->part > 0, o, oc);
	put_devices(&t->b, 0, o);
	put_wire(j, t, r, t0, x, o, oc);
	x->rx_first = o->nrec;
	put_devices(&r->b, o->nrec, o);
	put_records(j, r, t0, false, o, oc);
	o->hdr.size = NSL_BLOCK_SIZE(o->nrec);
}

const struct ns_citem *ns_join_next(struct ns_join_input *in)
{
	struct ns_joined *x;

	if (in->next >= in->n)
		return NULL;
	x = &in->info[in->next++];
	memset(&in->it, 0, sizeof(in->it));
	memset(&in->ci, 0, sizeof(in->ci));
	in->it.type = NS_ITEM_BLOCK;
	build(&in->join, x, &in->it.block, in->ci.corr);
	in->it.hdr = in->it.block.hdr;
	in->ci.it = &in->it;
	in->ci.join = x;
	return &in->ci;
}
