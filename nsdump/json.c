// SPDX-License-Identifier: GPL-2.0
/*
 * --json: one JSON object per line ("type": "block", "loss", "table"),
 * so a consumer can stream it.  Every field is shown, as -v shows them.
 */
#include "decode.h"
#include "report.h"

static void json_flags(FILE *f, const char *key, const char *names)
{
	fprintf(f, ",\"%s\":[", key);
	for (const char *p = names; *p; p++) {
		if (p == names)
			fputc('"', f);
		if (*p == ',')
			fputs("\",\"", f);
		else
			fputc(*p, f);
		if (!p[1])
			fputc('"', f);
	}
	fputc(']', f);
}

static void json_block(struct ns_report *r, const struct nsl_block *b,
		       const struct ns_rec_corr *corr)
{
	bool corrected = ns_calib_get(r->calib, 0) != NULL;
	FILE *f = r->out;
	char fl[128];

	fprintf(f, "{\"type\":\"block\",\"time_us\":%.3f,\"cpu\":%u,\"seq\":%llu,\"dir\":\"%s\",\"len\":%u,\"segs\":%u,\"tsc0\":%llu,\"conn\":%llu,\"tcp_seq\":%u,\"ifindex\":%u,\"proto\":%u,\"nhlen\":%u,\"thlen\":%u,\"mode\":%u,\"nevents\":%u",
		ns_report_time_us(r, b), b->hdr.cpu, (unsigned long long)b->seq,
		b->dir == NSL_DIR_RX ? "rx" : "tx", b->len, b->gso_segs,
		(unsigned long long)b->tsc0, (unsigned long long)b->conn,
		b->tcp_seq, b->ifindex, b->proto, b->nhlen, b->thlen, b->mode,
		b->nevents);
	ns_block_flags(b->flags, fl, sizeof(fl));
	json_flags(f, "flags", fl);
	fputs(",\"records\":[", f);
	for (unsigned int i = 0; i < b->nrec; i++) {
		const struct nsl_record *rec = &b->rec[i];

		fprintf(f, "%s{\"region\":\"%s\",\"us\":%.3f,\"ticks\":%llu,\"start\":%llu,\"depth\":%u,\"cpu\":%u,\"nmerged\":%u",
			i ? "," : "", ns_region_name(rec->region),
			ns_report_us(r, rec->ticks),
			(unsigned long long)rec->ticks,
			(unsigned long long)rec->start, rec->depth, rec->cpu,
			rec->nmerged);
		ns_record_flags(rec->flags, fl, sizeof(fl));
		json_flags(f, "flags", fl);
		fputs(",\"count\":[", f);
		for (unsigned int e = 0; e < b->nevents; e++)
			fprintf(f, "%s%llu", e ? "," : "",
				(unsigned long long)rec->count[e]);
		fprintf(f, "],\"k\":%u", corr[i].k);
		if (corrected && !(rec->flags & NSL_RF_OPEN)) {
			fprintf(f, ",\"us_corrected\":%.3f,\"ticks_corrected\":%llu,\"clamped\":%s,\"count_corrected\":[",
				ns_report_us(r, corr[i].ticks),
				(unsigned long long)corr[i].ticks,
				corr[i].ticks_clamped ? "true" : "false");
			for (unsigned int e = 0; e < b->nevents; e++)
				fprintf(f, "%s%llu", e ? "," : "",
					(unsigned long long)corr[i].count[e]);
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
}

static void json_loss(struct ns_report *r, const struct nsl_loss *l)
{
	fprintf(r->out, "{\"type\":\"loss\",\"cpu\":%u,\"lost\":%llu,\"first_seq\":%llu,\"tsc\":%llu}\n",
		l->hdr.cpu, (unsigned long long)l->lost,
		(unsigned long long)l->first_seq, (unsigned long long)l->tsc);
}

static void json_summary(FILE *f, const char *key, struct ns_stats *st,
			 double scale)
{
	struct ns_summary s;

	if (!ns_stats_summary(st, scale, &s)) {
		fprintf(f, ",\"%s\":{\"n\":0}", key);
		return;
	}
	fprintf(f, ",\"%s\":{\"n\":%llu,\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f}",
		key, (unsigned long long)s.n, s.mean, s.p50, s.p99);
}

/* "key":[v,...] of the counter summaries: 0 mean, 1 p50, 2 p99. */
static void json_events(FILE *f, const char *key, const struct ns_summary *c,
			unsigned int n, int which)
{
	fprintf(f, ",\"%s\":[", key);
	for (unsigned int e = 0; e < n; e++) {
		double v = which == 0 ? c[e].mean : which == 1 ? c[e].p50 : c[e].p99;

		if (e)
			fputc(',', f);
		if (!c[e].n)
			fputs("null", f);
		else
			fprintf(f, which ? "%.0f" : "%.1f", v);
	}
	fputc(']', f);
}

static void json_table(struct ns_report *r)
{
	bool corrected = ns_calib_get(r->calib, 0) != NULL;
	FILE *f = r->out;
	bool first = true;
	char lbl[16], how[192];

	fprintf(f, "{\"type\":\"table\",\"unit\":\"us\",\"corrected\":%s,",
		corrected ? "true" : "false");
	if (corrected) {
		ns_calib_summary(r->calib, how, sizeof(how));
		fprintf(f, "\"correction\":\"%s\",", how);
	}
	fprintf(f, "\"tsc\":\"rdtsc, not serialising\",\"tsc_khz\":%u,\"blocks\":%llu,\"lost\":%llu,\"invalid\":%llu,\"shared\":%llu,\"events_late\":%llu,\"clamped_ticks\":%llu,\"clamped_counts\":%llu,\"events\":[",
		r->tsc_khz, (unsigned long long)r->blocks,
		(unsigned long long)r->lost, (unsigned long long)r->invalid,
		(unsigned long long)r->shared,
		(unsigned long long)r->evq.late,
		(unsigned long long)r->clamped_ticks,
		(unsigned long long)r->clamped_counts);
	for (unsigned int e = 0; e < r->nevents; e++)
		fprintf(f, "%s\"%s\"", e ? "," : "",
			ns_event_label(r, e, lbl, sizeof(lbl)));
	fputs("],\"regions\":[", f);
	for (unsigned int id = 1; id < NSL_R_MAX; id++) {
		struct ns_region_acc *acc = &r->region[id];
		struct ns_summary s, c[NSL_MAX_EVENTS];
		double ipc;

		if (!acc->records)
			continue;
		fprintf(f, "%s{\"region\":\"%s\",\"open\":%llu,\"invalid\":%llu,\"shared\":%llu",
			first ? "" : ",", ns_region_name(id),
			(unsigned long long)acc->open,
			(unsigned long long)acc->invalid,
			(unsigned long long)acc->shared);
		first = false;
		if (ns_report_summary(r, id, &s)) {
			fprintf(f, ",\"n\":%llu,\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"min\":%.3f,\"max\":%.3f,\"cv\":%.4f,\"sampled\":%s",
				(unsigned long long)s.n, s.mean, s.p50, s.p99,
				s.min, s.max, s.cv, s.sampled ? "true" : "false");
			fprintf(f, ",\"raw_mean\":%.3f,\"self_mean\":%.3f",
				ns_report_us(r, 1) * acc->raw_sum / s.n,
				ns_report_us(r, 1) * acc->self_sum / s.n);
		} else {
			fputs(",\"n\":0", f);
		}
		for (unsigned int e = 0; e < r->nevents; e++)
			if (!ns_stats_summary(&acc->ev[e], 1, &c[e]))
				c[e].n = 0;
		json_events(f, "event_mean", c, r->nevents, 0);
		json_events(f, "event_p50", c, r->nevents, 1);
		json_events(f, "event_p99", c, r->nevents, 2);
		ipc = ns_report_ipc(r, id);
		if (ipc >= 0)
			fprintf(f, ",\"ipc\":%.3f", ipc);
		fputc('}', f);
	}
	fputs("]}\n", f);
	if (r->rtt) {
		fputs("{\"type\":\"rtt\",\"unit\":\"us\"", f);
		json_summary(f, "raw", &r->rtt->raw, 1000.0 / r->tsc_khz);
		if (corrected)
			json_summary(f, "corrected", &r->rtt->corrected,
				     1000.0 / r->tsc_khz);
		fprintf(f, ",\"spanning_loss\":%llu,\"clamped\":%llu}\n",
			(unsigned long long)r->rtt->spanning_loss,
			(unsigned long long)r->rtt->clamped);
	}
}

static void json_event(struct ns_report *r, const struct nsl_event_rec *ev,
		       const char *when)
{
	const struct nsl_tcp_state *t = &ev->tcp;
	const struct nsl_ip_fields *ip = &ev->ip;
	FILE *f = r->out;
	char buf[64];

	fprintf(f, "{\"type\":\"event\",\"time\":\"%s\",\"time_ns\":%lld,\"cpu\":%u,\"seq\":%llu,\"tsc\":%llu,\"conn\":%llu,\"event\":\"%s\",\"bytes\":%u",
		when, (long long)ns_clock_ns(&r->clock, ev->tsc), ev->hdr.cpu,
		(unsigned long long)ev->seq, (unsigned long long)ev->tsc,
		(unsigned long long)ev->conn, ns_event_type_name(ev->type),
		ev->bytes);
	ns_event_flags(ev->flags, buf, sizeof(buf));
	json_flags(f, "flags", buf);
	if (ev->flags & NSL_EVF_TCP) {
		fprintf(f, ",\"tcp\":{\"snd_cwnd\":%u,\"snd_ssthresh\":%u,\"srtt_us\":%u,\"rto_us\":%u,\"packets_out\":%u,\"retrans_out\":%u,\"total_retrans\":%u,\"snd_wnd\":%u,\"rcv_wnd\":%u,\"write_seq\":%u,\"copied_seq\":%u,\"mss\":%u,\"state\":\"%s\",\"ca_state\":%u,\"tcp_flags\":%u}",
			t->snd_cwnd, t->snd_ssthresh, t->srtt_us, t->rto_us,
			t->packets_out, t->retrans_out, t->total_retrans,
			t->snd_wnd, t->rcv_wnd, t->write_seq, t->copied_seq,
			t->mss, ns_tcp_state_name(t->state, buf, sizeof(buf)),
			t->ca_state, t->tcp_flags);
	}
	if (ev->flags & NSL_EVF_IP)
		fprintf(f, ",\"ip\":{\"version\":%u,\"tos\":%u,\"ttl\":%u,\"id\":%u,\"frag_off\":%u,\"protocol\":%u}",
			ip->version, ip->tos, ip->ttl, ip->id, ip->frag_off,
			ip->protocol);
	if (ev->flags & NSL_EVF_ADDR) {
		char sa[16], da[16];

		ns_ipv4(ip->saddr, sa, sizeof(sa));
		ns_ipv4(ip->daddr, da, sizeof(da));
		fprintf(f, ",\"sport\":%u,\"dport\":%u,\"saddr\":\"%s\",\"daddr\":\"%s\"",
			t->sport, t->dport, sa, da);
	}
	fputs("}\n", f);
}

static void json_sysinfo(struct ns_report *r, const struct nsl_sysinfo *s,
			 const char *when)
{
	fprintf(r->out, "{\"type\":\"sysinfo\",\"cpu\":%u,\"abi_version\":%u,\"tsc_khz\":%u,\"ncpus\":%u,\"ref_tsc\":%llu,\"ref_realtime_ns\":%llu,\"time\":\"%s\"}\n",
		s->hdr.cpu, s->abi_version, s->tsc_khz, s->ncpus,
		(unsigned long long)s->ref_tsc,
		(unsigned long long)s->ref_realtime_ns, when);
}

/* Table III: one {"type":"conn"} line per connection. */
static void json_conns(struct ns_report *r)
{
	struct ns_magnet *m = r->mag;
	FILE *f = r->out;

	for (size_t i = 0; i < m->n; i++) {
		struct ns_conn *c = &m->conn[i];
		bool first = true;

		if (!c->accounted)
			continue;
		fprintf(f, "{\"type\":\"conn\",\"conn\":%llu",
			(unsigned long long)c->conn);
		if (c->have_ports)
			fprintf(f, ",\"lport\":%u,\"rport\":%u", c->lport,
				c->rport);
		if (c->have_laddr || c->have_raddr) {
			char a[16];

			if (c->have_laddr) {
				ns_ipv4(c->laddr, a, sizeof(a));
				fprintf(f, ",\"laddr\":\"%s\"", a);
			}
			if (c->have_raddr) {
				ns_ipv4(c->raddr, a, sizeof(a));
				fprintf(f, ",\"raddr\":\"%s\"", a);
			}
		}
		fputs(",\"layers\":[", f);
		for (unsigned int k = 0; k < NSL_EV_MAX - 1; k++) {
			unsigned int type = ns_magnet_order[k];
			struct ns_layer_summary s;

			if (!ns_magnet_layer(&c->layer[type], r->clock.tsc_khz, &s))
				continue;
			fprintf(f, "%s{\"event\":\"%s\",\"n\":%llu,\"bytes_mean\":%.1f,\"bytes_min\":%u,\"bytes_max\":%u,\"tso\":%llu,\"spacing_n\":%llu",
				first ? "" : ",", ns_event_type_name(type),
				(unsigned long long)s.n, s.bytes_mean, s.bytes_min,
				s.bytes_max, (unsigned long long)s.tso,
				(unsigned long long)s.gaps);
			if (s.gaps)
				fprintf(f, ",\"spacing_mean_us\":%.3f,\"spacing_cv\":%.4f",
					s.gap_mean_us, s.gap_cv);
			fputc('}', f);
			first = false;
		}
		fputs("]}\n", f);
	}
}

const struct ns_printer ns_json_printer = {
	.block	= json_block,
	.loss	= json_loss,
	.table	= json_table,
	.event	= json_event,
	.sysinfo = json_sysinfo,
	.conns	= json_conns,
};
