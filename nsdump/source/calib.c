// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "source/calib.h"

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

/* ---- --calibrate ---- */

static const struct ns_cost_row cost_rows[NSL_C_MAX] = {
	[NSL_C_NSI] = { "NSI", "tau_alpha", "NET_SLICE_INIT" },
	[NSL_C_NSS] = { "NSS", "-", "NET_SLICE_START" },
	[NSL_C_NST] = { "NST", "-", "NET_SLICE_STOP" },
	[NSL_C_NSE] = { "NSE", "tau_gamma", "NET_SLICE_EXIT" },
	[NSL_C_NSO] = { "NSO", "tau_o", "empty START..STOP as recorded" },
	[NSL_C_NSA] = { "NSA", "tau_beta", "a START/STOP pair, seen around it" },
};

const struct ns_cost_row *ns_cost_row(int m)
{
	return &cost_rows[m];
}

double ns_calib_ns(const struct ns_calib_set *cs, double ticks)
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
			ns_calib_ns(cs, k->ticks), (unsigned long long)k->ticks,
			ns_calib_ns(cs, k->min), k->cv_ppm / 1e4, k->samples);
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
	if (cs->cold)
		fprintf(out, "# cold: each sample after a TLB flush, with the skb and its block evicted; tau_beta a pair timed from outside\n");
	else
		fprintf(out, "# warm: samples back to back, code and data cached (--cold for the other bound)\n");
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
		snprintf(buf, len, "%.1fns", ns_calib_ns(cs, lo));
	else
		snprintf(buf, len, "%.1f..%.1fns", ns_calib_ns(cs, lo),
			 ns_calib_ns(cs, hi));
}

void ns_calib_summary(const struct ns_calib_set *cs, char *buf, size_t len)
{
	char o[48], b[48];

	range(cs, NSL_C_NSO, o, sizeof(o));
	range(cs, NSL_C_NSA, b, sizeof(b));
	snprintf(buf, len, "tau_o=%s, tau_beta=%s", o, b);
}

