// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "lib/devname.h"
#include "source/decode.h"
#include "source/version.h"
#include "stage/join.h"
#include "view/chrome.h"
#include "view/flags.h"
#include "view/jsonv.h"
#include "view/markup.h"
#include "view/nest.h"

typedef struct json_object json;

enum { PID_SEND = 1, PID_RECEIVE = 2, PID_MARKS = 3 };
/* tid = cpu * TID_CPU + lane: a CPU's tracks side by side */
#define TID_CPU		1000

/* The tracks of one CPU on one path: where each one's last slice ends. */
struct lanes {
	unsigned int n;
	int64_t end[NS_CHROME_LANES];
};

struct side {
	struct lanes **cpu;	/* NULL until a part lands on that CPU */
	unsigned int ncpu;
};

/* A TCP segment as its headers name it: the same on both hosts. */
struct seg_key {
	uint8_t saddr[16], daddr[16];
	uint16_t family, sport, dport, pad;
	uint32_t seq;
};

/* Where an arrow starts or ends: inside a slice. */
struct anchor {
	int pid, tid;
	int64_t at;	/* ns */
};

struct pending {
	struct seg_key key;
	struct anchor end;
	bool used, send;
};

struct chrome {
	struct ns_sink sink;
	FILE *out;
	char *path;
	struct ns_acc *acc;	/* event names, calibration */
	struct ns_clock clock;	/* ns from the reference: ref_ns 0 */
	struct side side[2];	/* send, receive */
	uint8_t *mark_cpu;	/* markers seen per CPU (65536 CPUs) */
	struct pending *pending;
	bool live;		/* from /dev/ns: devices named (devname.h) */
	uint64_t events, flows, ordinal;
	uint64_t left_out;	/* parts with no free track */
	bool oom;
	bool joined;		/* -r twice: a process per host, not per path */
};

static const struct ns_sink_ops chrome_ops;

/* ---- writing ---- */

static json *ju64(uint64_t v)
{
	return json_object_new_uint64(v);
}

static void jset(json *o, const char *key, json *v)
{
	json_object_object_add(o, key, v);
}

/* @ns as µs with three decimals, the text exact. */
static json *jus(int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	char text[48];

	snprintf(text, sizeof(text), "%s%llu.%03llu", ns < 0 ? "-" : "",
		 (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
	return json_object_new_double_s((double)ns / 1000, text);
}

static void put(struct chrome *c, json *o)
{
	fputs(c->events++ ? ",\n" : "\n", c->out);
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					     JSON_C_TO_STRING_NOSLASHESCAPE),
	      c->out);
	json_object_put(o);
}

static json *event(const char *name, const char *cat, const char *ph,
		   int pid, int tid, int64_t ts)
{
	json *o = json_object_new_object();

	jset(o, "name", ns_json_str(name));
	if (cat)
		jset(o, "cat", ns_json_str(cat));
	jset(o, "ph", json_object_new_string(ph));
	jset(o, "ts", jus(ts));
	jset(o, "pid", json_object_new_int(pid));
	jset(o, "tid", json_object_new_int(tid));
	return o;
}

static int64_t ns_at(const struct chrome *c, uint64_t tsc)
{
	return ns_clock_ns(&c->clock, tsc);
}

/* ---- tracks ---- */

static struct lanes *lanes_of(struct chrome *c, bool receive, unsigned int cpu)
{
	struct side *s = &c->side[receive];

	if (cpu >= s->ncpu) {
		unsigned int n = cpu + 1;
		struct lanes **p = realloc(s->cpu, n * sizeof(*p));

		if (!p)
			return NULL;
		memset(p + s->ncpu, 0, (n - s->ncpu) * sizeof(*p));
		s->cpu = p;
		s->ncpu = n;
	}
	if (!s->cpu[cpu])
		s->cpu[cpu] = calloc(1, sizeof(**s->cpu));
	return s->cpu[cpu];
}

/* The first track of @cpu free from @from on, taken up to @to; -1 if none. */
static int place(struct chrome *c, bool receive, unsigned int cpu,
		 int64_t from, int64_t to)
{
	struct lanes *l = lanes_of(c, receive, cpu);
	unsigned int i;

	if (!l) {
		c->oom = true;
		return -1;
	}
	for (i = 0; i < l->n; i++)
		if (l->end[i] <= from)
			break;
	if (i == NS_CHROME_LANES)
		return -1;
	if (i == l->n)
		l->n++;
	l->end[i] = to;
	return (int)(cpu * TID_CPU + i);
}

/* ---- slices ---- */

/* The packet's device path, only where the block names devices. */
static void dev_path_arg(const struct chrome *c, json *args,
			 const struct nsl_block *b)
{
	char path[NS_DEV_PATH];

	if (!b->ndev)
		return;
	ns_dev_path(b, c->live, path, sizeof(path));
	jset(args, "dev_path", ns_json_str(path));
}

static void block_args(const struct chrome *c, json *args,
		       const struct nsl_block *b)
{
	char buf[128];

	ns_block_flow_text(b, buf, sizeof(buf));
	jset(args, "dir", json_object_new_string(b->dir == NSL_DIR_RX ? "rx" : "tx"));
	jset(args, "flow", ns_json_str(buf));
	jset(args, "conn", ju64(b->conn));
	jset(args, "tcp_seq", ju64(b->tcp_seq));
	jset(args, "len", ju64(b->len));
	jset(args, "segs", ju64(b->gso_segs));
	ns_block_flags(b->flags, buf, sizeof(buf));
	jset(args, "block_flags", ns_json_names(buf));
	jset(args, "ring_cpu", ju64(b->hdr.cpu));
	jset(args, "seq", ju64(b->seq));
	dev_path_arg(c, args, b);
}

static json *counters(const struct chrome *c, const uint64_t *count,
		      unsigned int n)
{
	json *o = json_object_new_object();
	char lbl[16];

	for (unsigned int e = 0; e < n; e++) {
		const char *name = ns_acc_event_label(c->acc, e, lbl, sizeof(lbl));
		json *k = ns_json_str(name);

		/* a key must be a valid string too: the repaired name */
		jset(o, k ? json_object_get_string(k) : lbl, ju64(count[e]));
		json_object_put(k);
	}
	return o;
}

static json *record_args(const struct chrome *c, const struct ns_citem *ci,
			 const struct ns_nest *n, unsigned int k)
{
	const struct nsl_block *b = &ci->it->block;
	const struct nsl_record *r = &b->rec[k];
	json *args = json_object_new_object();
	char buf[96], dev[NS_DEV_TEXT];

	jset(args, "block", ju64(c->ordinal));
	jset(args, "record", ju64(k));
	/* a layer runs on several devices of a VLAN or a veth: which one */
	if (ns_dev_record_text(b, k, c->live, dev, sizeof(dev)))
		jset(args, "dev", ns_json_str(dev));
	jset(args, "depth", ju64(r->depth));
	jset(args, "cpu", ju64(r->cpu));
	jset(args, "raw_ticks", ju64(r->ticks));
	jset(args, "raw_us", ns_json_fixed(ns_acc_us(c->acc, r->ticks), 3));
	if (ns_acc_corrected(c->acc))
		jset(args, "corrected_us",
		     ns_json_fixed(ns_acc_us(c->acc, ci->corr[k].ticks), 3));
	if (r->nmerged > 1)
		jset(args, "intervals", ju64(r->nmerged));
	ns_record_flags(r->flags, buf, sizeof(buf));
	jset(args, "flags", ns_json_names(buf));
	if (n->span[k].cut)
		jset(args, "drawn_shorter_to_nest", json_object_new_boolean(1));
	if (b->nevents) {
		uint64_t raw[NSL_MAX_EVENTS];

		for (unsigned int e = 0; e < b->nevents; e++)
			raw[e] = r->count[e];	/* __u64 is another type */
		jset(args, "counters", counters(c, raw, b->nevents));
		if (ns_acc_corrected(c->acc))
			jset(args, "counters_corrected",
			     counters(c, ci->corr[k].count, b->nevents));
	}
	if (!n->span[k].level)
		block_args(c, args, b);
	return args;
}

static void slice(struct chrome *c, const struct ns_citem *ci,
		  const struct ns_nest *n, unsigned int k, int pid, int tid)
{
	const struct nsl_block *b = &ci->it->block;
	const struct ns_span *s = &n->span[k];
	int64_t from = ns_at(c, b->tsc0 + s->start), to = ns_at(c, b->tsc0 + s->end);
	unsigned int region = b->rec[k].region;
	json *o = event(ns_region_name(region), ns_region_layer(region), "X",
			pid, tid, from);

	jset(o, "dur", jus(to - from));
	jset(o, "args", record_args(c, ci, n, k));
	put(c, o);
}

/* ---- arrows ---- */

static void arrow(struct chrome *c, const struct anchor *from,
		  const struct anchor *to)
{
	json *s = event("packet", "packet", "s", from->pid, from->tid, from->at);
	json *f = event("packet", "packet", "f", to->pid, to->tid, to->at);

	jset(s, "id", ju64(c->flows));
	jset(f, "id", ju64(c->flows));
	jset(f, "bp", json_object_new_string("e"));
	c->flows++;
	put(c, s);
	put(c, f);
}

static bool seg_key(const struct nsl_block *b, struct seg_key *k)
{
	if (!b->family || b->proto != 6)
		return false;
	memset(k, 0, sizeof(*k));
	memcpy(k->saddr, b->saddr, 16);
	memcpy(k->daddr, b->daddr, 16);
	k->family = b->family;
	k->sport = b->sport;
	k->dport = b->dport;
	k->seq = b->tcp_seq;
	return true;
}

static size_t slot_of(const struct seg_key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h & (NS_CHROME_PENDING - 1);
}

/*
 * One end of a segment's way between two blocks: an arrow if the other
 * end waits in its slot (a send before the receive), else it waits
 * there itself, in place of whatever did.
 */
static void segment_end(struct chrome *c, const struct nsl_block *b,
			const struct anchor *at, bool send)
{
	struct seg_key k;
	struct pending *p;

	if (!c->pending || !seg_key(b, &k))
		return;
	p = &c->pending[slot_of(&k)];
	if (p->used && p->send != send && !memcmp(&p->key, &k, sizeof(k)) &&
	    (send ? at->at <= p->end.at : p->end.at <= at->at)) {
		arrow(c, send ? at : &p->end, send ? &p->end : at);
		p->used = false;
		return;
	}
	*p = (struct pending){ .key = k, .end = *at, .used = true, .send = send };
}

/* ---- blocks ---- */

struct part_place {
	bool drawn;
	struct anchor first, last;	/* mid of its first, last outer slice */
};

static int64_t mid(const struct chrome *c, const struct nsl_block *b,
		   const struct ns_span *s)
{
	int64_t from = ns_at(c, b->tsc0 + s->start);

	return from + (ns_at(c, b->tsc0 + s->end) - from) / 2;
}

/*
 * Whether record @k is drawn as a slice: not OPEN, and not a join's
 * wire, which is no host's (the arrow from the sender to the receiver
 * stands for it).
 */
static bool drawn(const struct nsl_block *b, const struct ns_nest *n,
		  unsigned int k)
{
	return !n->span[k].open && b->rec[k].region != NS_R_WIRE;
}

/*
 * The track set a part goes on: its path's (send 0, receive 1), or in
 * a join its host's (the sender's or the receiver's).
 */
static bool side_of(const struct ns_citem *ci, const struct ns_part *part)
{
	if (ci->join)
		return part->receive ? ci->join->to : ci->join->from;
	return part->receive;
}

/* Part @i of @n on a track, its slices written; false if not drawn. */
static bool draw_part(struct chrome *c, const struct ns_citem *ci,
		      const struct ns_nest *n, unsigned int i,
		      struct part_place *pl)
{
	const struct nsl_block *b = &ci->it->block;
	const struct ns_part *part = &n->part[i];
	bool side = side_of(ci, part);
	int pid = side ? PID_RECEIVE : PID_SEND, tid, first = -1, last = -1;
	uint64_t from = UINT64_MAX, to = 0;

	c->joined |= ci->join != NULL;
	for (unsigned int k = part->first; k < part->end; k++) {
		if (!drawn(b, n, k) || n->span[k].level)
			continue;
		first = first < 0 ? (int)k : first;
		last = (int)k;
		from = n->span[k].start < from ? n->span[k].start : from;
		to = n->span[k].end > to ? n->span[k].end : to;
	}
	if (first < 0)
		return false;	/* OPEN records only: no slice */
	tid = place(c, side, b->rec[part->first].cpu,
		    ns_at(c, b->tsc0 + from), ns_at(c, b->tsc0 + to));
	if (tid < 0) {
		c->left_out++;
		return false;
	}
	for (unsigned int k = part->first; k < part->end; k++)
		if (drawn(b, n, k))
			slice(c, ci, n, k, pid, tid);
	pl->first = (struct anchor){ pid, tid, mid(c, b, &n->span[first]) };
	pl->last = (struct anchor){ pid, tid, mid(c, b, &n->span[last]) };
	return true;
}

static void block(struct chrome *c, const struct ns_citem *ci)
{
	const struct nsl_block *b = &ci->it->block;
	struct part_place pl[NSL_MAX_RECORDS];
	struct ns_nest n;

	ns_nest_block(b, &n);
	for (unsigned int i = 0; i < n.nparts; i++) {
		pl[i].drawn = draw_part(c, ci, &n, i, &pl[i]);
		/* the packet went from one path to the other inside the block */
		if (i && pl[i].drawn && pl[i - 1].drawn)
			arrow(c, &pl[i - 1].last, &pl[i].first);
	}
	if (n.nparts && pl[0].drawn && n.part[0].receive)
		segment_end(c, b, &pl[0].first, false);
	if (n.nparts && pl[n.nparts - 1].drawn && !n.part[n.nparts - 1].receive)
		segment_end(c, b, &pl[n.nparts - 1].last, true);
	c->ordinal++;
}

/* ---- markers ---- */

static void mark(struct chrome *c, json *o, uint32_t cpu, json *args)
{
	jset(o, "s", json_object_new_string("t"));
	jset(o, "args", args);
	put(c, o);
	if (cpu < 65536)
		c->mark_cpu[cpu] = 1;
}

static void loss(struct chrome *c, const struct nsl_loss *l)
{
	json *args = json_object_new_object();
	char name[64];

	snprintf(name, sizeof(name), "%llu items lost", (unsigned long long)l->lost);
	jset(args, "lost", ju64(l->lost));
	jset(args, "first_seq", ju64(l->first_seq));
	mark(c, event(name, "loss", "i", PID_MARKS, (int)(l->hdr.cpu & 0xffff),
		      ns_at(c, l->tsc)), l->hdr.cpu, args);
}

static void magnet_event(struct chrome *c, const struct nsl_event_rec *ev)
{
	json *args = json_object_new_object();
	char buf[64];

	jset(args, "conn", ju64(ev->conn));
	jset(args, "bytes", ju64(ev->bytes));
	ns_event_flags(ev->flags, buf, sizeof(buf));
	jset(args, "flags", ns_json_names(buf));
	jset(args, "seq", ju64(ev->seq));
	mark(c, event(ns_event_type_name(ev->type), "magnet", "i", PID_MARKS,
		      (int)(ev->hdr.cpu & 0xffff), ns_at(c, ev->tsc)),
	     ev->hdr.cpu, args);
}

static enum ns_flow chrome_item(struct ns_sink *s, const struct ns_citem *ci)
{
	struct chrome *c = (struct chrome *)s;

	switch (ci->it->type) {
	case NS_ITEM_BLOCK:
		block(c, ci);
		break;
	case NS_ITEM_LOSS:
		loss(c, &ci->it->loss);
		break;
	case NS_ITEM_EVENT:
		magnet_event(c, &ci->it->event);
		break;
	default:
		break;
	}
	return NS_FLOW_MORE;
}

/* ---- metadata, at the end ---- */

static void meta(struct chrome *c, const char *what, int pid, int tid,
		 const char *key, json *value)
{
	json *o = event(what, NULL, "M", pid, tid, 0);
	json *args = json_object_new_object();

	jset(args, key, value);
	jset(o, "args", args);
	put(c, o);
}

static void name_process(struct chrome *c, int pid, const char *name)
{
	meta(c, "process_name", pid, 0, "name", ns_json_str(name));
	meta(c, "process_sort_index", pid, 0, "sort_index", json_object_new_int(pid));
}

static void name_thread(struct chrome *c, int pid, int tid, const char *name)
{
	meta(c, "thread_name", pid, tid, "name", ns_json_str(name));
	meta(c, "thread_sort_index", pid, tid, "sort_index", json_object_new_int(tid));
}

static void name_side(struct chrome *c, bool receive)
{
	const struct side *s = &c->side[receive];
	int pid = receive ? PID_RECEIVE : PID_SEND;
	bool named = false;
	char name[64];

	for (unsigned int cpu = 0; cpu < s->ncpu; cpu++) {
		for (unsigned int i = 0; s->cpu[cpu] && i < s->cpu[cpu]->n; i++) {
			if (!named)
				name_process(c, pid, c->joined ? (receive ?
					     "host 1 (the second file)" :
					     "host 0 (the first file)") :
					     receive ? "receive path (rx regions)" :
					     "send path (tx regions)");
			named = true;
			if (i)
				snprintf(name, sizeof(name), "cpu %u, overlap %u", cpu, i);
			else
				snprintf(name, sizeof(name), "cpu %u", cpu);
			name_thread(c, pid, (int)(cpu * TID_CPU + i), name);
		}
	}
}

static void name_marks(struct chrome *c)
{
	bool named = false;
	char name[32];

	for (unsigned int cpu = 0; cpu < 65536; cpu++) {
		if (!c->mark_cpu[cpu])
			continue;
		if (!named)
			name_process(c, PID_MARKS, "MAGNeT event records and losses");
		named = true;
		snprintf(name, sizeof(name), "cpu %u", cpu);
		name_thread(c, PID_MARKS, (int)cpu, name);
	}
}

static int chrome_finish(struct ns_sink *s, char *why, size_t len)
{
	struct chrome *c = (struct chrome *)s;
	int ret;

	if (!c->out)
		return 0;
	name_side(c, false);
	name_side(c, true);
	name_marks(c);
	fputs("\n]}\n", c->out);
	ret = ns_view_close(c->out, c->path, why, len);
	c->out = NULL;
	if (!ret && (c->left_out || c->oom)) {
		snprintf(why, len, "%s: %llu parts of blocks left out (more than %d overlapping on one CPU)%s",
			 c->path, (unsigned long long)c->left_out, NS_CHROME_LANES,
			 c->oom ? "; out of memory" : "");
		ret = -1;
	}
	return ret;
}

static void chrome_free(struct ns_sink *s)
{
	struct chrome *c = (struct chrome *)s;

	if (c->out && c->out != stdout)
		fclose(c->out);
	for (int side = 0; side < 2; side++) {
		for (unsigned int cpu = 0; cpu < c->side[side].ncpu; cpu++)
			free(c->side[side].cpu[cpu]);
		free(c->side[side].cpu);
	}
	free(c->mark_cpu);
	free(c->pending);
	free(c->path);
	free(c);
}

static const struct ns_sink_ops chrome_ops = {
	.item	= chrome_item,
	.finish	= chrome_finish,
	.free	= chrome_free,
};

/* What a reader needs to know of the times and values. */
static json *other_data(const struct chrome *c, const char *source,
			const struct nsl_info *info)
{
	struct ns_clock wall;
	json *o = json_object_new_object();
	char buf[192];

	ns_clock_from_info(&wall, info);
	jset(o, "source", ns_json_str(source));
	jset(o, "nsdump", json_object_new_string(NSDUMP_VERSION));
	jset(o, "tsc_khz", ju64(info->tsc_khz));
	jset(o, "ts_zero_tsc", ju64(info->ref_tsc));
	jset(o, "ts_zero_realtime_ns", ju64(info->ref_realtime_ns));
	ns_clock_format(&wall, info->ref_tsc, buf, sizeof(buf));
	jset(o, "ts_zero_wall_clock", ns_json_str(info->ref_realtime_ns ? buf : NULL));
	ns_acc_correction(c->acc, buf, sizeof(buf));
	jset(o, "values", ns_json_str(buf));
	jset(o, "tsc", json_object_new_string("rdtsc, not serialising; slices at the raw readings, durations in args"));
	return o;
}

static void header(struct chrome *c, const char *source,
		   const struct nsl_info *info)
{
	json *o = other_data(c, source, info);

	fprintf(c->out, "{\"displayTimeUnit\":\"ns\",\"otherData\":%s,\"traceEvents\":[",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
					       JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

struct ns_sink *ns_chrome_open(const char *path, struct ns_pipeline *p,
			       const char *source, const struct nsl_info *info,
			       bool live, char *why, size_t len)
{
	struct chrome *c = calloc(1, sizeof(*c));

	if (!c || !(c->path = strdup(path)) ||
	    !(c->mark_cpu = calloc(65536, 1)) ||
	    !(c->pending = calloc(NS_CHROME_PENDING, sizeof(*c->pending)))) {
		snprintf(why, len, "--export: out of memory");
		if (c)
			chrome_free(&c->sink);
		return NULL;
	}
	c->sink.ops = &chrome_ops;
	c->acc = &p->acc;
	c->live = live;
	c->clock = (struct ns_clock){ .ref_tsc = info->ref_tsc,
				      .tsc_khz = info->tsc_khz };
	c->out = ns_view_open(path, why, len);
	if (!c->out) {
		chrome_free(&c->sink);
		return NULL;
	}
	header(c, source, info);
	return &c->sink;
}
