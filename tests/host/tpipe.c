// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "gen.h"
#include "tpipe.h"

void tpipe_init_to(struct tpipe *t, const struct ns_calib_set *cs,
		   const struct ns_printer *pr, FILE *out)
{
	struct nsl_info info;

	memset(t, 0, sizeof(*t));
	gen_info(&info);
	ns_filter_init(&t->f, NULL);
	ns_pipeline_init(&t->p, info.tsc_khz, cs, &t->f);
	ns_clock_from_info(&t->p.acc.clock, &info);
	if (!pr)
		return;
	ns_report_init(&t->r, pr, out, &t->p.acc);
	ns_pipeline_add_view(&t->p, &t->r.sink);
}

void tpipe_init(struct tpipe *t, const struct ns_calib_set *cs,
		const struct ns_printer *pr)
{
	tpipe_init_to(t, cs, pr, NULL);
	if (!pr)
		return;
	t->out = open_memstream(&t->text, &t->size);
	t->r.out = t->out;
}

void tpipe_push(struct tpipe *t, const struct ns_item *it)
{
	ns_pipeline_push(&t->p, it);
}

void tpipe_block(struct tpipe *t, const struct nsl_block *b)
{
	struct ns_item it;

	memset(&it, 0, sizeof(it));
	it.type = NS_ITEM_BLOCK;
	it.hdr = b->hdr;
	it.block = *b;
	tpipe_push(t, &it);
}

void tpipe_bytes(struct tpipe *t, const void *p, size_t len)
{
	for (size_t pos = 0; pos < len; ) {
		struct ns_item it;

		if (ns_decode_item((const char *)p + pos, len - pos, &it))
			break;
		pos += it.hdr.size;
		tpipe_push(t, &it);
	}
}

static void ignore(void *ctx, const char *why)
{
	(void)ctx;
	(void)why;
}

void tpipe_finish(struct tpipe *t)
{
	ns_pipeline_finish(&t->p, ignore, NULL);
	if (t->out)
		fclose(t->out);
	t->out = NULL;
}

void tpipe_free(struct tpipe *t)
{
	if (t->out)
		fclose(t->out);
	ns_pipeline_free(&t->p);
	ns_filter_free(&t->f);
	free(t->text);
}

char *tpipe_table(struct tpipe *t, const struct ns_printer *pr)
{
	struct ns_report r;
	char *text = NULL;
	size_t size;

	ns_report_init(&r, pr, open_memstream(&text, &size), &t->p.acc);
	pr->table(&r);
	fclose(r.out);
	ns_report_free(&r);
	return text;
}
