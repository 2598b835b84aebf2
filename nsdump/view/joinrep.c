// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include "stage/tuple.h"
#include "view/joinrep.h"

void ns_joinrep_init(struct ns_joinrep *jr, const struct ns_join *j,
		     const uint64_t lost[2], const struct ns_acc *like)
{
	memset(jr, 0, sizeof(*jr));
	jr->join = j;
	jr->lost = lost;
	for (int h = 0; h < 2; h++) {
		ns_acc_init(&jr->acc[h], like->tsc_khz);
		jr->acc[h].calib = like->calib;
		jr->acc[h].clock = like->clock;
		jr->acc[h].nevents = 0;
		if (like->by) {
			ns_by_init(&jr->by[h], like->by->what);
			jr->by[h].live = like->by->live;
			jr->acc[h].by = &jr->by[h];
		}
	}
}

void ns_joinrep_free(struct ns_joinrep *jr)
{
	for (int h = 0; h < 2; h++) {
		ns_acc_free(&jr->acc[h]);
		ns_by_free(&jr->by[h]);
	}
}

void ns_joinrep_item(struct ns_joinrep *jr, const struct ns_citem *ci)
{
	if (ci->join)
		ns_acc_item(&jr->acc[ci->join->from], ci);
}

const char *ns_joinrep_host(const struct ns_joinrep *jr, unsigned int h)
{
	return jr->join->host[h].name;
}

static void plain_clock(const struct ns_joinrep *jr, FILE *f)
{
	const struct ns_jclock *c = &jr->join->clock;
	int64_t guess = ns_join_tsc_offset(jr->join, 0);

	if (!c->known) {
		fprintf(f, "# clock: not aligned: no packet joined in both directions (%" PRIu64 " > and %" PRIu64 " <); wire times are by the wall-clock anchors alone\n",
			c->pairs[0], c->pairs[1]);
		return;
	}
	fprintf(f, "# clock: %s = %s %+.3f µs ± %.3f µs, by minimum filtering over %" PRIu64 " + %" PRIu64 " packets spanning %.3f s; the uncertainty is half the minimum round trip: an asymmetric path biases the offset by half its asymmetry, which no packet shows\n",
		ns_joinrep_host(jr, 1), ns_joinrep_host(jr, 0),
		c->offset_ns / 1e3, c->uncert_ns / 1e3, c->pairs[0], c->pairs[1],
		(double)c->span_ns / 1e9);
	if (c->drift)
		fprintf(f, "# drift: %+.3f ± %.3f ppm (%d windows, weighted fit)\n",
			c->drift_ppm, c->drift_uncert_ppm, NS_JOIN_WINDOWS);
	else
		fprintf(f, "# drift: not estimated (the pairs span less than %.0f s)\n",
			NS_JOIN_DRIFT_SPAN_NS / 1e9);
	fprintf(f, "# tsc: %s's TSC = %s's %+" PRId64 " ticks; the wall-clock anchors said %+" PRId64 "\n",
		ns_joinrep_host(jr, 1), ns_joinrep_host(jr, 0),
		ns_join_tsc_offset(jr->join, c->offset_ns), guess);
}

/* One unmatched block's line. */
static void plain_unmatched(const struct ns_jblock *k, FILE *f)
{
	struct ns_tuple t;
	char text[160] = "";

	if (ns_tuple_from_block(&k->b, &t))
		ns_tuple_text(&t, text, sizeof(text));
	fprintf(f, "unmatched host %u %s %-9s %s len %u", k->host,
		k->tx ? "tx" : "rx", ns_join_why_name(k->why), text, k->b.len);
	if (k->b.proto == 6)
		fprintf(f, " seq %u", k->b.tcp_seq);
	fprintf(f, " tsc0 %llu%s\n", (unsigned long long)k->b.tsc0,
		k->b.flags & NSL_BF_RETRANS ? " RETRANS" : "");
}

/* The unmatched blocks of @host, @tx, @why: NS_JOIN_LIST, or all. */
static void list(const struct ns_join *j, unsigned int host, bool tx,
		 unsigned int why, bool all, FILE *f)
{
	uint64_t n = 0;

	for (size_t i = 0; i < j->n; i++) {
		const struct ns_jblock *k = &j->b[i];

		if (k->host != host || k->tx != tx || k->why != why)
			continue;
		if (all || n < NS_JOIN_LIST)
			plain_unmatched(k, f);
		n++;
	}
	if (n > NS_JOIN_LIST && !all)
		fprintf(f, "# and %" PRIu64 " more (-v lists them all)\n",
			n - NS_JOIN_LIST);
}

void ns_joinrep_plain(const struct ns_joinrep *jr, FILE *f, bool verbose)
{
	const struct ns_join *j = jr->join;

	fprintf(f, "# join: %s (host 0, %" PRIu64 " blocks, %" PRIu64 " lost) and %s (host 1, %" PRIu64 " blocks, %" PRIu64 " lost); flows compared by %s\n",
		ns_joinrep_host(jr, 0), j->host[0].blocks, jr->lost[0],
		ns_joinrep_host(jr, 1), j->host[1].blocks, jr->lost[1],
		j->by_addr ? "addresses and ports" :
		"ports only (blocks without addresses: capture with --addr)");
	plain_clock(jr, f);
	for (unsigned int h = 0; h < 2; h++)
		fprintf(f, "joined %s > %s: %" PRIu64 " receive blocks, %" PRIu64 " TSO sends in several\n",
			ns_joinrep_host(jr, h), ns_joinrep_host(jr, !h),
			j->joined[h], j->tso[h]);
	for (unsigned int h = 0; h < 2; h++)
		for (int tx = 1; tx >= 0; tx--)
			for (unsigned int w = 1; w < NS_JW_MAX; w++) {
				if (!j->why[h][tx][w])
					continue;
				fprintf(f, "# unmatched: host %u %s %s: %" PRIu64 "\n",
					h, tx ? "tx" : "rx", ns_join_why_name(w),
					j->why[h][tx][w]);
				if (w != NS_JW_LOCAL && w != NS_JW_NO_WIRE)
					list(j, h, tx, w, verbose, f);
			}
}
