// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "stage/rtt.h"

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
 *
 * The calibration is warm (each macro back to back on a cached block),
 * so T takes out too little where the stack left the macros' code and
 * data cold; with the cold calibration as well (nsdump --cold) the same
 * sum over it gives the other bound, corrected_cold, which takes out
 * too much.
 */

void ns_rtt_init(struct ns_rtt *t)
{
	memset(t, 0, sizeof(*t));
	ns_stats_init(&t->raw, 0);
	ns_stats_init(&t->corrected, 0);
	ns_stats_init(&t->corrected_cold, 0);
}

void ns_rtt_free(struct ns_rtt *t)
{
	free(t->b);
	free(t->loss_tsc);
	ns_stats_free(&t->raw);
	ns_stats_free(&t->corrected);
	ns_stats_free(&t->corrected_cold);
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

void ns_rtt_block(struct ns_rtt *t, const struct nsl_block *b,
		  uint64_t overhead)
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
	x->overhead = overhead;
	x->overhead_cold = t->cold ? ns_block_overhead(t->cold, b) : 0;
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
		uint64_t raw, cost = 0, cold = 0;
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
		for (size_t i = from; i < to; i++) {
			cost += t->b[i].overhead;
			cold += t->b[i].overhead_cold;
		}
		clamped = cost > raw;
		ns_stats_add(&t->raw, raw);
		ns_stats_add(&t->corrected, clamped ? 0 : raw - cost);
		t->clamped += clamped;
		if (t->cold) {
			ns_stats_add(&t->corrected_cold, cold > raw ? 0 : raw - cold);
			t->clamped_cold += cold > raw;
		}
	}
	free(run);
}
