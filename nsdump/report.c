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
	r->ev_cycles = r->ev_instr = -1;
	ns_evorder_init(&r->evq, (uint64_t)tsc_khz * NS_EV_HORIZON_MS);
	for (int i = 0; i < NSL_R_MAX; i++) {
		ns_stats_init(&r->region[i].ticks, 0);
		for (int e = 0; e < NSL_MAX_EVENTS; e++)
			ns_stats_init(&r->region[i].ev[e], NS_EV_STATS_LIMIT);
	}
}

void ns_report_free(struct ns_report *r)
{
	ns_evorder_free(&r->evq);
	for (int i = 0; i < NSL_R_MAX; i++) {
		ns_stats_free(&r->region[i].ticks);
		for (int e = 0; e < NSL_MAX_EVENTS; e++)
			ns_stats_free(&r->region[i].ev[e]);
	}
}

void ns_report_set_events(struct ns_report *r, const struct ns_evsel *sel)
{
	r->ev_cycles = r->ev_instr = -1;
	for (unsigned int e = 0; e < NSL_MAX_EVENTS; e++) {
		r->event_name[e][0] = 0;
		if (e >= sel->n)
			continue;
		snprintf(r->event_name[e], sizeof(r->event_name[e]), "%s",
			 sel->name[e]);
		switch (ns_event_kind(&sel->ev.ev[e], sel->canon[e])) {
		case NS_EV_CYCLES:
			if (r->ev_cycles < 0)
				r->ev_cycles = e;
			break;
		case NS_EV_INSTRUCTIONS:
			if (r->ev_instr < 0)
				r->ev_instr = e;
			break;
		case NS_EV_OTHER:
			break;
		}
	}
}

/* Are cycles and instructions among the counted events? */
static bool has_ipc(const struct ns_report *r)
{
	return r->ev_cycles >= 0 && r->ev_instr >= 0 &&
	       (unsigned int)r->ev_cycles < r->nevents &&
	       (unsigned int)r->ev_instr < r->nevents;
}

double ns_report_ipc(const struct ns_report *r, unsigned int region)
{
	const struct ns_region_acc *acc = &r->region[region];

	if (!has_ipc(r) ||
	    !acc->ev_n[r->ev_cycles] || acc->ev_sum[r->ev_cycles] <= 0)
		return -1;
	return acc->ev_sum[r->ev_instr] / acc->ev_sum[r->ev_cycles];
}

void ns_report_correction(const struct ns_report *r, char *buf, size_t len)
{
	char taus[128];

	if (!ns_calib_get(r->calib, 0)) {
		snprintf(buf, len, "RAW values, not corrected for macro overhead");
		return;
	}
	ns_calib_summary(r->calib, taus, sizeof(taus));
	snprintf(buf, len, "corrected for macro overhead (%s)", taus);
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
	if (r->event_name[e][0])
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
		"RETRANS", "GSO", "NOXMIT", "TRUNC", "LOOPBACK", "RX", "ABSORBED",
		"RESENT",
	};

	flag_names(flags, names, (int)(sizeof(names) / sizeof(names[0])),
		   buf, len);
}

void ns_record_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"OPEN", "INVALID", "MIGRATED", "MERGED", "GAP", "SHARED",
	};

	flag_names(flags, names, (int)(sizeof(names) / sizeof(names[0])),
		   buf, len);
}

/*
 * A record's own time: its (corrected) duration less that of the records
 * directly inside it (one level deeper, ns_rec_inside() whole), so that
 * the wait in sndq is not write's and the qdisc's is not link's.
 */
static uint64_t self_ticks(const struct nsl_block *b,
			   const struct ns_rec_corr *corr, unsigned int i)
{
	const struct nsl_record *p = &b->rec[i];
	uint64_t in = 0;

	for (unsigned int j = i + 1; j < b->nrec; j++) {
		const struct nsl_record *c = &b->rec[j];

		if (c->depth == p->depth + 1 && !(c->flags & NSL_RF_OPEN) &&
		    ns_rec_inside(b, i, j, true))
			in += corr[j].ticks;
	}
	return in < corr[i].ticks ? corr[i].ticks - in : 0;
}

/*
 * A packet's value for a region is the sum of that region's records in
 * its block (tcp: copy in sendmsg + header build in xmit), each corrected
 * on its own.  A region with an OPEN record gives no value for that
 * block: its sum would be short; one with an INVALID record gives its
 * duration but no counter values.
 */
static void accumulate(struct ns_report *r, const struct nsl_block *b,
		       const struct ns_rec_corr *corr)
{
	uint64_t sum[NSL_R_MAX] = { 0 }, raw[NSL_R_MAX] = { 0 };
	uint64_t self[NSL_R_MAX] = { 0 };
	uint64_t ev[NSL_R_MAX][NSL_MAX_EVENTS];
	bool seen[NSL_R_MAX] = { false }, open[NSL_R_MAX] = { false };
	bool ev_bad[NSL_R_MAX] = { false };

	memset(ev, 0, sizeof(ev));
	for (unsigned int i = 0; i < b->nrec; i++) {
		const struct nsl_record *rec = &b->rec[i];
		unsigned int id = rec->region;

		r->region[id].records++;
		/* One measurement: counted where it is not a copy. */
		if (rec->flags & NSL_RF_SHARED) {
			r->region[id].shared++;
			r->shared++;
			continue;
		}
		seen[id] = true;
		if (rec->flags & NSL_RF_OPEN) {
			open[id] = true;
			r->region[id].open++;
			continue;
		}
		sum[id] += corr[i].ticks;
		raw[id] += rec->ticks;
		self[id] += self_ticks(b, corr, i);
		r->clamped_ticks += corr[i].ticks_clamped;
		if (rec->flags & NSL_RF_INVALID) {
			ev_bad[id] = true;
			if (b->nevents) {
				r->region[id].invalid++;
				r->invalid++;
			}
			continue;
		}
		for (unsigned int e = 0; e < b->nevents; e++) {
			ev[id][e] += corr[i].count[e];
			r->clamped_counts += !!(corr[i].count_clamped & (1u << e));
		}
	}
	for (unsigned int id = 0; id < NSL_R_MAX; id++) {
		struct ns_region_acc *acc = &r->region[id];

		if (!seen[id] || open[id])
			continue;
		ns_stats_add(&acc->ticks, sum[id]);
		acc->raw_sum += (double)raw[id];
		acc->self_sum += (double)self[id];
		if (ev_bad[id])
			continue;
		for (unsigned int e = 0; e < b->nevents; e++) {
			ns_stats_add(&acc->ev[e], ev[id][e]);
			acc->ev_sum[e] += (double)ev[id][e];
			acc->ev_n[e]++;
		}
	}
}

void ns_report_block(struct ns_report *r, const struct nsl_block *b)
{
	struct ns_rec_corr corr[NSL_MAX_RECORDS];

	if (!r->have_t0) {
		r->t0 = b->tsc0;
		r->have_t0 = true;
	}
	if (b->nevents > r->nevents)
		r->nevents = b->nevents;
	r->blocks++;
	ns_correct_block(r->calib, b, corr);
	accumulate(r, b, corr);
	if (r->rtt)
		ns_rtt_block(r->rtt, r->calib, b);
	if (r->out && !r->quiet)
		r->pr->block(r, b, corr);
}

void ns_report_loss(struct ns_report *r, const struct nsl_loss *l)
{
	r->lost += l->lost;
	r->loss_items++;
	if (r->rtt)
		ns_rtt_loss(r->rtt, l);
	if (r->out && !r->quiet)
		r->pr->loss(r, l);
}

static void print_event(struct ns_report *r, const struct nsl_event_rec *ev)
{
	char when[64];

	ns_clock_format(&r->clock, ev->tsc, when, sizeof(when));
	r->pr->event(r, ev, when);
}

static void print_due_events(struct ns_report *r, bool flush)
{
	struct nsl_event_rec ev;

	while (ns_evorder_pop(&r->evq, flush, &ev))
		print_event(r, &ev);
}

void ns_report_event(struct ns_report *r, const struct nsl_event_rec *ev)
{
	r->event_recs++;
	if (!r->mag)
		return;
	ns_magnet_account(r->mag, ev);
	if (!r->out || r->quiet)
		return;
	if (!ns_evorder_push(&r->evq, ev)) {
		/* No room to wait: print it now, counted if out of order. */
		ns_evorder_out(&r->evq, ev->tsc);
		print_event(r, ev);
	}
	print_due_events(r, false);
}

void ns_report_flush_events(struct ns_report *r)
{
	if (r->out)
		print_due_events(r, true);
}

void ns_report_sysinfo(struct ns_report *r, const struct nsl_sysinfo *s)
{
	r->sysinfos++;
	ns_clock_from_sysinfo(&r->clock, s);
	if (r->mag && r->out && !r->quiet) {
		char when[64];

		ns_clock_format(&r->clock, s->ref_tsc, when, sizeof(when));
		r->pr->sysinfo(r, s, when);
	}
}

void ns_report_table(struct ns_report *r)
{
	if (r->rtt)
		ns_rtt_finish(r->rtt);
	if (!r->out)
		return;
	ns_report_flush_events(r);
	r->pr->table(r);
	if (r->mag)
		r->pr->conns(r);
}

/* ---- plain printer ---- */

static void plain_block(struct ns_report *r, const struct nsl_block *b,
			const struct ns_rec_corr *corr)
{
	bool done[NSL_MAX_RECORDS] = { false };
	bool corrected = ns_calib_get(r->calib, 0) != NULL;
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
				fprintf(f, "%.3f", ns_report_us(r, corr[j].ticks));
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
		bool open = rec->flags & NSL_RF_OPEN;
		char lbl[16];

		fprintf(f, "    [%u] %-7s start %llu ticks %llu", i,
			ns_region_name(rec->region),
			(unsigned long long)rec->start,
			(unsigned long long)rec->ticks);
		if (corrected && !open)
			fprintf(f, " corrected %llu%s",
				(unsigned long long)corr[i].ticks,
				corr[i].ticks_clamped ? " (clamped)" : "");
		fprintf(f, " K %u depth %u cpu %u nmerged %u", corr[i].k,
			rec->depth, rec->cpu, rec->nmerged);
		ns_record_flags(rec->flags, fl, sizeof(fl));
		if (fl[0])
			fprintf(f, " flags %s", fl);
		for (unsigned int e = 0; e < b->nevents; e++) {
			fprintf(f, " %s %llu", ns_event_label(r, e, lbl, sizeof(lbl)),
				(unsigned long long)rec->count[e]);
			if (corrected && !open)
				fprintf(f, "/%llu", (unsigned long long)corr[i].count[e]);
		}
		fputc('\n', f);
	}
}

static void plain_loss(struct ns_report *r, const struct nsl_loss *l)
{
	fprintf(r->out, "-- %llu items lost here (cpu %u, first seq %llu) --\n",
		(unsigned long long)l->lost, l->hdr.cpu,
		(unsigned long long)l->first_seq);
}

static void plain_rtt(struct ns_report *r)
{
	struct ns_rtt *t = r->rtt;
	struct ns_summary raw, cor;
	FILE *f = r->out;

	fprintf(f, "# user-level round trip (NetSlice formula 5): tsc0 of a sender's first block to that of its next turn, one ping-pong at a time\n");
	if (!ns_stats_summary(&t->raw, 1000.0 / r->tsc_khz, &raw)) {
		fprintf(f, "rtt       n 0 (no alternating senders: not a ping-pong)\n");
		return;
	}
	ns_stats_summary(&t->corrected, 1000.0 / r->tsc_khz, &cor);
	fprintf(f, "rtt raw       n %llu mean %.3f p50 %.3f p99 %.3f us\n",
		(unsigned long long)raw.n, raw.mean, raw.p50, raw.p99);
	if (ns_calib_get(r->calib, 0))
		fprintf(f, "rtt corrected n %llu mean %.3f p50 %.3f p99 %.3f us\n",
			(unsigned long long)cor.n, cor.mean, cor.p50, cor.p99);
	else
		fprintf(f, "rtt corrected - (no calibration)\n");
	if (t->spanning_loss || t->clamped || t->oom)
		fprintf(f, "# rtt: %llu samples with a loss inside dropped, %llu clamped to 0%s\n",
			(unsigned long long)t->spanning_loss,
			(unsigned long long)t->clamped,
			t->oom ? "; OUT OF MEMORY: blocks missing" : "");
}

static void plain_table(struct ns_report *r)
{
	bool corrected = ns_calib_get(r->calib, 0) != NULL;
	bool ipc = has_ipc(r);
	FILE *f = r->out;
	bool sampled = false;
	char lbl[16], how[192];

	ns_report_correction(r, how, sizeof(how));
	fprintf(f, "# per-layer latency, µs, over %llu blocks (%llu lost): %s\n",
		(unsigned long long)r->blocks, (unsigned long long)r->lost, how);
	fprintf(f, "# TSC read with rdtsc (not serialising), tsc_khz %u; a packet's value for a region sums its records in the block; regions with an OPEN record are excluded (open column); self-mean leaves out the regions nested inside\n",
		r->tsc_khz);
	fprintf(f, "%-8s %10s %11s %10s  %10s  %11s %11s %7s %8s",
		"region", "n", "mean", "p50", "p99", "min", "max", "CV", "open");
	if (corrected)
		fprintf(f, " %11s", "raw-mean");
	fprintf(f, " %11s", "self-mean");
	for (unsigned int e = 0; e < r->nevents; e++)
		fprintf(f, " %14s %10s %10s", ns_event_label(r, e, lbl, sizeof(lbl)),
			"p50", "p99");
	if (ipc)
		fprintf(f, " %6s", "IPC");
	fputc('\n', f);

	for (unsigned int id = 1; id < NSL_R_MAX; id++) {
		struct ns_region_acc *acc = &r->region[id];
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
		if (corrected)
			fprintf(f, " %11.3f", ns_report_us(r, 1) * acc->raw_sum / s.n);
		fprintf(f, " %11.3f", ns_report_us(r, 1) * acc->self_sum / s.n);
		for (unsigned int e = 0; e < r->nevents; e++) {
			struct ns_summary c;

			if (ns_stats_summary(&acc->ev[e], 1, &c))
				fprintf(f, " %14.1f %10.0f %10.0f", c.mean, c.p50, c.p99);
			else
				fprintf(f, " %14s %10s %10s", "-", "-", "-");
		}
		if (ipc) {
			double x = ns_report_ipc(r, id);

			if (x >= 0)
				fprintf(f, " %6.2f", x);
			else
				fprintf(f, " %6s", "-");
		}
		fputc('\n', f);
	}
	if (sampled)
		fprintf(f, "# ~: percentile from a uniform sample of %u values per region (memory bound)\n",
			NS_STATS_LIMIT);
	if (r->nevents)
		fprintf(f, "# counter columns: mean, p50, p99 of the delta per packet%s; %llu invalid counter readings excluded\n",
			ipc ? ", IPC = sum instructions / sum cycles" : "",
			(unsigned long long)r->invalid);
	if (r->shared)
		fprintf(f, "# %llu records measured before their skb was split are counted once, in the first part's block\n",
			(unsigned long long)r->shared);
	if (corrected)
		fprintf(f, "# %llu durations and %llu counter values clamped to 0 by the correction\n",
			(unsigned long long)r->clamped_ticks,
			(unsigned long long)r->clamped_counts);
	if (r->rtt)
		plain_rtt(r);
}

/* magnet-parse's line: time, where, what, then the optional data. */
static void plain_event(struct ns_report *r, const struct nsl_event_rec *ev,
			const char *when)
{
	const struct nsl_tcp_state *t = &ev->tcp;
	const struct nsl_ip_fields *ip = &ev->ip;
	FILE *f = r->out;
	char buf[64];

	fprintf(f, "%s cpu %u conn 0x%llx %s %u bytes", when, ev->hdr.cpu,
		(unsigned long long)ev->conn, ns_event_type_name(ev->type),
		ev->bytes);
	if (ev->flags & NSL_EVF_TSO)
		fputs(" TSO", f);
	if (r->verbose)
		fprintf(f, " seq %llu tsc %llu", (unsigned long long)ev->seq,
			(unsigned long long)ev->tsc);
	if (ev->flags & NSL_EVF_TCP) {
		fprintf(f, " [tcp cwnd %u ssthresh %u srtt %uus rto %uus out %u retr %u/%u snd_wnd %u rcv_wnd %u wseq %u cseq %u mss %u state %s",
			t->snd_cwnd, t->snd_ssthresh, t->srtt_us, t->rto_us,
			t->packets_out, t->retrans_out, t->total_retrans,
			t->snd_wnd, t->rcv_wnd, t->write_seq, t->copied_seq,
			t->mss, ns_tcp_state_name(t->state, buf, sizeof(buf)));
		if (t->ca_state)
			fprintf(f, " ca %u", t->ca_state);
		ns_tcp_flag_letters(t->tcp_flags, buf, sizeof(buf));
		if (buf[0])
			fprintf(f, " flags %s", buf);
		fputc(']', f);
	}
	if (ev->flags & NSL_EVF_IP)
		fprintf(f, " [ip v%u tos %u ttl %u id %u frag 0x%x proto %u]",
			ip->version, ip->tos, ip->ttl, ip->id, ip->frag_off,
			ip->protocol);
	if (ev->flags & NSL_EVF_ADDR) {
		char ends[80];

		ns_event_endpoints(r->mag, ev, ends, sizeof(ends));
		fprintf(f, " [%s]", ends);
	}
	fputc('\n', f);
}

static void plain_sysinfo(struct ns_report *r, const struct nsl_sysinfo *s,
			  const char *when)
{
	fprintf(r->out, "-- SYSINFO cpu %u abi %u tsc_khz %u ncpus %u: tsc %llu is %s --\n",
		s->hdr.cpu, s->abi_version, s->tsc_khz, s->ncpus,
		(unsigned long long)s->ref_tsc, when);
}

static void plain_conns(struct ns_report *r)
{
	struct ns_magnet *m = r->mag;
	uint64_t tso = 0;
	FILE *f = r->out;

	fprintf(f, "# application vs wire per connection (MAGNeT Table III) over %llu event records: data size in bytes; spacing of consecutive events of the connection and type, by tsc, in µs\n",
		(unsigned long long)m->events);
	for (size_t i = 0; i < m->n; i++) {
		struct ns_conn *c = &m->conn[i];
		char l[32], rem[32];

		if (!c->accounted)
			continue;
		fprintf(f, "conn 0x%llx", (unsigned long long)c->conn);
		if (c->have_ports) {
			ns_conn_endpoint(c, true, l, sizeof(l));
			ns_conn_endpoint(c, false, rem, sizeof(rem));
			fprintf(f, " local %s remote %s", l, rem);
		}
		fprintf(f, "\n  %-17s %8s %10s %8s %8s %12s %8s %6s\n", "event",
			"n", "mean-size", "min", "max", "mean-spacing", "CV",
			"TSO");
		for (unsigned int k = 0; k < NSL_EV_MAX - 1; k++) {
			unsigned int type = ns_magnet_order[k];
			struct ns_layer_summary s;

			if (!ns_magnet_layer(&c->layer[type], r->clock.tsc_khz, &s))
				continue;
			fprintf(f, "  %-17s %8llu %10.1f %8u %8u", ns_event_type_name(type),
				(unsigned long long)s.n, s.bytes_mean, s.bytes_min,
				s.bytes_max);
			if (s.gaps)
				fprintf(f, " %12.3f %8.3f", s.gap_mean_us, s.gap_cv);
			else
				fprintf(f, " %12s %8s", "-", "-");
			fprintf(f, " %6llu\n", (unsigned long long)s.tso);
			tso += s.tso;
		}
	}
	if (tso)
		fprintf(f, "# TSO: %llu events were TSO/GSO super-segments, each several wire segments: their size is not what the wire carried\n",
			(unsigned long long)tso);
	if (r->evq.late)
		fprintf(f, "# %llu event records arrived more than %d ms after a later one and were printed out of time order\n",
			(unsigned long long)r->evq.late, NS_EV_HORIZON_MS);
	if (m->oom)
		fprintf(f, "# OUT OF MEMORY: some event records are missing from the spacing\n");
}

const struct ns_printer ns_plain_printer = {
	.block	= plain_block,
	.loss	= plain_loss,
	.table	= plain_table,
	.event	= plain_event,
	.sysinfo = plain_sysinfo,
	.conns	= plain_conns,
};
