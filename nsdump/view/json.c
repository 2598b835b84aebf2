// SPDX-License-Identifier: GPL-2.0
/*
 * --json: one JSON object per line ("type": "block", "loss", "table",
 * ...), so a consumer can stream it.  Every field is shown, as -v shows
 * them.
 *
 * json-c builds and writes each line, escaping every string.  json-c
 * rather than jansson: it writes a number in the text it is given
 * (json_object_new_double_s), so values keep the fixed decimals of the
 * text report (microseconds to the nanosecond), and it holds unsigned
 * 64-bit values (connection ids, TSC readings from any file), which
 * jansson's json_int_t cannot above INT64_MAX.  Strings are made valid
 * UTF-8 first (utf8.h): json-c writes their bytes as given.
 */
#include <arpa/inet.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "lib/devname.h"
#include "source/decode.h"
#include "source/sample.h"
#include "source/version.h"
#include "stage/join.h"
#include "stage/tuple.h"
#include "view/flags.h"
#include "view/json.h"
#include "view/jsonv.h"
#include "view/report.h"
#include "view/utf8.h"

typedef struct json_object json;

/* ---- values ---- */

/* The strings and fixed decimals of every JSON nsdump writes. */
#define jstr	ns_json_str
#define jfix	ns_json_fixed
#define jflags	ns_json_names

static json *ju64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static json *jbool(bool v)
{
	return json_object_new_boolean(v);
}

static void jset(json *o, const char *key, json *v)
{
	json_object_object_add(o, key, v);
}

/* An object with "type": @type first. */
static json *jobj(const char *type)
{
	json *o = json_object_new_object();

	if (type)
		jset(o, "type", json_object_new_string(type));
	return o;
}

static void jpush(json *array, json *v)
{
	json_object_array_add(array, v);
}

/* One line on @f; frees @o. */
static void jput(FILE *f, json *o)
{
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					     JSON_C_TO_STRING_NOSLASHESCAPE), f);
	fputc('\n', f);
	json_object_put(o);
}

/* ---- items ---- */

static json *jcounts(const uint64_t *count, unsigned int n)
{
	json *a = json_object_new_array();

	for (unsigned int e = 0; e < n; e++)
		jpush(a, ju64(count[e]));
	return a;
}

static json *jrecord(struct ns_report *r, const struct nsl_block *b,
		     const struct ns_rec_corr *corr, unsigned int i)
{
	const struct nsl_record *rec = &b->rec[i];
	int dev = ns_dev_of_record(b, i);
	uint64_t count[NSL_MAX_EVENTS];
	json *o = jobj(NULL);
	char fl[128];

	for (unsigned int e = 0; e < NSL_MAX_EVENTS; e++)
		count[e] = rec->count[e];	/* __u64 is another type */

	jset(o, "region", jstr(ns_region_name(rec->region)));
	if (dev != NS_DEV_NONE)
		jset(o, "dev", ju64((unsigned int)dev));
	jset(o, "us", jfix(ns_acc_us(r->acc, rec->ticks), 3));
	jset(o, "ticks", ju64(rec->ticks));
	jset(o, "start", ju64(rec->start));
	jset(o, "depth", ju64(rec->depth));
	jset(o, "cpu", ju64(rec->cpu));
	jset(o, "nmerged", ju64(rec->nmerged));
	ns_record_flags(rec->flags, fl, sizeof(fl));
	jset(o, "flags", jflags(fl));
	jset(o, "count", jcounts(count, b->nevents));
	jset(o, "k", ju64(corr[i].k));
	if (!ns_acc_corrected(r->acc) || (rec->flags & NSL_RF_OPEN))
		return o;
	jset(o, "us_corrected", jfix(ns_acc_us(r->acc, corr[i].ticks), 3));
	jset(o, "ticks_corrected", ju64(corr[i].ticks));
	jset(o, "clamped", jbool(corr[i].ticks_clamped));
	jset(o, "count_corrected", jcounts(corr[i].count, b->nevents));
	return o;
}

static json *jaddr(uint16_t family, const uint8_t *addr)
{
	char a[INET6_ADDRSTRLEN];

	ns_addr_text(family, addr, a, sizeof(a));
	return jstr(a);
}

/*
 * The block's flow: family 4 or 6 (null: none), ports, and the
 * addresses where it has them.
 */
static void jflow(json *o, const struct nsl_block *b)
{
	static const uint8_t zero[16];
	struct ns_tuple t;

	if (!ns_tuple_from_block(b, &t)) {
		jset(o, "family", NULL);
		return;
	}
	jset(o, "family", ju64(t.family == AF_INET6 ? 6 : 4));
	jset(o, "sport", ju64(t.sport));
	jset(o, "dport", ju64(t.dport));
	if (memcmp(t.saddr, zero, sizeof(zero)))
		jset(o, "saddr", jaddr(t.family, t.saddr));
	if (memcmp(t.daddr, zero, sizeof(zero)))
		jset(o, "daddr", jaddr(t.family, t.daddr));
}

/*
 * The devices crossed, in order: index, namespace, direction, the first
 * record, and the name where it resolves here (devname.h).
 */
static json *jdevices(struct ns_report *r, const struct nsl_block *b)
{
	json *a = json_object_new_array();

	for (unsigned int i = 0; i < b->ndev; i++) {
		const struct nsl_dev *d = &b->dev[i];
		char name[IF_NAMESIZE];
		json *o = jobj(NULL);

		jset(o, "ifindex", ju64(d->ifindex));
		jset(o, "netns", ju64(d->netns));
		jset(o, "dir", jstr(ns_dev_dir_name(d->dir)));
		jset(o, "first", ju64(d->first));
		if (ns_dev_lookup(d->ifindex, d->netns, r->live, name))
			jset(o, "name", jstr(name));
		jpush(a, o);
	}
	return a;
}

/* A block of a join, as its own file has it: its CPU, seq and tsc0. */
static json *jside(const struct ns_jblock *k)
{
	json *o = jobj(NULL);

	jset(o, "host", ju64(k->host));
	jset(o, "cpu", ju64(k->b.hdr.cpu));
	jset(o, "seq", ju64(k->b.seq));
	jset(o, "tsc0", ju64(k->b.tsc0));
	return o;
}

/* A joined block's hosts and wire: "join": {...}. */
static json *jjoined(const struct ns_report *r, const struct ns_joined *x)
{
	json *o = jobj(NULL);

	if (r->join) {
		jset(o, "tx", jside(&r->join->join->b[x->tx]));
		jset(o, "rx", jside(&r->join->join->b[x->rx]));
	}
	jset(o, "from", ju64(x->from));
	jset(o, "to", ju64(x->to));
	jset(o, "wire_us", jfix(x->wire_ns / 1e3, 3));
	jset(o, "uncertainty_us", jfix(x->uncert_ns / 1e3, 3));
	jset(o, "wire_record", ju64(x->wire));
	jset(o, "rx_first", ju64(x->rx_first));
	jset(o, "part", ju64(x->part));
	jset(o, "parts", ju64(x->parts));
	return o;
}

static void json_block(struct ns_report *r, const struct ns_citem *ci)
{
	const struct nsl_block *b = &ci->it->block;
	json *o = jobj("block"), *recs;
	char fl[128];

	jset(o, "time_us", jfix(ns_acc_time_us(r->acc, b), 3));
	jset(o, "time_ns", json_object_new_int64(ns_clock_ns(&r->acc->clock, b->tsc0)));
	jset(o, "cpu", ju64(b->hdr.cpu));
	jset(o, "seq", ju64(b->seq));
	jset(o, "dir", jstr(b->dir == NSL_DIR_RX ? "rx" : "tx"));
	jset(o, "len", ju64(b->len));
	jset(o, "segs", ju64(b->gso_segs));
	jset(o, "tsc0", ju64(b->tsc0));
	jset(o, "conn", ju64(b->conn));
	jset(o, "tcp_seq", ju64(b->tcp_seq));
	jset(o, "ifindex", ju64(b->ifindex));
	jset(o, "devices", jdevices(r, b));
	jset(o, "proto", ju64(b->proto));
	jflow(o, b);
	jset(o, "nhlen", ju64(b->nhlen));
	jset(o, "thlen", ju64(b->thlen));
	jset(o, "mode", ju64(b->mode));
	jset(o, "nevents", ju64(b->nevents));
	ns_block_flags(b->flags, fl, sizeof(fl));
	jset(o, "flags", jflags(fl));
	recs = json_object_new_array();
	for (unsigned int i = 0; i < b->nrec; i++)
		jpush(recs, jrecord(r, b, ci->corr, i));
	jset(o, "records", recs);
	if (ci->join)
		jset(o, "join", jjoined(r, ci->join));
	jput(r->out, o);
}

static void json_loss(struct ns_report *r, const struct nsl_loss *l)
{
	json *o = jobj("loss");

	jset(o, "cpu", ju64(l->hdr.cpu));
	jset(o, "lost", ju64(l->lost));
	jset(o, "first_seq", ju64(l->first_seq));
	jset(o, "tsc", ju64(l->tsc));
	jput(r->out, o);
}

/* ---- the table ---- */

static json *jsummary(struct ns_stats *st, double scale)
{
	struct ns_summary s;
	json *o = jobj(NULL);

	if (!ns_stats_summary(st, scale, &s)) {
		jset(o, "n", ju64(0));
		return o;
	}
	jset(o, "n", ju64(s.n));
	jset(o, "mean", jfix(s.mean, 3));
	jset(o, "p50", jfix(s.p50, 3));
	jset(o, "p99", jfix(s.p99, 3));
	return o;
}

/* The counter summaries of a region: 0 mean, 1 p50, 2 p99 of each. */
static json *jevents(const struct ns_summary *c, unsigned int n, int which)
{
	json *a = json_object_new_array();

	for (unsigned int e = 0; e < n; e++) {
		double v = which == 0 ? c[e].mean : which == 1 ? c[e].p50 : c[e].p99;

		jpush(a, c[e].n ? jfix(v, which ? 0 : 1) : NULL);
	}
	return a;
}

/* n, mean, the percentiles, min and max of a region, in µs. */
static void jpercentiles(json *o, const struct ns_summary *s)
{
	jset(o, "n", ju64(s->n));
	jset(o, "mean", jfix(s->mean, 3));
	jset(o, "p50", jfix(s->p50, 3));
	jset(o, "p90", jfix(s->p90, 3));
	jset(o, "p99", jfix(s->p99, 3));
	jset(o, "p999", jfix(s->p999, 3));
	jset(o, "min", jfix(s->min, 3));
	jset(o, "max", jfix(s->max, 3));
}

static void jlatency(json *o, struct ns_report *r, unsigned int id)
{
	struct ns_region_acc *acc = &r->acc->region[id];
	struct ns_summary s;

	if (!ns_acc_summary(r->acc, id, &s)) {
		jset(o, "n", ju64(0));
		return;
	}
	jpercentiles(o, &s);
	jset(o, "cv", jfix(s.cv, 4));
	jset(o, "sampled", jbool(s.sampled));
	jset(o, "raw_mean", jfix(ns_acc_us(r->acc, 1) * acc->raw_sum / s.n, 3));
	jset(o, "self_mean", jfix(ns_acc_us(r->acc, 1) * acc->self_sum / s.n, 3));
}

static json *jregion(struct ns_report *r, unsigned int id)
{
	struct ns_region_acc *acc = &r->acc->region[id];
	struct ns_summary c[NSL_MAX_EVENTS];
	unsigned int nev = r->acc->nevents;
	json *o = jobj(NULL);
	double ipc;

	jset(o, "region", jstr(ns_region_name(id)));
	jset(o, "open", ju64(acc->open));
	jset(o, "invalid", ju64(acc->invalid));
	jset(o, "shared", ju64(acc->shared));
	jset(o, "merged", ju64(acc->merged));
	jlatency(o, r, id);
	for (unsigned int e = 0; e < nev; e++)
		if (!ns_stats_summary(&acc->ev[e], 1, &c[e]))
			c[e].n = 0;
	jset(o, "event_mean", jevents(c, nev, 0));
	jset(o, "event_p50", jevents(c, nev, 1));
	jset(o, "event_p99", jevents(c, nev, 2));
	ipc = ns_acc_ipc(r->acc, id);
	if (ipc >= 0)
		jset(o, "ipc", jfix(ipc, 3));
	return o;
}

static void json_rtt(struct ns_report *r)
{
	struct ns_rtt *t = r->acc->rtt;
	double scale = 1000.0 / r->acc->tsc_khz;
	json *o = jobj("rtt");

	jset(o, "unit", jstr("us"));
	jset(o, "raw", jsummary(&t->raw, scale));
	if (ns_acc_corrected(r->acc))
		jset(o, "corrected", jsummary(&t->corrected, scale));
	if (t->cold && ns_acc_corrected(r->acc))
		jset(o, "corrected_cold", jsummary(&t->corrected_cold, scale));
	jset(o, "spanning_loss", ju64(t->spanning_loss));
	jset(o, "clamped", ju64(t->clamped));
	jput(r->out, o);
}

/* A join's table is of one direction: "from" and "to" name its files. */
static void jjourney(json *o, const struct ns_report *r)
{
	if (!r->journey[0])
		return;
	jset(o, "from", jstr(r->journey[0]));
	jset(o, "to", jstr(r->journey[1]));
}

/*
 * --by dev: "key" as the text report names the device, its "ifindex",
 * "netns" (null: a block of an older module, namespace unknown) and
 * "name" where it resolves here.
 */
static void jby_dev(json *o, const struct ns_by *by, uint64_t key)
{
	uint32_t ifindex = ns_dev_key_ifindex(key), netns = ns_dev_key_netns(key);
	char text[NS_DEV_TEXT], name[IF_NAMESIZE];

	ns_by_key_text(by, key, text, sizeof(text));
	jset(o, "key", jstr(text));
	jset(o, "ifindex", ju64(ifindex));
	jset(o, "netns", netns ? ju64(netns) : NULL);
	if (ns_dev_lookup(ifindex, netns, by->live, name))
		jset(o, "name", jstr(name));
}

/* --by: a line per key, {"type": "by", "by": "conn", "key": 42, ...}. */
static void json_by_key(struct ns_report *r, struct ns_by_key *k)
{
	const struct ns_by *by = r->acc->by;
	json *o = jobj("by"), *regions = json_object_new_array();

	jjourney(o, r);
	jset(o, "by", jstr(ns_by_name(by->what)));
	if (by->what == NS_BY_DIR)
		jset(o, "key", jstr(k->key == NSL_DIR_RX ? "rx" : "tx"));
	else if (by->what == NS_BY_DEV)
		jby_dev(o, by, k->key);
	else
		jset(o, "key", ju64(k->key));
	for (unsigned int id = 1; id < NS_R_MAX; id++) {
		struct ns_summary s;
		json *g;

		if (!ns_stats_summary(&k->region[id],
				      1000.0 / r->acc->tsc_khz, &s))
			continue;
		g = jobj(NULL);
		jset(g, "region", jstr(ns_region_name(id)));
		jpercentiles(g, &s);
		jpush(regions, g);
	}
	jset(o, "regions", regions);
	jset(o, "percentile_error", jfix(NS_HIST_REL_ERROR, 6));
	jput(r->out, o);
}

static void json_by(struct ns_report *r)
{
	for (size_t i = 0; i < r->acc->by->n; i++)
		json_by_key(r, r->acc->by->keys[i]);
}

/* The kernel's sampling: the counts in the table are of sampled packets. */
static json *jsample(const struct nsl_sample *s)
{
	json *o = jobj(NULL);

	jset(o, "rate", ju64(s->rate));
	jset(o, "flows", jbool(s->flags & NSL_SAMPLE_FLOWS));
	jset(o, "taken", ju64(s->taken));
	jset(o, "skipped", ju64(s->skipped));
	jset(o, "scale", jfix(ns_sample_scale(s), 4));
	return o;
}

static void json_table(struct ns_report *r)
{
	const struct ns_acc *a = r->acc;
	json *o = jobj("table"), *names, *regions;
	char lbl[16], how[192];

	jset(o, "unit", jstr("us"));
	jjourney(o, r);
	jset(o, "corrected", jbool(ns_acc_corrected(a)));
	if (ns_acc_corrected(a)) {
		ns_calib_summary(a->calib, how, sizeof(how));
		jset(o, "correction", jstr(how));
	}
	if (ns_sample_active(r->sample))
		jset(o, "sample", jsample(r->sample));
	jset(o, "tsc", jstr("rdtsc, not serialising"));
	jset(o, "tsc_khz", ju64(a->tsc_khz));
	jset(o, "blocks", ju64(a->blocks));
	jset(o, "lost", ju64(a->lost));
	jset(o, "invalid", ju64(a->invalid));
	jset(o, "shared", ju64(a->shared));
	jset(o, "absorbed", ju64(a->absorbed));
	jset(o, "coalesced", ju64(a->coalesced));
	jset(o, "events_late", ju64(r->lines.late));
	jset(o, "clamped_ticks", ju64(a->clamped_ticks));
	jset(o, "clamped_counts", ju64(a->clamped_counts));
	names = json_object_new_array();
	for (unsigned int e = 0; e < a->nevents; e++)
		jpush(names, jstr(ns_acc_event_label(a, e, lbl, sizeof(lbl))));
	jset(o, "events", names);
	regions = json_object_new_array();
	for (unsigned int id = 1; id < NS_R_MAX; id++)
		if (a->region[id].records)
			jpush(regions, jregion(r, id));
	jset(o, "regions", regions);
	jput(r->out, o);
	if (a->by)
		json_by(r);
	if (a->rtt)
		json_rtt(r);
}

/* ---- MAGNeT ---- */

static json *jtcp(const struct nsl_tcp_state *t)
{
	json *o = jobj(NULL);
	char buf[64];

	jset(o, "snd_cwnd", ju64(t->snd_cwnd));
	jset(o, "snd_ssthresh", ju64(t->snd_ssthresh));
	jset(o, "srtt_us", ju64(t->srtt_us));
	jset(o, "rto_us", ju64(t->rto_us));
	jset(o, "packets_out", ju64(t->packets_out));
	jset(o, "retrans_out", ju64(t->retrans_out));
	jset(o, "total_retrans", ju64(t->total_retrans));
	jset(o, "snd_wnd", ju64(t->snd_wnd));
	jset(o, "rcv_wnd", ju64(t->rcv_wnd));
	jset(o, "write_seq", ju64(t->write_seq));
	jset(o, "copied_seq", ju64(t->copied_seq));
	jset(o, "mss", ju64(t->mss));
	jset(o, "state", jstr(ns_tcp_state_name(t->state, buf, sizeof(buf))));
	jset(o, "ca_state", ju64(t->ca_state));
	jset(o, "tcp_flags", ju64(t->tcp_flags));
	return o;
}

static json *jip(const struct nsl_ip_fields *ip)
{
	json *o = jobj(NULL);

	jset(o, "version", ju64(ip->version));
	jset(o, "tos", ju64(ip->tos));
	jset(o, "ttl", ju64(ip->ttl));
	jset(o, "id", ju64(ip->id));
	jset(o, "frag_off", ju64(ip->frag_off));
	jset(o, "protocol", ju64(ip->protocol));
	return o;
}

static json *jipv4(uint32_t addr_be)
{
	char a[16];

	ns_ipv4(addr_be, a, sizeof(a));
	return jstr(a);
}

static void json_event(struct ns_report *r, const struct nsl_event_rec *ev,
		       const char *when)
{
	json *o = jobj("event");
	char buf[64];

	jset(o, "time", jstr(when));
	jset(o, "time_ns", json_object_new_int64(ns_clock_ns(&r->acc->clock, ev->tsc)));
	jset(o, "cpu", ju64(ev->hdr.cpu));
	jset(o, "seq", ju64(ev->seq));
	jset(o, "tsc", ju64(ev->tsc));
	jset(o, "conn", ju64(ev->conn));
	jset(o, "event", jstr(ns_event_type_name(ev->type)));
	jset(o, "bytes", ju64(ev->bytes));
	ns_event_flags(ev->flags, buf, sizeof(buf));
	jset(o, "flags", jflags(buf));
	if (ev->flags & NSL_EVF_TCP)
		jset(o, "tcp", jtcp(&ev->tcp));
	if (ev->flags & NSL_EVF_IP)
		jset(o, "ip", jip(&ev->ip));
	if (ev->flags & NSL_EVF_ADDR) {
		jset(o, "sport", ju64(ev->tcp.sport));
		jset(o, "dport", ju64(ev->tcp.dport));
		if (ev->flags & NSL_EVF_ADDR6) {
			jset(o, "saddr", jaddr(AF_INET6, ev->saddr6));
			jset(o, "daddr", jaddr(AF_INET6, ev->daddr6));
		} else {
			jset(o, "saddr", jipv4(ev->ip.saddr));
			jset(o, "daddr", jipv4(ev->ip.daddr));
		}
	}
	jput(r->out, o);
}

static void json_sysinfo(struct ns_report *r, const struct nsl_sysinfo *s,
			 const char *when)
{
	json *o = jobj("sysinfo");

	jset(o, "cpu", ju64(s->hdr.cpu));
	jset(o, "abi_version", ju64(s->abi_version));
	jset(o, "tsc_khz", ju64(s->tsc_khz));
	jset(o, "ncpus", ju64(s->ncpus));
	jset(o, "ref_tsc", ju64(s->ref_tsc));
	jset(o, "ref_realtime_ns", ju64(s->ref_realtime_ns));
	jset(o, "time", jstr(when));
	jput(r->out, o);
}

static json *jlayer(unsigned int type, const struct ns_layer_summary *s)
{
	json *o = jobj(NULL);

	jset(o, "event", jstr(ns_event_type_name(type)));
	jset(o, "n", ju64(s->n));
	jset(o, "bytes_mean", jfix(s->bytes_mean, 1));
	jset(o, "bytes_min", ju64(s->bytes_min));
	jset(o, "bytes_max", ju64(s->bytes_max));
	jset(o, "tso", ju64(s->tso));
	jset(o, "spacing_n", ju64(s->gaps));
	if (s->gaps) {
		jset(o, "spacing_mean_us", jfix(s->gap_mean_us, 3));
		jset(o, "spacing_cv", jfix(s->gap_cv, 4));
	}
	return o;
}

static void json_conn(struct ns_report *r, struct ns_conn *c)
{
	json *o = jobj("conn"), *layers = json_object_new_array();

	jset(o, "conn", ju64(c->conn));
	if (c->have_ports) {
		jset(o, "lport", ju64(c->lport));
		jset(o, "rport", ju64(c->rport));
	}
	if (c->laddr.family)
		jset(o, "laddr", jaddr(c->laddr.family, c->laddr.a));
	if (c->raddr.family)
		jset(o, "raddr", jaddr(c->raddr.family, c->raddr.a));
	for (unsigned int k = 0; k < NSL_EV_MAX - 1; k++) {
		unsigned int type = ns_magnet_order[k];
		struct ns_layer_summary s;

		if (ns_magnet_layer(&c->layer[type], r->acc->clock.tsc_khz, &s))
			jpush(layers, jlayer(type, &s));
	}
	jset(o, "layers", layers);
	jput(r->out, o);
}

/* Table III: one {"type":"conn"} line per connection. */
static void json_conns(struct ns_report *r)
{
	for (size_t i = 0; i < r->mag->n; i++)
		if (r->mag->conn[i].accounted)
			json_conn(r, &r->mag->conn[i]);
}

/* ---- a join ---- */

static json *jclock(const struct ns_join *j)
{
	const struct ns_jclock *c = &j->clock;
	json *o = jobj(NULL), *pairs = json_object_new_array();

	jset(o, "aligned", jbool(c->known));
	jpush(pairs, ju64(c->pairs[0]));
	jpush(pairs, ju64(c->pairs[1]));
	jset(o, "pairs", pairs);
	jset(o, "tsc_offset_guess", json_object_new_int64(ns_join_tsc_offset(j, 0)));
	if (!c->known)
		return o;
	jset(o, "offset_us", jfix(c->offset_ns / 1e3, 3));
	jset(o, "uncertainty_us", jfix(c->uncert_ns / 1e3, 3));
	jset(o, "tsc_offset", json_object_new_int64(ns_join_tsc_offset(j, c->offset_ns)));
	jset(o, "span_s", jfix((double)c->span_ns / 1e9, 6));
	jset(o, "drift_fitted", jbool(c->drift));
	jset(o, "drift_ppm", jfix(c->drift_ppm, 4));
	jset(o, "drift_uncertainty_ppm", jfix(c->drift_uncert_ppm, 4));
	return o;
}

static json *jhost(const struct ns_joinrep *jr, unsigned int h)
{
	const struct ns_jhost *x = &jr->join->host[h];
	json *o = jobj(NULL);

	jset(o, "file", jstr(x->name));
	jset(o, "tsc_khz", ju64(x->clock.tsc_khz));
	jset(o, "blocks", ju64(x->blocks));
	jset(o, "lost", ju64(jr->lost[h]));
	jset(o, "joined_sent", ju64(jr->join->joined[h]));
	jset(o, "tso_sends", ju64(jr->join->tso[h]));
	return o;
}

static json *junmatched(const struct ns_jblock *k)
{
	json *o = jobj(NULL);
	char fl[128];

	jset(o, "host", ju64(k->host));
	jset(o, "dir", jstr(k->tx ? "tx" : "rx"));
	jset(o, "reason", jstr(ns_join_why_name(k->why)));
	jset(o, "tsc0", ju64(k->b.tsc0));
	jset(o, "len", ju64(k->b.len));
	jset(o, "tcp_seq", ju64(k->b.tcp_seq));
	jset(o, "proto", ju64(k->b.proto));
	jflow(o, &k->b);
	ns_block_flags(k->b.flags, fl, sizeof(fl));
	jset(o, "flags", jflags(fl));
	return o;
}

/* {"type": "join", ...}: the hosts, the clock, the counts by reason. */
static void json_join(struct ns_report *r)
{
	const struct ns_join *j = r->join->join;
	json *o = jobj("join"), *hosts = json_object_new_array();
	json *counts = json_object_new_array(), *blocks = json_object_new_array();

	jpush(hosts, jhost(r->join, 0));
	jpush(hosts, jhost(r->join, 1));
	jset(o, "hosts", hosts);
	jset(o, "by_addr", jbool(j->by_addr));
	jset(o, "clock", jclock(j));
	for (unsigned int h = 0; h < 2; h++)
		for (int tx = 1; tx >= 0; tx--)
			for (unsigned int w = 0; w < NS_JW_MAX; w++) {
				json *c;

				if (!j->why[h][tx][w])
					continue;
				c = jobj(NULL);
				jset(c, "host", ju64(h));
				jset(c, "dir", jstr(tx ? "tx" : "rx"));
				jset(c, "reason", jstr(ns_join_why_name(w)));
				jset(c, "n", ju64(j->why[h][tx][w]));
				jpush(counts, c);
			}
	jset(o, "counts", counts);
	for (size_t i = 0; i < j->n; i++)
		if (j->b[i].why > NS_JW_NO_WIRE)
			jpush(blocks, junmatched(&j->b[i]));
	jset(o, "unmatched", blocks);
	jput(r->out, o);
}

const struct ns_printer ns_json_printer = {
	.stamps	= false,
	.block	= json_block,
	.loss	= json_loss,
	.table	= json_table,
	.event	= json_event,
	.sysinfo = json_sysinfo,
	.conns	= json_conns,
	.join	= json_join,
};

/* ---- outside the item pipeline ---- */

void ns_json_error(FILE *out, const char *msg)
{
	json *o = jobj(NULL);

	jset(o, "error", jstr(msg));
	jput(out, o);
}

static json *jcost(const struct ns_calib_set *cs, const struct nsl_calib *c,
		   int m, unsigned int nevents)
{
	const struct ns_cost_row *row = ns_cost_row(m);
	const struct nsl_cost *k = &c->cost[m];
	json *o = jobj(NULL), *counts = json_object_new_array();

	jset(o, "macro", jstr(row->macro));
	jset(o, "symbol", row->symbol[0] == '-' ? NULL : jstr(row->symbol));
	jset(o, "ns", jfix(ns_calib_ns(cs, k->ticks), 1));
	jset(o, "ticks", ju64(k->ticks));
	jset(o, "min_ns", jfix(ns_calib_ns(cs, k->min), 1));
	jset(o, "cv_pct", jfix(k->cv_ppm / 1e4, 2));
	jset(o, "samples", ju64(k->samples));
	for (unsigned int e = 0; e < nevents; e++)
		jpush(counts, e < c->nevents ? ju64(k->count[e]) : NULL);
	jset(o, "counts", counts);
	jset(o, "what", jstr(row->what));
	return o;
}

void ns_json_calib(FILE *out, const struct ns_calib_set *cs,
		   const char *const *names, unsigned int nevents)
{
	json *o = jobj("calibration"), *ev = json_object_new_array();
	json *cpus = json_object_new_array();
	char lbl[16];

	jset(o, "model", cs->model[0] ? jstr(cs->model) : NULL);
	jset(o, "tsc_khz", ju64(cs->tsc_khz));
	jset(o, "cold", json_object_new_boolean(cs->cold));
	for (unsigned int e = 0; e < nevents; e++) {
		snprintf(lbl, sizeof(lbl), "ev%u", e);
		jpush(ev, jstr(names && names[e] ? names[e] : lbl));
	}
	jset(o, "events", ev);
	for (uint32_t i = 0; i < cs->ncpus; i++) {
		json *cpu, *costs;

		if (!cs->valid[i])
			continue;
		cpu = jobj(NULL);
		costs = json_object_new_array();
		jset(cpu, "cpu", ju64(i));
		for (int m = 0; m < NSL_C_MAX; m++)
			jpush(costs, jcost(cs, &cs->cpu[i], m, nevents));
		jset(cpu, "costs", costs);
		jpush(cpus, cpu);
	}
	jset(o, "cpus", cpus);
	jput(out, o);
}

/* -L: a line per event, {"type": "event", "kind", "pmu", ...}. */
static void jl_section(void *ctx, const char *kind, const char *pmu,
		       const char *title)
{
	struct ns_json_lister *jl = ctx;

	(void)title;
	jl->kind = kind;
	jl->pmu = pmu;
}

static void jl_counter(void *ctx, const char *name, const char *alt,
		       const char *desc)
{
	struct ns_json_lister *jl = ctx;
	json *o = jobj("event");
	size_t len = desc ? strcspn(desc, "\n") : 0;
	char *first = desc ? strndup(desc, len) : NULL;

	jset(o, "kind", jstr(jl->kind));
	jset(o, "pmu", jstr(jl->pmu));
	jset(o, "name", jstr(name));
	jset(o, "alias", jstr(alt));
	jset(o, "description", jstr(first));
	free(first);
	jput(jl->out, o);
}

static void jl_note(void *ctx, const char *text)
{
	struct ns_json_lister *jl = ctx;
	json *o = jobj("note");

	jset(o, "note", jstr(text));
	jput(jl->out, o);
}

void ns_json_lister_init(struct ns_json_lister *jl, FILE *out)
{
	memset(jl, 0, sizeof(*jl));
	jl->out = out;
	jl->lister = (struct ns_counter_lister){
		.section = jl_section, .counter = jl_counter, .note = jl_note,
		.ctx = jl,
	};
}

void ns_json_version(FILE *out, const struct ns_build *b)
{
	json *o = jobj(NULL);

	jset(o, "version", jstr(b->version));
	jset(o, "abi", ju64(b->abi));
	jset(o, "file_format", ju64(b->file_format));
	jset(o, "libpfm4", jbool(b->libpfm4));
	jset(o, "json_c", jstr(b->json_c));
	jset(o, "zlib", jstr(b->zlib));
	jput(out, o);
}
