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

static void json_block(struct ns_report *r, const struct nsl_block *b)
{
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
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

static void json_loss(struct ns_report *r, const struct nsl_loss *l)
{
	fprintf(r->out, "{\"type\":\"loss\",\"cpu\":%u,\"lost\":%llu,\"first_seq\":%llu,\"tsc\":%llu}\n",
		l->hdr.cpu, (unsigned long long)l->lost,
		(unsigned long long)l->first_seq, (unsigned long long)l->tsc);
}

static void json_table(struct ns_report *r)
{
	FILE *f = r->out;
	bool first = true;
	char lbl[16];

	fprintf(f, "{\"type\":\"table\",\"unit\":\"us\",\"corrected\":false,\"tsc\":\"rdtsc, not serialising\",\"tsc_khz\":%u,\"blocks\":%llu,\"lost\":%llu,\"events\":[",
		r->tsc_khz, (unsigned long long)r->blocks,
		(unsigned long long)r->lost);
	for (unsigned int e = 0; e < r->nevents; e++)
		fprintf(f, "%s\"%s\"", e ? "," : "",
			ns_event_label(r, e, lbl, sizeof(lbl)));
	fputs("],\"regions\":[", f);
	for (unsigned int id = 1; id < NSL_R_MAX; id++) {
		const struct ns_region_acc *acc = &r->region[id];
		struct ns_summary s;

		if (!acc->records)
			continue;
		fprintf(f, "%s{\"region\":\"%s\",\"open\":%llu", first ? "" : ",",
			ns_region_name(id), (unsigned long long)acc->open);
		first = false;
		if (ns_report_summary(r, id, &s))
			fprintf(f, ",\"n\":%llu,\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f,\"min\":%.3f,\"max\":%.3f,\"cv\":%.4f,\"sampled\":%s",
				(unsigned long long)s.n, s.mean, s.p50, s.p99,
				s.min, s.max, s.cv, s.sampled ? "true" : "false");
		else
			fputs(",\"n\":0", f);
		fputs(",\"event_mean\":[", f);
		for (unsigned int e = 0; e < r->nevents; e++) {
			if (acc->ev_n[e])
				fprintf(f, "%s%.1f", e ? "," : "",
					acc->ev_sum[e] / acc->ev_n[e]);
			else
				fprintf(f, "%snull", e ? "," : "");
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
}

const struct ns_printer ns_json_printer = {
	.block	= json_block,
	.loss	= json_loss,
	.table	= json_table,
};
