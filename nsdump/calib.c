// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "calib.h"

int ns_calib_alloc(struct ns_calib_set *cs, uint32_t ncpus)
{
	memset(cs, 0, sizeof(*cs));
	if (!ncpus)
		return 0;
	cs->cpu = calloc(ncpus, sizeof(*cs->cpu));
	cs->valid = calloc(ncpus, sizeof(*cs->valid));
	if (!cs->cpu || !cs->valid) {
		ns_calib_free(cs);
		return -1;
	}
	cs->ncpus = ncpus;
	return 0;
}

void ns_calib_free(struct ns_calib_set *cs)
{
	free(cs->cpu);
	free(cs->valid);
	cs->cpu = NULL;
	cs->valid = NULL;
	cs->ncpus = 0;
}

void ns_calib_put(struct ns_calib_set *cs, const struct nsl_calib *c)
{
	if (c->cpu >= cs->ncpus)
		return;
	cs->cpu[c->cpu] = *c;
	if (cs->cpu[c->cpu].nevents > NSL_MAX_EVENTS)
		cs->cpu[c->cpu].nevents = NSL_MAX_EVENTS;
	cs->valid[c->cpu] = true;
}

uint32_t ns_calib_count(const struct ns_calib_set *cs)
{
	uint32_t n = 0;

	for (uint32_t i = 0; cs && i < cs->ncpus; i++)
		n += cs->valid[i];
	return n;
}

const struct nsl_calib *ns_calib_get(const struct ns_calib_set *cs,
				     uint32_t cpu)
{
	if (!cs)
		return NULL;
	if (cpu < cs->ncpus && cs->valid[cpu])
		return &cs->cpu[cpu];
	for (uint32_t i = 0; i < cs->ncpus; i++)
		if (cs->valid[i])
			return &cs->cpu[i];
	return NULL;
}

void ns_calib_read_model(struct ns_calib_set *cs, const char *cpuinfo)
{
	FILE *f = fopen(cpuinfo, "r");
	char line[256];

	cs->model[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = 0;
		snprintf(cs->model, sizeof(cs->model), "%s", colon);
		break;
	}
	fclose(f);
}

/* ---- correction ---- */

/*
 * The kernel appends a record at its first START, with the number of
 * records then open as its depth.  A later interval merges into the last
 * record; when TCP folds one skb's measurements into another (__nsl_eat,
 * before transmission, inside the still open write) into the record of
 * the same region and depth, or appended.  Either way a merge stays
 * within the run of its enclosing record, so the records started while
 * record @i was open are the run after it of greater depth, whichever of
 * its intervals they fall in; for a record of one interval (or a GAP,
 * whose waits nothing can start in) the time window bounds them too.
 */
bool ns_rec_inside(const struct nsl_block *b, unsigned int i, unsigned int j,
		   bool whole)
{
	const struct nsl_record *outer, *in;
	bool one_interval;

	if (j <= i || j >= b->nrec || j >= NSL_MAX_RECORDS)
		return false;
	outer = &b->rec[i];
	in = &b->rec[j];
	one_interval = outer->nmerged <= 1 || (outer->flags & NSL_RF_GAP);
	for (unsigned int k = i + 1; k <= j; k++)
		if (b->rec[k].depth <= outer->depth)
			return false;
	if (in->start < outer->start)
		return false;
	if (!one_interval)
		return true;
	if (in->start - outer->start >= outer->ticks)
		return false;
	return !whole || in->ticks <= outer->ticks - (in->start - outer->start);
}

uint32_t ns_nested_pairs(const struct nsl_block *b, unsigned int i)
{
	uint32_t k = 0;

	/*
	 * A nested record that never stopped ran its START but not
	 * necessarily its STOP inside: it is not counted, so the correction
	 * never takes away more than certainly ran.
	 */
	for (unsigned int j = i + 1; j < b->nrec && j < NSL_MAX_RECORDS; j++) {
		const struct nsl_record *in = &b->rec[j];

		/* A GAP record ran no macros: it costs nothing. */
		if ((in->flags & (NSL_RF_OPEN | NSL_RF_GAP)) ||
		    !ns_rec_inside(b, i, j, false))
			continue;
		k += in->nmerged ? in->nmerged : 1;
	}
	return k;
}

/* @raw - @cost, clamped at 0; *clamped says whether it was. */
static uint64_t subtract(uint64_t raw, uint64_t cost, bool *clamped)
{
	*clamped = cost > raw;
	return *clamped ? 0 : raw - cost;
}

void ns_correct_block(const struct ns_calib_set *cs, const struct nsl_block *b,
		      struct ns_rec_corr out[NSL_MAX_RECORDS])
{
	for (unsigned int i = 0; i < b->nrec && i < NSL_MAX_RECORDS; i++) {
		const struct nsl_record *rec = &b->rec[i];
		const struct nsl_calib *c = ns_calib_get(cs, rec->cpu);
		struct ns_rec_corr *o = &out[i];
		uint64_t intervals = rec->nmerged ? rec->nmerged : 1;
		bool clamped;

		memset(o, 0, sizeof(*o));
		o->k = ns_nested_pairs(b, i);
		o->ticks = rec->ticks;
		memcpy(o->count, rec->count, sizeof(o->count));
		if (!c || (rec->flags & (NSL_RF_OPEN | NSL_RF_GAP)))
			continue;
		o->ticks = subtract(rec->ticks,
				    intervals * c->cost[NSL_C_NSO].ticks +
				    o->k * c->cost[NSL_C_NSA].ticks,
				    &o->ticks_clamped);
		for (unsigned int e = 0; e < b->nevents && e < c->nevents; e++) {
			o->count[e] = subtract(rec->count[e],
					       intervals * c->cost[NSL_C_NSO].count[e] +
					       o->k * c->cost[NSL_C_NSA].count[e],
					       &clamped);
			if (clamped)
				o->count_clamped |= 1u << e;
		}
	}
}

/* ---- --calibrate ---- */

static const struct {
	const char *macro, *symbol, *what;
} cost_rows[NSL_C_MAX] = {
	[NSL_C_NSI] = { "NSI", "tau_alpha", "NET_SLICE_INIT" },
	[NSL_C_NSS] = { "NSS", "-", "NET_SLICE_START" },
	[NSL_C_NST] = { "NST", "-", "NET_SLICE_STOP" },
	[NSL_C_NSE] = { "NSE", "tau_gamma", "NET_SLICE_EXIT" },
	[NSL_C_NSO] = { "NSO", "tau_o", "empty START..STOP as recorded" },
	[NSL_C_NSA] = { "NSA", "tau_beta", "a START/STOP pair, seen around it" },
};

static double ticks_ns(const struct ns_calib_set *cs, double ticks)
{
	return cs->tsc_khz ? ticks * 1e6 / cs->tsc_khz : 0;
}

/* Do CPUs @a and @b differ in some cost by more than their spread? */
static bool differ(const struct nsl_calib *a, const struct nsl_calib *b)
{
	for (int m = 0; m < NSL_C_MAX; m++) {
		double x = a->cost[m].ticks, y = b->cost[m].ticks;
		double cv = (a->cost[m].cv_ppm > b->cost[m].cv_ppm ?
			     a->cost[m].cv_ppm : b->cost[m].cv_ppm) / 1e6;
		double ref = x > y ? x : y;

		if (ref > 0 && fabs(x - y) / ref > cv)
			return true;
	}
	return false;
}

static void print_rows(FILE *out, const struct ns_calib_set *cs,
		       const struct nsl_calib *c, const char *const *names,
		       unsigned int nevents)
{
	char lbl[16];

	fprintf(out, "%-5s %-10s %10s %8s %10s %7s %8s", "macro", "symbol",
		"ns", "ticks", "min ns", "CV %", "samples");
	for (unsigned int e = 0; e < nevents; e++) {
		snprintf(lbl, sizeof(lbl), "ev%u", e);
		fprintf(out, " %14s", names && names[e] ? names[e] : lbl);
	}
	fprintf(out, "  %s\n", "what");
	for (int m = 0; m < NSL_C_MAX; m++) {
		const struct nsl_cost *k = &c->cost[m];

		fprintf(out, "%-5s %-10s %10.1f %8llu %10.1f %7.2f %8u",
			cost_rows[m].macro, cost_rows[m].symbol,
			ticks_ns(cs, k->ticks), (unsigned long long)k->ticks,
			ticks_ns(cs, k->min), k->cv_ppm / 1e4, k->samples);
		for (unsigned int e = 0; e < nevents; e++) {
			if (e < c->nevents)
				fprintf(out, " %14llu",
					(unsigned long long)k->count[e]);
			else
				fprintf(out, " %14s", "-");
		}
		fprintf(out, "  %s\n", cost_rows[m].what);
	}
}

void ns_calib_print(FILE *out, const struct ns_calib_set *cs,
		    const char *const *names, unsigned int nevents)
{
	const struct nsl_calib *first = ns_calib_get(cs, 0);
	uint32_t n = ns_calib_count(cs);
	bool per_cpu = false;

	fprintf(out, "# NetSlice macro costs (Table 2) on %s, tsc_khz %u",
		cs->model[0] ? cs->model : "an unknown CPU", cs->tsc_khz);
	if (cs->tsc_khz)
		fprintf(out, " (1 tick = %.3f ns)", 1e6 / cs->tsc_khz);
	fputc('\n', out);
	if (!first) {
		fprintf(out, "# no calibration\n");
		return;
	}
	for (uint32_t i = 0; i < cs->ncpus; i++)
		if (cs->valid[i] && differ(first, &cs->cpu[i]))
			per_cpu = true;
	fprintf(out, "# medians over the samples kept per CPU; CV = stddev / mean\n");
	if (!per_cpu) {
		fprintf(out, "# %u CPU%s measured, all within their CV of CPU %u: one set shown\n",
			n, n == 1 ? "" : "s", first->cpu);
		print_rows(out, cs, first, names, nevents);
		return;
	}
	fprintf(out, "# %u CPUs measured; they differ by more than their CV: one set per CPU\n",
		n);
	for (uint32_t i = 0; i < cs->ncpus; i++) {
		if (!cs->valid[i])
			continue;
		fprintf(out, "cpu %u\n", i);
		print_rows(out, cs, &cs->cpu[i], names, nevents);
	}
}

static void range(const struct ns_calib_set *cs, int m, char *buf, size_t len)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (uint32_t i = 0; i < cs->ncpus; i++) {
		if (!cs->valid[i])
			continue;
		if (cs->cpu[i].cost[m].ticks < lo)
			lo = cs->cpu[i].cost[m].ticks;
		if (cs->cpu[i].cost[m].ticks > hi)
			hi = cs->cpu[i].cost[m].ticks;
	}
	if (lo == hi)
		snprintf(buf, len, "%.1fns", ticks_ns(cs, lo));
	else
		snprintf(buf, len, "%.1f..%.1fns", ticks_ns(cs, lo),
			 ticks_ns(cs, hi));
}

void ns_calib_summary(const struct ns_calib_set *cs, char *buf, size_t len)
{
	char o[48], b[48];

	range(cs, NSL_C_NSO, o, sizeof(o));
	range(cs, NSL_C_NSA, b, sizeof(b));
	snprintf(buf, len, "tau_o=%s, tau_beta=%s", o, b);
}

/* ---- the round trip (formula 5) ---- */

/*
 * What is derived.  In a ping-pong (lat_tcp: the client writes a
 * message, the server reads it and writes one back, the client reads it,
 * again), each message is one or more skbs, and each skb one block whose
 * tsc0 is the TSC at its NSI in tcp_sendmsg.  Order all blocks by tsc0
 * (the TSC is synchronised across CPUs) and cut the sequence into runs of
 * blocks of one sender (conn, dir); retransmissions neither start nor
 * cut a run.  A sample runs from the first block of a run to the first
 * block of that sender's next run, with the other side's run in between:
 * write to write, one user-level round trip, raw
 *
 *   T' = tsc0(next run of the sender) - tsc0(this run)
 *
 * Formula 5 then takes away what the macros put into that interval:
 *
 *   T = T' - sum over the blocks b with tsc0 in [start, end) of
 *            (tau_alpha + tau_gamma + K_b tau_beta)
 *
 * with K_b the START/STOP pairs of block b (its records, nmerged each;
 * OPEN records not counted), tau_alpha of the CPU of its first record,
 * tau_gamma of the CPU that emitted it, tau_beta of each record's CPU.
 * The first NSI is counted once: its part after the TSC read is inside,
 * the closing NSI's part before it is too.  This assumes every macro of
 * such a block ran inside the interval, true of a loopback ping-pong
 * whose skbs are freed once the peer has read them, and one ping-pong
 * at a time.  A sample with a loss item inside it is dropped (a block
 * may be missing from it).
 */

void ns_rtt_init(struct ns_rtt *t)
{
	memset(t, 0, sizeof(*t));
	ns_stats_init(&t->raw, 0);
	ns_stats_init(&t->corrected, 0);
}

void ns_rtt_free(struct ns_rtt *t)
{
	free(t->b);
	free(t->loss_tsc);
	ns_stats_free(&t->raw);
	ns_stats_free(&t->corrected);
	t->b = NULL;
	t->loss_tsc = NULL;
}

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
	void *q;
	size_t c;

	if (n < *cap)
		return true;
	c = *cap ? *cap * 2 : 1024;
	q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

uint64_t ns_block_overhead(const struct ns_calib_set *cs,
			   const struct nsl_block *b)
{
	const struct nsl_calib *init, *exit_c;
	uint64_t sum;

	init = ns_calib_get(cs, b->nrec ? b->rec[0].cpu : b->hdr.cpu);
	exit_c = ns_calib_get(cs, b->hdr.cpu);
	if (!init || !exit_c)
		return 0;
	sum = init->cost[NSL_C_NSI].ticks + exit_c->cost[NSL_C_NSE].ticks;
	for (unsigned int i = 0; i < b->nrec; i++) {
		const struct nsl_calib *c = ns_calib_get(cs, b->rec[i].cpu);

		if (b->rec[i].flags & NSL_RF_OPEN)
			continue;
		sum += (uint64_t)(b->rec[i].nmerged ? b->rec[i].nmerged : 1) *
		       c->cost[NSL_C_NSA].ticks;
	}
	return sum;
}

void ns_rtt_block(struct ns_rtt *t, const struct ns_calib_set *cs,
		  const struct nsl_block *b)
{
	struct ns_rtt_block *x;

	if (!grow((void **)&t->b, &t->cap, t->n, sizeof(*t->b))) {
		t->oom = true;
		return;
	}
	x = &t->b[t->n++];
	x->tsc0 = b->tsc0;
	x->conn = b->conn;
	x->dir = b->dir;
	x->retrans = b->flags & NSL_BF_RETRANS;
	x->overhead = ns_block_overhead(cs, b);
}

void ns_rtt_loss(struct ns_rtt *t, const struct nsl_loss *l)
{
	if (!grow((void **)&t->loss_tsc, &t->loss_cap, t->nloss,
		  sizeof(*t->loss_tsc))) {
		t->oom = true;
		return;
	}
	t->loss_tsc[t->nloss++] = l->tsc;
}

static int by_tsc0(const void *a, const void *b)
{
	const struct ns_rtt_block *x = a, *y = b;

	return (x->tsc0 > y->tsc0) - (x->tsc0 < y->tsc0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static bool same_sender(const struct ns_rtt_block *a,
			const struct ns_rtt_block *b)
{
	return a->conn == b->conn && a->dir == b->dir;
}

/* Is there a loss item with its TSC in [from, to)? */
static bool loss_inside(const struct ns_rtt *t, uint64_t from, uint64_t to)
{
	size_t lo = 0, hi = t->nloss;

	while (lo < hi) {	/* first loss >= from */
		size_t mid = (lo + hi) / 2;

		if (t->loss_tsc[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nloss && t->loss_tsc[lo] < to;
}

void ns_rtt_finish(struct ns_rtt *t)
{
	size_t *run = NULL, nrun = 0;

	if (t->n)
		qsort(t->b, t->n, sizeof(*t->b), by_tsc0);
	if (t->nloss)
		qsort(t->loss_tsc, t->nloss, sizeof(*t->loss_tsc), cmp_u64);
	run = malloc((t->n ? t->n : 1) * sizeof(*run));
	if (!run) {
		t->oom = true;
		return;
	}
	/* run starts: the first block of each sender's turn */
	for (size_t i = 0; i < t->n; i++) {
		if (t->b[i].retrans)
			continue;
		if (!nrun || !same_sender(&t->b[run[nrun - 1]], &t->b[i]))
			run[nrun++] = i;
	}
	/* each run to the next run of the same sender */
	for (size_t r = 0; r < nrun; r++) {
		size_t from = run[r], to = 0;
		uint64_t raw, cost = 0;
		bool found = false, clamped;

		for (size_t s = r + 1; s < nrun; s++) {
			if (same_sender(&t->b[run[s]], &t->b[from])) {
				to = run[s];
				found = true;
				break;
			}
		}
		if (!found)
			continue;
		if (loss_inside(t, t->b[from].tsc0, t->b[to].tsc0)) {
			t->spanning_loss++;
			continue;
		}
		raw = t->b[to].tsc0 - t->b[from].tsc0;
		for (size_t i = from; i < to; i++)
			cost += t->b[i].overhead;
		ns_stats_add(&t->raw, raw);
		ns_stats_add(&t->corrected, subtract(raw, cost, &clamped));
		t->clamped += clamped;
	}
	free(run);
}
