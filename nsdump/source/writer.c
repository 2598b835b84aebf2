// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "source/version.h"
#include "source/writer.h"

static const struct ns_sink_ops writer_ops;

static int header_records(struct nsf_writer *w, const struct nsl_info *info,
			  const struct nsl_sample *sample,
			  const struct ns_counters *sel,
			  const struct ns_calib_set *cs,
			  const struct ns_calib_set *cold)
{
	if (nsf_writer_open_sampled(w, w->fd, w->name, info, sample) ||
	    ns_write_writer_record(w))
		return -1;
	if (sel->n && nsf_write_events(w, sel))
		return -1;
	if (ns_calib_count(cs) && nsf_write_calib(w, cs))
		return -1;
	return cold && ns_calib_count(cold) ? nsf_write_calib(w, cold) : 0;
}

enum ns_writer_status ns_writer_open(struct ns_writer *nw, const char *name,
				     const struct nsl_info *info,
				     const struct nsl_sample *sample,
				     const struct ns_counters *sel,
				     const struct ns_calib_set *cs,
				     const struct ns_calib_set *cold,
				     char *why, size_t len)
{
	int fd = 1, err;

	memset(nw, 0, sizeof(*nw));
	nw->sink.ops = &writer_ops;
	if (strcmp(name, "-")) {
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			snprintf(why, len, "%s: %s", name, strerror(errno));
			return NS_WRITER_FAILED;
		}
	}
	nw->w.fd = fd;
	nw->w.name = name;
	if (!header_records(&nw->w, info, sample, sel, cs, cold)) {
		nw->open = true;
		return NS_WRITER_OK;
	}
	err = nw->w.err;
	nsf_writer_close(&nw->w);
	if (err == EPIPE)
		return NS_WRITER_GONE;
	snprintf(why, len, "%s: %s; no blocks written", name, strerror(err));
	return NS_WRITER_FAILED;
}

static enum ns_flow writer_item(struct ns_sink *sink, const struct ns_citem *ci)
{
	struct ns_writer *nw = (struct ns_writer *)sink;

	/* the error is told at the finish, with what the file holds */
	return nsf_write_item(&nw->w, ci->it) ? NS_FLOW_DONE : NS_FLOW_MORE;
}

static enum ns_flow writer_run(struct ns_sink *sink, const struct ns_run *r)
{
	struct ns_writer *nw = (struct ns_writer *)sink;

	return nsf_write_run(&nw->w, r) ? NS_FLOW_DONE : NS_FLOW_MORE;
}

static enum ns_flow writer_give_back(struct ns_sink *sink)
{
	struct ns_writer *nw = (struct ns_writer *)sink;

	return nsf_writer_give_back(&nw->w) ? NS_FLOW_DONE : NS_FLOW_MORE;
}

static int writer_finish(struct ns_sink *sink, char *why, size_t len)
{
	struct ns_writer *nw = (struct ns_writer *)sink;
	struct nsf_writer *w = &nw->w;

	if (!nw->open)
		return 0;
	nw->open = false;
	if (!nsf_writer_close(w) || w->err == EPIPE)
		return 0;
	snprintf(why, len, "%s: %s; %" PRIu64 " blocks (%" PRIu64 " bytes) are in the file, which ends without a trailer",
		 w->name, strerror(w->err), w->blocks, w->committed);
	return -1;
}

/* Not finished (the capture never started): close it, trailer and all. */
static void writer_free(struct ns_sink *sink)
{
	struct ns_writer *nw = (struct ns_writer *)sink;

	if (nw->open)
		nsf_writer_close(&nw->w);
	nw->open = false;
}

static const struct ns_sink_ops writer_ops = {
	.item	= writer_item,
	.run	= writer_run,
	.give_back = writer_give_back,
	.finish	= writer_finish,
	.free	= writer_free,
};
