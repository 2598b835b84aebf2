// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "decode.h"
#include "report.h"

void ns_report_init(struct ns_report *r, const struct ns_printer *pr,
		    FILE *out, uint32_t tsc_khz)
{
	memset(r, 0, sizeof(*r));
	r->pr = pr;
	r->out = out;
	r->tsc_khz = tsc_khz;
	for (int i = 0; i < NSL_R_MAX; i++)
		ns_stats_init(&r->region[i].ticks, 0);
}

void ns_report_free(struct ns_report *r)
{
	for (int i = 0; i < NSL_R_MAX; i++)
		ns_stats_free(&r->region[i].ticks);
}

double ns_report_us(const struct ns_report *r, uint64_t ticks)
{
	return (double)ticks * 1000.0 / r->tsc_khz;
}

double ns_report_time_us(const struct ns_report *r, const struct nsl_block *b)
{
	/* blocks leave per-CPU rings out of order: times may be negative */
	return (double)(int64_t)(b->tsc0 - r->t0) * 1000.0 / r->tsc_khz;
}

bool ns_report_summary(struct ns_report *r, unsigned int region,
		       struct ns_summary *s)
{
	return ns_stats_summary(&r->region[region].ticks,
				1000.0 / r->tsc_khz, s);
}

const char *ns_event_label(const struct ns_report *r, unsigned int e,
			   char *buf, size_t len)
{
	if (r->event_name[e])
		return r->event_name[e];
	snprintf(buf, len, "ev%u", e);
	return buf;
}

static void flag_names(uint32_t flags, const char *const *names, int nnames,
		       char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < 32 && used < len; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (i < nnames && names[i])
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? "," : "", names[i]);
		else
			used += snprintf(buf + used, len - used, "%s0x%x",
					 used ? "," : "", 1u << i);
	}
}

void ns_block_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"RETRANS", "GSO", "NOXMIT", "TRUNC", "LOOPBACK", "RX",
	};

	flag_names(flags, names, 6, buf, len);
}

void ns_record_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"OPEN", "INVALID", "MIGRATED", "MERGED",
	};

	flag_names(flags, names, 4, buf, len);
}

/*
 * A packet's value for a region is the sum of that region's records in
 * its block (tcp: copy in sendmsg + header build in xmit).  A region with
 * an OPEN record gives no value for that block: its sum would be short.
 */
static void accumulate(struct ns_report *r, const struct nsl_block *b)
{
	uint64_t sum[NSL_R_MAX] = { 0 }, ev[NSL_R_MAX][NSL_MAX_EVENTS];
	bool seen[NSL_R_MAX] = { false }, open[NSL_R_MAX] = { false };
	bool ev_bad[NSL_R_MAX] = { false };

	memset(ev, 0, sizeof(ev));
	for (unsigned int i = 0; i < b->nrec; i++) {
		const struct nsl_record *rec = &b->rec[i];
		unsigned int id = rec->region;

		seen[id] = true;
		r->region[id].records++;
		if (rec->flags & NSL_RF_OPEN) {
			open[id] = true;
			r->region[id].open++;
			continue;
		}
		sum[id] += rec->ticks;
		if (rec->flags & NSL_RF_INVALID)
			ev_bad[id] = true;
		for (unsigned int e = 0; e < b->nevents; e++)
			ev[id][e] += rec->count[e];
	}
	for (unsigned int id = 0; id < NSL_R_MAX; id++) {
		struct ns_region_acc *acc = &r->region[id];

		if (!seen[id] || open[id])
			continue;
		ns_stats_add(&acc->ticks, sum[id]);
		if (ev_bad[id])
			continue;
		for (unsigned int e = 0; e < b->nevents; e++) {
			acc->ev_sum[e] += (double)ev[id][e];
			acc->ev_n[e]++;
		}
	}
}

void ns_report_block(struct ns_report *r, const struct nsl_block *b)
{
	if (!r->have_t0) {
		r->t0 = b->tsc0;
		r->have_t0 = true;
	}
	if (b->nevents > r->nevents)
		r->nevents = b->nevents;
	r->blocks++;
	accumulate(r, b);
	if (r->out && !r->quiet)
		r->pr->block(r, b);
}

void ns_report_loss(struct ns_report *r, const struct nsl_loss *l)
{
	r->lost += l->lost;
	r->loss_items++;
	if (r->out && !r->quiet)
		r->pr->loss(r, l);
}

void ns_report_table(struct ns_report *r)
{
	if (r->out)
		r->pr->table(r);
}

/* ---- plain printer ---- */

static void plain_block(struct ns_report *r, const struct nsl_block *b)
{
	bool done[NSL_MAX_RECORDS] = { false };
	FILE *f = r->out;
	char fl[128];

	fprintf(f, "%.3f cpu %u seq %llu %s len %u segs %u",
		ns_report_time_us(r, b), b->hdr.cpu,
		(unsigned long long)b->seq, b->dir == NSL_DIR_RX ? "rx" : "tx",
		b->len, b->gso_segs);
	ns_block_flags(b->flags, fl, sizeof(fl));
	if (fl[0])
		fprintf(f, " flags %s", fl);
	/* regions in record order, repeated ones joined by '+' */
	for (unsigned int i = 0; i < b->nrec; i++) {
		if (done[i])
			continue;
		fprintf(f, " %s ", ns_region_name(b->rec[i].region));
		for (unsigned int j = i; j < b->nrec; j++) {
			if (b->rec[j].region != b->rec[i].region)
				continue;
			done[j] = true;
			if (j != i)
				fputc('+', f);
			if (b->rec[j].flags & NSL_RF_OPEN)
				fputs("open", f);
			else
				fprintf(f, "%.3f", ns_report_us(r, b->rec[j].ticks));
		}
	}
	fputc('\n', f);
	if (!r->verbose)
		return;

	fprintf(f, "    tsc0 %llu conn 0x%llx tcp_seq %u ifindex %u proto %u nhlen %u thlen %u mode %s nevents %u\n",
		(unsigned long long)b->tsc0, (unsigned long long)b->conn,
		b->tcp_seq, b->ifindex, b->proto, b->nhlen, b->thlen,
		b->mode == NSL_MODE_COUNT ? "count" : "duration", b->nevents);
	for (unsigned int i = 0; i < b->nrec; i++) {
		const struct nsl_record *rec = &b->rec[i];
		char lbl[16];

		fprintf(f, "    [%u] %-7s start %llu ticks %llu depth %u cpu %u nmerged %u",
			i, ns_region_name(rec->region),
			(unsigned long long)rec->start,
			(unsigned long long)rec->ticks, rec->depth, rec->cpu,
			rec->nmerged);
		ns_record_flags(rec->flags, fl, sizeof(fl));
		if (fl[0])
			fprintf(f, " flags %s", fl);
		for (unsigned int e = 0; e < b->nevents; e++)
			fprintf(f, " %s %llu", ns_event_label(r, e, lbl, sizeof(lbl)),
				(unsigned long long)rec->count[e]);
		fputc('\n', f);
	}
}

static void plain_loss(struct ns_report *r, const struct nsl_loss *l)
{
	fprintf(r->out, "-- %llu blocks lost here (cpu %u, first seq %llu) --\n",
		(unsigned long long)l->lost, l->hdr.cpu,
		(unsigned long long)l->first_seq);
}

static void plain_table(struct ns_report *r)
{
	FILE *f = r->out;
	bool sampled = false;
	char lbl[16];

	fprintf(f, "# per-layer latency, µs, over %llu blocks (%llu lost): RAW values, not corrected for macro overhead\n",
		(unsigned long long)r->blocks, (unsigned long long)r->lost);
	fprintf(f, "# TSC read with rdtsc (not serialising), tsc_khz %u; a packet's value for a region sums its records in the block; regions with an OPEN record are excluded (open column)\n",
		r->tsc_khz);
	fprintf(f, "%-8s %10s %11s %10s  %10s  %11s %11s %7s %8s",
		"region", "n", "mean", "p50", "p99", "min", "max", "CV", "open");
	for (unsigned int e = 0; e < r->nevents; e++)
		fprintf(f, " %12s", ns_event_label(r, e, lbl, sizeof(lbl)));
	fputc('\n', f);

	for (unsigned int id = 1; id < NSL_R_MAX; id++) {
		const struct ns_region_acc *acc = &r->region[id];
		struct ns_summary s;

		if (!acc->records)
			continue;
		if (!ns_report_summary(r, id, &s)) {
			fprintf(f, "%-8s %10d %11s %11s %11s %11s %11s %7s %8llu\n",
				ns_region_name(id), 0, "-", "-", "-", "-", "-",
				"-", (unsigned long long)acc->open);
			continue;
		}
		sampled |= s.sampled;
		fprintf(f, "%-8s %10llu %11.3f %10.3f%c %10.3f%c %11.3f %11.3f %7.3f %8llu",
			ns_region_name(id), (unsigned long long)s.n, s.mean,
			s.p50, s.sampled ? '~' : ' ', s.p99,
			s.sampled ? '~' : ' ', s.min, s.max, s.cv,
			(unsigned long long)acc->open);
		for (unsigned int e = 0; e < r->nevents; e++) {
			if (acc->ev_n[e])
				fprintf(f, " %12.1f", acc->ev_sum[e] / acc->ev_n[e]);
			else
				fprintf(f, " %12s", "-");
		}
		fputc('\n', f);
	}
	if (sampled)
		fprintf(f, "# ~: percentile from a uniform sample of %u values per region (memory bound)\n",
			NS_STATS_LIMIT);
	if (r->nevents)
		fprintf(f, "# counter columns: mean delta per packet over blocks whose records were all valid\n");
}

const struct ns_printer ns_plain_printer = {
	.block	= plain_block,
	.loss	= plain_loss,
	.table	= plain_table,
};
