// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "stage/align.h"
#include "stage/join.h"

static const char *const why_names[NS_JW_MAX] = {
	[NS_JW_JOINED]		= "joined",
	[NS_JW_LOCAL]		= "local",
	[NS_JW_NO_WIRE]		= "no-wire",
	[NS_JW_NO_PEER]		= "no-peer",
	[NS_JW_NOT_SEEN]	= "not-seen",
	[NS_JW_AMBIGUOUS]	= "ambiguous",
	[NS_JW_DUPLICATE]	= "duplicate",
	[NS_JW_PARTIAL]		= "partial",
};

const char *ns_join_why_name(enum ns_join_why why)
{
	return why < NS_JW_MAX ? why_names[why] : "?";
}

void ns_join_init(struct ns_join *j)
{
	memset(j, 0, sizeof(*j));
}

void ns_join_free(struct ns_join *j)
{
	free(j->b);
	ns_join_init(j);
}

double ns_join_host_ns(const struct ns_join *j, unsigned int host,
		       uint64_t tsc)
{
	const struct ns_clock *c = &j->host[host].clock;
	double anchor = (double)(int64_t)(c->ref_ns - j->host[0].clock.ref_ns);

	if (!c->tsc_khz)
		return anchor;
	return anchor + (double)(int64_t)(tsc - c->ref_tsc) * 1e6 / c->tsc_khz;
}

double ns_join_offset_at(const struct ns_join *j, double t)
{
	return j->clock.offset_ns + j->clock.drift_ppm * 1e-6 *
	       (t - j->clock.t_mid);
}

/* The record the wire ends at: a send's last nic, a receive's first rx-nic. */
static int wire_record(const struct nsl_block *b, bool tx)
{
	int at = -1;

	for (int i = 0; i < b->nrec; i++) {
		if (b->rec[i].region == (tx ? NSL_R_NIC : NSL_R_RX_NIC)) {
			at = i;
			if (!tx)
				break;
		}
	}
	if (tx && at >= 0 && (b->rec[at].flags & NSL_RF_OPEN))
		return -1;	/* the hand-off is its start: known; but */
	return at;		/* an open nic never completed: no xmit */
}

/* Whether and where @k crosses a wire; its reason if not. */
static enum ns_join_why classify(struct ns_join *j, struct ns_jblock *k)
{
	const struct nsl_block *b = &k->b;
	uint32_t head = (uint32_t)b->nhlen + b->thlen;

	k->tx = b->dir == NSL_DIR_TX;
	if (b->flags & (NSL_BF_LOOPBACK | NSL_BF_FORWARDED))
		return NS_JW_LOCAL;
	if ((b->proto != IPPROTO_TCP && b->proto != IPPROTO_UDP) ||
	    !b->family || !b->thlen || b->len <= head ||
	    (k->tx && (b->flags & NSL_BF_NOXMIT)))
		return NS_JW_NO_WIRE;
	k->rec = wire_record(b, k->tx);
	if (k->rec < 0)
		return NS_JW_NO_WIRE;
	k->plen = b->len - head;
	k->t = ns_join_host_ns(j, k->host,
			       b->tsc0 + (uint64_t)b->rec[k->rec].start);
	return NS_JW_NOT_SEEN;
}

int ns_join_add(struct ns_join *j, unsigned int host, const struct ns_citem *ci)
{
	struct ns_jblock *k;

	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 1024;
		struct ns_jblock *p = realloc(j->b, cap * sizeof(*p));

		if (!p)
			return -1;
		j->b = p;
		j->cap = cap;
	}
	k = &j->b[j->n++];
	memset(k, 0, sizeof(*k));
	k->b = ci->it->block;
	memcpy(k->corr, ci->corr, sizeof(k->corr));
	k->host = host;
	k->peer = SIZE_MAX;
	j->host[host].blocks++;
	return 0;
}

/* ---- grouping by flow ---- */

static const uint8_t zero16[16];

static bool has_addr(const struct nsl_block *b)
{
	return memcmp(b->saddr, zero16, 16) || memcmp(b->daddr, zero16, 16);
}

/* The host that sent @k's packet. */
static unsigned int sender(const struct ns_jblock *k)
{
	return k->tx ? k->host : !k->host;
}

/* Flows first (and the sending host), then sequence, sends first, time. */
static int flow_cmp(const struct ns_jblock *a, const struct ns_jblock *b,
		    bool by_addr)
{
	int c;

	if (a->b.proto != b->b.proto)
		return a->b.proto < b->b.proto ? -1 : 1;
	if (a->b.family != b->b.family)
		return a->b.family < b->b.family ? -1 : 1;
	if (sender(a) != sender(b))
		return sender(a) < sender(b) ? -1 : 1;
	if (a->b.sport != b->b.sport)
		return a->b.sport < b->b.sport ? -1 : 1;
	if (a->b.dport != b->b.dport)
		return a->b.dport < b->b.dport ? -1 : 1;
	if (!by_addr)
		return 0;
	c = memcmp(a->b.saddr, b->b.saddr, 16);
	return c ? c : memcmp(a->b.daddr, b->b.daddr, 16);
}

static int order_cmp(const void *x, const void *y, void *ctx)
{
	const struct ns_join *j = ctx;
	const struct ns_jblock *a = &j->b[*(const size_t *)x];
	const struct ns_jblock *b = &j->b[*(const size_t *)y];
	int c = flow_cmp(a, b, j->by_addr);

	if (c)
		return c;
	if (a->b.proto == IPPROTO_TCP && a->b.tcp_seq != b->b.tcp_seq)
		return a->b.tcp_seq < b->b.tcp_seq ? -1 : 1;
	if (a->tx != b->tx)
		return a->tx ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t;
}


/* ---- pairs ---- */

/* Whether send @t carries the bytes of receive @r (a datagram: its length). */
static bool covers(const struct ns_jblock *t, const struct ns_jblock *r)
{
	uint32_t off = r->b.tcp_seq - t->b.tcp_seq;

	if (t->b.proto == IPPROTO_UDP)
		return t->plen == r->plen;
	return off < t->plen && off + r->plen <= t->plen;
}

/* Receive @r's wire time from send @t, ns, by the clock estimate. */
static double wire_ns(const struct ns_join *j, const struct ns_jblock *t,
		      const struct ns_jblock *r)
{
	if (t->host == 0)
		return r->t - ns_join_offset_at(j, t->t) - t->t;
	return r->t - (t->t - ns_join_offset_at(j, r->t));
}

/*
 * One flow's blocks, from one host to the other: its sends and its
 * receive blocks, each in the flow's order (TCP by sequence number, then
 * time; UDP by time); the longest send's payload.
 */
struct flow {
	size_t *tx, *rx;
	size_t ntx, nrx;
	uint32_t pmax;
	bool tcp;
};

/* A block's key in its flow's order: TCP's sequence number, UDP's time. */
static double key(const struct ns_join *j, size_t i, bool tcp)
{
	return tcp ? (double)j->b[i].b.tcp_seq : j->b[i].t;
}

/* The first of @a[0..n) whose key is @v or more. */
static size_t lower(const struct ns_join *j, const size_t *a, size_t n,
		    bool tcp, double v)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (key(j, a[mid], tcp) < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The receive blocks @t covers, in sequence order, into @out; how many. */
static size_t covered(const struct ns_join *j, const struct flow *f,
		      const struct ns_jblock *t, size_t *out)
{
	uint64_t end = (uint64_t)t->b.tcp_seq + t->plen;
	size_t m = 0;

	for (size_t i = lower(j, f->rx, f->nrx, true, t->b.tcp_seq);
	     i < f->nrx && j->b[f->rx[i]].b.tcp_seq < end; i++)
		if (covers(t, &j->b[f->rx[i]]))
			out[m++] = f->rx[i];
	return m;
}

/* Whether frames @r[0..m), in sequence order, tile send @t's bytes once. */
static bool tiles(const struct ns_join *j, const struct ns_jblock *t,
		  const size_t *r, size_t m)
{
	uint32_t next = t->b.tcp_seq;

	if (t->b.proto == IPPROTO_UDP)
		return m == 1;
	for (size_t i = 0; i < m; i++) {
		if (j->b[r[i]].b.tcp_seq != next)
			return false;
		next += j->b[r[i]].plen;
	}
	return m && next == t->b.tcp_seq + t->plen;
}

/* Whether another send of @f carries any of TCP send @t's bytes. */
static bool overlapped(const struct ns_join *j, const struct flow *f,
		       const struct ns_jblock *t)
{
	uint64_t from = t->b.tcp_seq >= f->pmax ? t->b.tcp_seq - f->pmax + 1 : 0;
	uint64_t end = (uint64_t)t->b.tcp_seq + t->plen;

	for (size_t i = lower(j, f->tx, f->ntx, true, (double)from);
	     i < f->ntx && j->b[f->tx[i]].b.tcp_seq < end; i++) {
		const struct ns_jblock *o = &j->b[f->tx[i]];

		if (o != t && (uint64_t)o->b.tcp_seq + o->plen > t->b.tcp_seq)
			return true;
	}
	return false;
}

static void join_pair(struct ns_join *j, size_t t, size_t r)
{
	if (j->b[t].why != NS_JW_JOINED) {
		j->b[t].why = NS_JW_JOINED;
		j->b[t].peer = r;
	}
	j->b[r].why = NS_JW_JOINED;
	j->b[r].peer = t;
}

/*
 * Without the clock: a TCP send that no other send of its flow overlaps
 * and whose bytes the receive blocks tile, each sequence number once.
 */
static void pass_exact(struct ns_join *j, const struct flow *f, size_t *tmp)
{
	if (!f->tcp)
		return;
	for (size_t i = 0; i < f->ntx; i++) {
		struct ns_jblock *t = &j->b[f->tx[i]];
		size_t m;

		if (overlapped(j, f, t))
			continue;
		m = covered(j, f, t, tmp);
		if (!tiles(j, t, tmp, m))
			continue;
		for (size_t k = 0; k < m; k++)
			join_pair(j, f->tx[i], tmp[k]);
	}
}

/*
 * The window a wire time must fall in, ns, per sending host; a
 * datagram's up to @udp_hi instead, if set (--join-window).
 */
struct window {
	double lo, hi[2], udp_hi;
	bool known[2];
};

static bool in_window(const struct window *w, unsigned int host, bool tcp,
		      double x)
{
	if (!tcp && w->udp_hi > 0)
		return x >= w->lo && x <= w->udp_hi;
	return w->known[host] && x >= w->lo && x <= w->hi[host];
}

/* Where in @f's sends @r's candidates start: TCP by bytes, UDP by time. */
static size_t first_candidate(const struct ns_join *j, const struct flow *f,
			      const struct window *w, const struct ns_jblock *r)
{
	unsigned int h = !r->host;
	double off = ns_join_offset_at(j, r->t), at;

	if (f->tcp)
		return lower(j, f->tx, f->ntx, true, r->b.tcp_seq >= f->pmax ?
			     r->b.tcp_seq - f->pmax + 1 : 0);
	/* the send's time on its own host: r's less the widest wire */
	at = (h ? r->t + off : r->t - off) -
	     (w->udp_hi > 0 ? w->udp_hi : w->hi[h]) - 1000;
	return lower(j, f->tx, f->ntx, false, at);
}

/* The one unjoined send of @f in @r's window; SIZE_MAX none, -2 several. */
static size_t candidate(const struct ns_join *j, const struct flow *f,
			const struct window *w, const struct ns_jblock *r)
{
	size_t found = SIZE_MAX;

	for (size_t i = first_candidate(j, f, w, r); i < f->ntx; i++) {
		const struct ns_jblock *t = &j->b[f->tx[i]];
		double x;

		if (f->tcp ? t->b.tcp_seq > r->b.tcp_seq : t->t > r->t + 1e12)
			break;
		if (t->why == NS_JW_JOINED || !covers(t, r))
			continue;
		x = wire_ns(j, t, r);
		if (!f->tcp && x < w->lo)
			break;	/* later sends: later still */
		if (!in_window(w, t->host, f->tcp, x))
			continue;
		if (found != SIZE_MAX)
			return SIZE_MAX - 1;
		found = f->tx[i];
	}
	return found;
}

/* A receive block and the send it picked. */
struct pick {
	size_t t, r;
};

static int pick_cmp(const void *x, const void *y, void *ctx)
{
	const struct ns_join *j = ctx;
	const struct pick *a = x, *b = y;
	const struct ns_jblock *ra = &j->b[a->r], *rb = &j->b[b->r];

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	if (ra->b.tcp_seq != rb->b.tcp_seq)
		return ra->b.tcp_seq < rb->b.tcp_seq ? -1 : 1;
	return ra->t < rb->t ? -1 : ra->t > rb->t;
}

/* Send @p[0].t and the receive blocks that picked it, @p[0..m). */
static void settle(struct ns_join *j, const struct pick *p, size_t m,
		   size_t *tmp)
{
	size_t n = 0;

	for (size_t k = 0; k < m; k++) {
		struct ns_jblock *r = &j->b[p[k].r];

		if (n && j->b[tmp[n - 1]].b.tcp_seq == r->b.tcp_seq &&
		    j->b[tmp[n - 1]].plen == r->plen)
			r->why = NS_JW_DUPLICATE;	/* a later copy */
		else
			tmp[n++] = p[k].r;
	}
	if (tiles(j, &j->b[p[0].t], tmp, n)) {
		for (size_t k = 0; k < n; k++)
			join_pair(j, p[0].t, tmp[k]);
		return;
	}
	j->b[p[0].t].why = NS_JW_PARTIAL;
	for (size_t k = 0; k < n; k++)
		j->b[tmp[k]].why = NS_JW_PARTIAL;
}

/*
 * Copies, by the clock: each unjoined receive block to the one send in
 * its window; a send picked by two copies of one frame joins the first,
 * the later one a duplicate; a TSO send whose frames do not tile is
 * partial.
 */
static void pass_clock(struct ns_join *j, const struct flow *f,
		       const struct window *w, struct pick *p, size_t *tmp)
{
	size_t m = 0;

	for (size_t i = 0; i < f->nrx; i++) {
		struct ns_jblock *r = &j->b[f->rx[i]];
		size_t t;

		if (r->why == NS_JW_JOINED)
			continue;
		t = candidate(j, f, w, r);
		if (t == SIZE_MAX - 1)
			r->why = NS_JW_AMBIGUOUS;
		else if (t != SIZE_MAX)
			p[m++] = (struct pick){ t, f->rx[i] };
	}
	qsort_r(p, m, sizeof(*p), pick_cmp, j);
	for (size_t i = 0, k; i < m; i = k) {
		for (k = i + 1; k < m && p[k].t == p[i].t; k++)
			;
		settle(j, p + i, k - i, tmp);
	}
}

/* ---- the whole ---- */

struct scratch {
	size_t *tx, *rx, *tmp;
	double *wire;
	struct pick *pick;
	struct ns_align_sample *smp;
	size_t nsmp;
	const struct window *w;
};

/* The flows in @idx (sorted), each to @fn. */
static void each_flow(struct ns_join *j, const size_t *idx, size_t n,
		      void (*fn)(struct ns_join *j, struct flow *f,
				 struct scratch *s),
		      struct scratch *s)
{
	for (size_t i = 0, k; i < n; i = k) {
		struct flow f = { .tx = s->tx, .rx = s->rx,
				  .tcp = j->b[idx[i]].b.proto == IPPROTO_TCP };

		for (k = i; k < n && !flow_cmp(&j->b[idx[i]], &j->b[idx[k]],
					       j->by_addr); k++) {
			const struct ns_jblock *b = &j->b[idx[k]];

			if (b->tx)
				f.tx[f.ntx++] = idx[k];
			else
				f.rx[f.nrx++] = idx[k];
			if (b->tx && b->plen > f.pmax)
				f.pmax = b->plen;
		}
		fn(j, &f, s);
	}
}

static void flow_exact(struct ns_join *j, struct flow *f, struct scratch *s)
{
	if (f->ntx && f->nrx) {
		pass_exact(j, f, s->tmp);
		return;
	}
	for (size_t k = 0; k < f->ntx; k++)
		j->b[f->tx[k]].why = NS_JW_NO_PEER;
	for (size_t k = 0; k < f->nrx; k++)
		j->b[f->rx[k]].why = NS_JW_NO_PEER;
}

static void flow_clock(struct ns_join *j, struct flow *f, struct scratch *s)
{
	if (f->ntx && f->nrx)
		pass_clock(j, f, s->w, s->pick, s->tmp);
}

static void add_sample(struct scratch *s, const struct ns_jblock *t,
		       const struct ns_jblock *r)
{
	struct ns_align_sample *x = &s->smp[s->nsmp++];

	x->dir = t->host;
	x->t = t->host ? r->t : t->t;
	x->d = r->t - t->t;
}

/*
 * No pair without the clock (UDP alone): a first estimate from the
 * flows that came through whole, in order and of the same lengths, the
 * k-th datagram sent taken for the k-th received; it only places the
 * window, every datagram is then decided by it.
 */
static void flow_order(struct ns_join *j, struct flow *f, struct scratch *s)
{
	if (f->tcp || !f->ntx || f->ntx != f->nrx)
		return;
	for (size_t k = 0; k < f->ntx; k++)
		if (j->b[f->tx[k]].plen != j->b[f->rx[k]].plen)
			return;
	for (size_t k = 0; k < f->ntx; k++)
		add_sample(s, &j->b[f->tx[k]], &j->b[f->rx[k]]);
}

/* The joined pairs as samples for the clock. */
static void joined_samples(const struct ns_join *j, struct scratch *s)
{
	s->nsmp = 0;
	for (size_t i = 0; i < j->n; i++)
		if (!j->b[i].tx && j->b[i].why == NS_JW_JOINED)
			add_sample(s, &j->b[j->b[i].peer], &j->b[i]);
}

static int double_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

/*
 * The window from the samples' wire times (the clock known): up to the
 * largest, or with @robust (the order's pairs, some maybe misplaced) the
 * 90th percentile.  The samples' d become their wire times.
 */
static void window_of(const struct ns_join *j, struct scratch *s,
		      bool robust, struct window *w)
{
	memset(w, 0, sizeof(*w));
	w->lo = -j->clock.uncert_ns - 1;
	w->udp_hi = j->window_ns;
	for (unsigned int h = 0; h < 2; h++) {
		size_t n = 0;

		for (size_t i = 0; i < s->nsmp; i++) {
			const struct ns_align_sample *x = &s->smp[i];
			double off = ns_join_offset_at(j, x->t);

			if (x->dir == h)
				s->wire[n++] = x->dir ? x->d + off : x->d - off;
		}
		if (!n)
			continue;
		qsort(s->wire, n, sizeof(double), double_cmp);
		w->hi[h] = s->wire[robust ? n * 9 / 10 : n - 1] +
			   j->clock.uncert_ns;
		w->known[h] = true;
	}
	for (int h = 0; h < 2; h++)
		if (!w->known[h] && w->known[!h]) {
			w->hi[h] = w->hi[!h];
			w->known[h] = true;
		}
}

/* The counts by host, direction and reason; the TSO sends. */
static void count(struct ns_join *j)
{
	memset(j->why, 0, sizeof(j->why));
	memset(j->joined, 0, sizeof(j->joined));
	memset(j->tso, 0, sizeof(j->tso));
	for (size_t i = 0; i < j->n; i++) {
		const struct ns_jblock *k = &j->b[i];

		j->why[k->host][k->tx][k->why]++;
		if (k->why != NS_JW_JOINED)
			continue;
		if (!k->tx)
			j->joined[sender(k)]++;
		else if (k->b.gso_segs > 1)
			j->tso[k->host]++;
	}
}

/* Flows by addresses only if every block that may join has them. */
static bool all_addr(const struct ns_join *j)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->b[i].why == NS_JW_NOT_SEEN && !has_addr(&j->b[i].b))
			return false;
	return true;
}

/* The blocks that may join, sorted by flow: their number. */
static size_t sorted(struct ns_join *j, size_t *idx)
{
	size_t n = 0;

	for (size_t i = 0; i < j->n; i++)
		if ((j->b[i].why = classify(j, &j->b[i])) == NS_JW_NOT_SEEN)
			idx[n++] = i;
	j->by_addr = all_addr(j);
	qsort_r(idx, n, sizeof(*idx), order_cmp, j);
	return n;
}

/*
 * Exact pairs, the clock from them (or from the order), the copies by
 * the clock; then once more with the window and clock of all the pairs.
 */
static void match(struct ns_join *j, size_t *idx, struct scratch *s)
{
	size_t n = sorted(j, idx);
	bool order = false;
	struct window w;

	each_flow(j, idx, n, flow_exact, s);
	joined_samples(j, s);
	ns_align(s->smp, s->nsmp, &j->clock);
	if (!j->clock.known) {
		s->nsmp = 0;
		each_flow(j, idx, n, flow_order, s);
		ns_align(s->smp, s->nsmp, &j->clock);
		order = true;
	}
	s->w = &w;
	for (int round = 0; round < 2; round++) {
		window_of(j, s, order && !round, &w);
		each_flow(j, idx, n, flow_clock, s);
		joined_samples(j, s);
		ns_align(s->smp, s->nsmp, &j->clock);
	}
	count(j);
}

int ns_join_match(struct ns_join *j)
{
	size_t n = j->n + 1, *idx = malloc(n * sizeof(*idx));
	struct scratch s = {
		.tx = malloc(n * sizeof(size_t)),
		.rx = malloc(n * sizeof(size_t)),
		.tmp = malloc(n * sizeof(size_t)),
		.pick = malloc(n * sizeof(struct pick)),
		.smp = malloc(n * sizeof(struct ns_align_sample)),
		.wire = malloc(n * sizeof(double)),
	};
	int ret = -1;

	if (idx && s.tx && s.rx && s.tmp && s.pick && s.smp && s.wire) {
		match(j, idx, &s);
		ret = 0;
	}
	free(idx);
	free(s.tx);
	free(s.rx);
	free(s.tmp);
	free(s.pick);
	free(s.smp);
	free(s.wire);
	return ret;
}

int64_t ns_join_tsc_offset(const struct ns_join *j, double offset_ns)
{
	const struct ns_clock *c0 = &j->host[0].clock, *c1 = &j->host[1].clock;
	double t = j->clock.t_mid;
	double tsc0 = t * c0->tsc_khz / 1e6;
	double tsc1 = (t + offset_ns - ns_join_host_ns(j, 1, c1->ref_tsc)) *
		      c1->tsc_khz / 1e6;

	return (int64_t)(c1->ref_tsc - c0->ref_tsc) + llround(tsc1 - tsc0);
}
