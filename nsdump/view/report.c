// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "lib/devname.h"
#include "source/decode.h"
#include "source/sample.h"
#include "stage/tuple.h"
#include "view/flags.h"
#include "view/report.h"

static const struct ns_sink_ops report_ops;

void ns_report_init(struct ns_report *r, const struct ns_printer *pr,
		    FILE *out, struct ns_acc *acc)
{
	memset(r, 0, sizeof(*r));
	r->sink.ops = &report_ops;
	r->pr = pr;
	r->out = out;
	r->acc = acc;
	ns_evorder_init(&r->lines, (uint64_t)acc->tsc_khz * NS_EV_HORIZON_MS);
	ns_tstamp_init(&r->ts, NS_TS_TIME);
}

void ns_report_free(struct ns_report *r)
{
	ns_evorder_free(&r->lines);
}

/* A packet or event line's time stamp, for a printer that wants one. */
static void print_stamp(struct ns_report *r, const struct ns_evorder_ent *l)
{
	char ts[64];

	if (!l->stamped || !r->pr->stamps)
		return;
	ns_tstamp(&r->ts, l->wall_ns, ts, sizeof(ts));
	fputs(ts, r->out);
}

/* One queued line: its time stamp, then the printer's text. */
static void print_line(struct ns_report *r, const struct ns_evorder_ent *l)
{
	print_stamp(r, l);
	fwrite(l->text, 1, l->len, r->out);
}

/*
 * The first failed write, as glibc set errno then: told at the finish
 * (EPIPE, a reader gone, is no error there).
 */
static void note_write_error(struct ns_report *r)
{
	if (ferror(r->out) && !r->err)
		r->err = errno ? errno : EIO;
}

static void print_due_lines(struct ns_report *r, bool flush)
{
	struct ns_evorder_ent l;

	while (ns_evorder_pop(&r->lines, flush, &l)) {
		print_line(r, &l);
		free(l.text);
	}
	note_write_error(r);
}

/* The printer's lines for @ci on @f. */
static void print_item(struct ns_report *r, FILE *f, const struct ns_citem *ci)
{
	const struct ns_item *it = ci->it;
	FILE *out = r->out;
	char when[64];

	r->out = f;
	switch (it->type) {
	case NS_ITEM_BLOCK:
		r->pr->block(r, ci);
		break;
	case NS_ITEM_LOSS:
		r->pr->loss(r, &it->loss);
		break;
	case NS_ITEM_EVENT:
		ns_clock_format(&r->acc->clock, it->event.tsc, when, sizeof(when));
		r->pr->event(r, &it->event, when);
		break;
	case NS_ITEM_SYSINFO:
		/* the accumulator took its clock already */
		ns_clock_format(&r->acc->clock, it->sysinfo.ref_tsc, when,
				sizeof(when));
		r->pr->sysinfo(r, &it->sysinfo, when);
		break;
	case NS_ITEM_SKIPPED:
		break;
	}
	r->out = out;
}

/* When the item happened, by the TSC: what orders the lines. */
static uint64_t item_tsc(const struct ns_item *it)
{
	switch (it->type) {
	case NS_ITEM_BLOCK:
		return it->block.tsc0;
	case NS_ITEM_LOSS:
		return it->loss.tsc;
	case NS_ITEM_EVENT:
		return it->event.tsc;
	case NS_ITEM_SYSINFO:
		return it->sysinfo.ref_tsc;
	default:
		return 0;
	}
}

/*
 * The item's lines wait (up to NS_EV_HORIZON_MS) for older ones from
 * other CPUs.  Its wall-clock time is taken now: a later SYSINFO may
 * move the clock.
 */
static void queue_item(struct ns_report *r, const struct ns_citem *ci)
{
	const struct ns_item *it = ci->it;
	struct ns_evorder_ent l = {
		.tsc = item_tsc(it),
		.stamped = it->type == NS_ITEM_BLOCK || it->type == NS_ITEM_EVENT,
	};
	FILE *m;

	l.wall_ns = ns_clock_ns(&r->acc->clock, l.tsc);
	m = open_memstream(&l.text, &l.len);
	if (m) {
		print_item(r, m, ci);
		if (!fclose(m) && ns_evorder_push(&r->lines, &l)) {
			print_due_lines(r, false);
			return;
		}
		free(l.text);
	}
	/* No room to wait: print it now, counted if out of order. */
	ns_evorder_out(&r->lines, l.tsc);
	print_stamp(r, &l);
	print_item(r, r->out, ci);
}

static enum ns_flow report_item(struct ns_sink *sink, const struct ns_citem *ci)
{
	struct ns_report *r = (struct ns_report *)sink;
	enum ns_item_type type = ci->it->type;

	if (r->join && type == NS_ITEM_BLOCK)
		ns_joinrep_item(r->join, ci);
	if (r->quiet)
		return NS_FLOW_MORE;
	if (type == NS_ITEM_BLOCK || type == NS_ITEM_LOSS ||
	    ((type == NS_ITEM_EVENT || type == NS_ITEM_SYSINFO) && r->mag))
		queue_item(r, ci);
	note_write_error(r);
	return r->err ? NS_FLOW_DONE : NS_FLOW_MORE;
}

static void report_idle(struct ns_sink *sink)
{
	print_due_lines((struct ns_report *)sink, true);
}

/* A join's tables: one per direction, over the blocks its host sent. */
static void join_tables(struct ns_report *r)
{
	struct ns_acc *all = r->acc;

	for (unsigned int h = 0; h < 2; h++) {
		r->journey[0] = ns_joinrep_host(r->join, h);
		r->journey[1] = ns_joinrep_host(r->join, !h);
		r->acc = &r->join->acc[h];
		r->pr->table(r);
	}
	r->acc = all;
	r->journey[0] = r->journey[1] = NULL;
	r->pr->join(r);
}

/* The tables, then whether all of it was written (EPIPE is no error). */
static int report_finish(struct ns_sink *sink, char *why, size_t len)
{
	struct ns_report *r = (struct ns_report *)sink;
	int err;

	print_due_lines(r, true);
	if (r->join)
		join_tables(r);
	else
		r->pr->table(r);
	if (r->mag)
		r->pr->conns(r);
	/* After a failed write glibc drops the buffer: the first error wins. */
	err = fflush(r->out) == EOF ? errno : ferror(r->out) ? EIO : 0;
	if (r->err)
		err = r->err;
	if (!err || err == EPIPE)
		return 0;
	snprintf(why, len, "output: %s", strerror(err));
	return -1;
}

static void report_free(struct ns_sink *sink)
{
	ns_report_free((struct ns_report *)sink);
}

static const struct ns_sink_ops report_ops = {
	.item	= report_item,
	.idle	= report_idle,
	.finish	= report_finish,
	.free	= report_free,
};

/* ---- plain printer ---- */

/*
 * "192.0.2.1:43210 > 192.0.2.2:5201 tcp" where the block has the
 * addresses (captured with --addr or an expression); else the
 * connection and what is known: "conn 0x2a 43210 > 5201 tcp".
 */
static void plain_flow(FILE *f, const struct nsl_block *b)
{
	struct ns_tuple t;
	char text[128];
	bool flow = ns_tuple_from_block(b, &t);

	if (flow && ns_tuple_has_addr(&t)) {
		ns_tuple_text(&t, text, sizeof(text));
		fputs(text, f);
	} else {
		fprintf(f, "conn 0x%llx", (unsigned long long)b->conn);
		if (flow && ns_tuple_has_ports(&t))
			fprintf(f, " %u > %u", t.sport, t.dport);
	}
	if (b->proto)
		fprintf(f, " %s", ns_proto_name(b->proto, text, sizeof(text)));
}

/*
 * -v: a line per device the block crossed, its records after the colon
 * (the ABI's rule: from its first up to the next device's first).
 */
static void plain_devices(struct ns_report *r, const struct nsl_block *b)
{
	FILE *f = r->out;

	for (unsigned int i = 0; i < b->ndev; i++) {
		const struct nsl_dev *d = &b->dev[i];
		char dev[NS_DEV_TEXT];

		ns_dev_text(d->ifindex, d->netns, r->live, dev, sizeof(dev));
		fprintf(f, "    dev %u %s %s ifindex %u netns %u first %u:", i,
			dev, ns_dev_dir_name(d->dir), d->ifindex, d->netns,
			d->first);
		for (unsigned int j = 0; j < b->nrec; j++)
			if (ns_dev_of_record(b, j) == (int)i)
				fprintf(f, " [%u] %s", j,
					ns_region_name(b->rec[j].region));
		fputc('\n', f);
	}
}

static void plain_block(struct ns_report *r, const struct ns_citem *ci)
{
	const struct nsl_block *b = &ci->it->block;
	const struct ns_rec_corr *corr = ci->corr;
	bool done[NSL_MAX_RECORDS] = { false };
	bool corrected = ns_acc_corrected(r->acc);
	FILE *f = r->out;
	char fl[128];

	plain_flow(f, b);
	fprintf(f, " %s len %u", b->dir == NSL_DIR_RX ? "rx" : "tx", b->len);
	if (b->proto == IPPROTO_TCP)
		fprintf(f, " seq %u", b->tcp_seq);
	if (b->gso_segs > 1)
		fprintf(f, " segs %u", b->gso_segs);
	ns_block_flags(b->flags, fl, sizeof(fl));
	if (fl[0])
		fprintf(f, " flags %s", fl);
	if (b->ndev) {
		char path[NS_DEV_PATH];

		ns_dev_path(b, r->live, path, sizeof(path));
		fprintf(f, " dev %s", path);
	}
	fprintf(f, " cpu %u:", b->hdr.cpu);
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
				fprintf(f, "%.3f", ns_acc_us(r->acc, corr[j].ticks));
		}
	}
	fputc('\n', f);
	if (!r->verbose)
		return;

	fprintf(f, "    seq %llu tsc0 %llu conn 0x%llx tcp_seq %u ifindex %u family %u proto %u nhlen %u thlen %u segs %u mode %s nevents %u\n",
		(unsigned long long)b->seq, (unsigned long long)b->tsc0,
		(unsigned long long)b->conn, b->tcp_seq, b->ifindex, b->family,
		b->proto, b->nhlen, b->thlen, b->gso_segs,
		b->mode == NSL_MODE_COUNT ? "count" : "duration", b->nevents);
	plain_devices(r, b);
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
			fprintf(f, " %s %llu", ns_acc_event_label(r->acc, e, lbl, sizeof(lbl)),
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
	struct ns_rtt *t = r->acc->rtt;
	struct ns_summary raw, cor;
	FILE *f = r->out;

	fprintf(f, "# user-level round trip (NetSlice formula 5): tsc0 of a sender's first block to that of its next turn, one ping-pong at a time\n");
	if (!ns_stats_summary(&t->raw, 1000.0 / r->acc->tsc_khz, &raw)) {
		fprintf(f, "rtt       n 0 (no alternating senders: not a ping-pong)\n");
		return;
	}
	ns_stats_summary(&t->corrected, 1000.0 / r->acc->tsc_khz, &cor);
	fprintf(f, "rtt raw       n %llu mean %.3f p50 %.3f p99 %.3f us\n",
		(unsigned long long)raw.n, raw.mean, raw.p50, raw.p99);
	if (ns_acc_corrected(r->acc))
		fprintf(f, "rtt corrected n %llu mean %.3f p50 %.3f p99 %.3f us\n",
			(unsigned long long)cor.n, cor.mean, cor.p50, cor.p99);
	else
		fprintf(f, "rtt corrected - (no calibration)\n");
	if (t->cold && ns_acc_corrected(r->acc) &&
	    ns_stats_summary(&t->corrected_cold, 1000.0 / r->acc->tsc_khz, &cor))
		fprintf(f, "rtt cold-corr n %llu mean %.3f p50 %.3f p99 %.3f us (cold calibration: the other bound)\n",
			(unsigned long long)cor.n, cor.mean, cor.p50, cor.p99);
	if (t->spanning_loss || t->clamped || t->oom)
		fprintf(f, "# rtt: %llu samples with a loss inside dropped, %llu clamped to 0%s\n",
			(unsigned long long)t->spanning_loss,
			(unsigned long long)t->clamped,
			t->oom ? "; OUT OF MEMORY: blocks missing" : "");
}

/* n and the percentiles of one region's values: a dist or a by line. */
static void plain_percentiles(FILE *f, const struct ns_summary *s)
{
	char mark = s->sampled ? '~' : ' ';

	fprintf(f, " %10llu %11.3f %10.3f%c %10.3f%c %10.3f%c %10.3f%c %11.3f\n",
		(unsigned long long)s->n, s->mean, s->p50, mark, s->p90, mark,
		s->p99, mark, s->p999, mark, s->max);
}

static void plain_dist(struct ns_report *r)
{
	FILE *f = r->out;

	fprintf(f, "# distribution, µs: nearest-rank percentiles of the values above\n");
	fprintf(f, "# %-3s %-8s %10s %11s %10s  %10s  %10s  %10s  %11s\n", "",
		"region", "n", "mean", "p50", "p90", "p99", "p99.9", "max");
	for (unsigned int id = 1; id < NS_R_MAX; id++) {
		struct ns_summary s;

		if (!ns_acc_summary(r->acc, id, &s))
			continue;
		fprintf(f, "dist  %-8s", ns_region_name(id));
		plain_percentiles(f, &s);
	}
}

/* --by: each key's regions. */
static void plain_by(struct ns_report *r)
{
	const struct ns_by *by = r->acc->by;
	double scale = 1000.0 / r->acc->tsc_khz;
	FILE *f = r->out;

	fprintf(f, "# by %s, µs: n and mean exact, percentiles (~) from the log-linear histogram, within %.3f %%\n",
		ns_by_name(by->what), NS_HIST_REL_ERROR * 100);
	if (by->what == NS_BY_DEV)
		fprintf(f, "# by dev: a block under each device it crossed, with that device's records only (from its first to the next device's; before the first, the first's); a block without devices under its ifindex\n");
	for (size_t i = 0; i < by->n; i++) {
		char key[32];

		ns_by_key_text(by, by->keys[i]->key, key, sizeof(key));
		for (unsigned int id = 1; id < NS_R_MAX; id++) {
			struct ns_summary s;

			if (!ns_stats_summary(&by->keys[i]->region[id], scale, &s))
				continue;
			if (r->journey[0])
				fprintf(f, "%s>%s ", r->journey[0], r->journey[1]);
			fprintf(f, "by %s %-18s %-8s", ns_by_name(by->what), key,
				ns_region_name(id));
			plain_percentiles(f, &s);
		}
	}
	if (by->oom)
		fprintf(f, "# OUT OF MEMORY: some values are missing from the breakdown\n");
}

/*
 * Once, above the tables of a capture the kernel sampled: the counts
 * below are of the sampled packets, kept as counted; the scale is there
 * for a reader who wants all of them.
 */
static void plain_sampled(struct ns_report *r)
{
	const struct nsl_sample *s = r->sample;

	if (!ns_sample_active(s))
		return;
	fprintf(r->out, "# sampled: 1 in %u %s (%llu taken, %llu passed over): counts are of %s; x%.2f estimates all\n",
		s->rate, ns_sample_unit(s), (unsigned long long)s->taken,
		(unsigned long long)s->skipped,
		s->flags & NSL_SAMPLE_FLOWS ? "the sampled flows' packets" :
		"sampled packets", ns_sample_scale(s));
}

static void plain_table(struct ns_report *r)
{
	bool corrected = ns_acc_corrected(r->acc);
	bool ipc = ns_acc_has_ipc(r->acc);
	FILE *f = r->out;
	bool sampled = false;
	char lbl[16], how[192];

	plain_sampled(r);
	if (r->journey[0])
		fprintf(f, "# %s > %s: the joined blocks it sent, on the first file's TSC; wire from the sender's hand-off to its driver (nic start) to the receiver's rx-nic start\n",
			r->journey[0], r->journey[1]);
	ns_acc_correction(r->acc, how, sizeof(how));
	fprintf(f, "# per-layer latency, µs, over %llu blocks (%llu lost): %s\n",
		(unsigned long long)r->acc->blocks, (unsigned long long)r->acc->lost, how);
	fprintf(f, "# TSC read with rdtsc (not serialising), tsc_khz %u; a packet's value for a region sums its records in the block; regions with an OPEN record are excluded (open column); self-mean leaves out the regions nested inside\n",
		r->acc->tsc_khz);
	fprintf(f, "%-8s %10s %11s %10s  %10s  %11s %11s %7s %8s",
		"region", "n", "mean", "p50", "p99", "min", "max", "CV", "open");
	if (corrected)
		fprintf(f, " %11s", "raw-mean");
	fprintf(f, " %11s", "self-mean");
	for (unsigned int e = 0; e < r->acc->nevents; e++)
		fprintf(f, " %14s %10s %10s", ns_acc_event_label(r->acc, e, lbl, sizeof(lbl)),
			"p50", "p99");
	if (ipc)
		fprintf(f, " %6s", "IPC");
	fputc('\n', f);

	for (unsigned int id = 1; id < NS_R_MAX; id++) {
		struct ns_region_acc *acc = &r->acc->region[id];
		struct ns_summary s;

		if (!acc->records)
			continue;
		if (!ns_acc_summary(r->acc, id, &s)) {
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
			fprintf(f, " %11.3f", ns_acc_us(r->acc, 1) * acc->raw_sum / s.n);
		fprintf(f, " %11.3f", ns_acc_us(r->acc, 1) * acc->self_sum / s.n);
		for (unsigned int e = 0; e < r->acc->nevents; e++) {
			struct ns_summary c;

			if (ns_stats_summary(&acc->ev[e], 1, &c))
				fprintf(f, " %14.1f %10.0f %10.0f", c.mean, c.p50, c.p99);
			else
				fprintf(f, " %14s %10s %10s", "-", "-", "-");
		}
		if (ipc) {
			double x = ns_acc_ipc(r->acc, id);

			if (x >= 0)
				fprintf(f, " %6.2f", x);
			else
				fprintf(f, " %6s", "-");
		}
		fputc('\n', f);
	}
	if (sampled)
		fprintf(f, "# ~: percentile from the log-linear histogram (past %u values per region), within %.3f %% of the true one\n",
			NS_STATS_LIMIT, NS_HIST_REL_ERROR * 100);
	if (r->acc->nevents)
		fprintf(f, "# counter columns: mean, p50, p99 of the delta per packet%s; %llu invalid counter readings excluded\n",
			ipc ? ", IPC = sum instructions / sum cycles" : "",
			(unsigned long long)r->acc->invalid);
	if (r->acc->shared)
		fprintf(f, "# %llu records measured before their skb was split are counted once, in the first part's block\n",
			(unsigned long long)r->acc->shared);
	if (r->acc->absorbed)
		fprintf(f, "# %llu frames merged into another skb by GRO (ABSORBED): their rx-link ends at the merge and is counted apart, not in rx-link's row\n",
			(unsigned long long)r->acc->absorbed);
	if (r->acc->coalesced)
		fprintf(f, "# %llu received segments coalesced into another skb (COALESCED): their data is queued or copied on in that skb's block, so they have no copy of their own\n",
			(unsigned long long)r->acc->coalesced);
	if (corrected)
		fprintf(f, "# %llu durations and %llu counter values clamped to 0 by the correction\n",
			(unsigned long long)r->acc->clamped_ticks,
			(unsigned long long)r->acc->clamped_counts);
	if (r->lines.late)
		fprintf(f, "# %llu lines (blocks, event records) arrived more than %d ms after a later one and were printed out of time order\n",
			(unsigned long long)r->lines.late, NS_EV_HORIZON_MS);
	plain_dist(r);
	if (r->acc->by)
		plain_by(r);
	if (r->acc->rtt)
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

	(void)when;	/* the line's time stamp says it */
	fprintf(f, "cpu %u conn 0x%llx %s %u bytes", ev->hdr.cpu,
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

			if (!ns_magnet_layer(&c->layer[type], r->acc->clock.tsc_khz, &s))
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
	if (m->oom)
		fprintf(f, "# OUT OF MEMORY: some event records are missing from the spacing\n");
}

static void plain_join(struct ns_report *r)
{
	ns_joinrep_plain(r->join, r->out, r->verbose);
}

const struct ns_printer ns_plain_printer = {
	.stamps	= true,
	.block	= plain_block,
	.loss	= plain_loss,
	.table	= plain_table,
	.event	= plain_event,
	.sysinfo = plain_sysinfo,
	.conns	= plain_conns,
	.join	= plain_join,
};
