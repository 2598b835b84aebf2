// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "live.h"
#include "msg.h"
#include "source/histograms.h"
#include "source/sample.h"
#include "stage/expr.h"

/*
 * As tcpdump's "listening on": collection is on from here, so a script can
 * start its traffic once this line is on stderr.
 */
static void print_listening(const struct ns_live *l)
{
	const struct ns_dev *dev = &l->dev;
	unsigned int i;

	fprintf(stderr, "nsdump: listening on %s, %u CPUs, %llu KiB ring per CPU%s, ",
		dev->path, dev->info.ncpus,
		(unsigned long long)(dev->info.ring_bytes / 1024),
		dev->map ? " mapped" : "");
	if (!l->sel->n)
		fputs("duration mode (TSC only)", stderr);
	for (i = 0; i < l->sel->n; i++)
		fprintf(stderr, "%s%s", i ? "," : "counting ", l->sel->name[i]);
	fputc('\n', stderr);
	fflush(stderr);
}

/* NSIOCSEVENT + NSIOCSEMODE: the chosen counters, or none (durations). */
static int set_counters(struct ns_live *l)
{
	struct ns_dev *dev = &l->dev;
	char msg[512];
	int ret = ns_dev_set_events(dev, &l->sel->ev);

	if (!ret)
		return 0;
	ns_counters_kernel_reason(l->sel, ret == -1 ? "NSIOCSEVENT" : "NSIOCSEMODE",
				  errno, msg, sizeof(msg));
	ns_error("%s: %s", dev->path, msg);
	return -1;
}

/*
 * NSIOCGCALIB on every CPU, with the events already chosen so that the
 * counter medians are of those events.  A kernel without it leaves the
 * values raw; a CPU that cannot be measured (offline) is skipped and its
 * records use another CPU's calibration.
 */
static int calibrate_set(struct ns_dev *dev, struct ns_calib_set *cs, bool cold)
{
	if (ns_calib_alloc(cs, dev->info.ncpus)) {
		ns_error("out of memory");
		return -1;
	}
	cs->tsc_khz = dev->info.tsc_khz;
	cs->cold = cold;
	ns_calib_read_model(cs, "/proc/cpuinfo");
	for (uint32_t cpu = 0; cpu < dev->info.ncpus; cpu++) {
		struct nsl_calib c;
		int err = ns_dev_calib(dev, cpu, cold, &c);

		if (err == ENOTTY || err == EOPNOTSUPP)
			break;
		if (err == EPERM || err == EACCES) {
			ns_error("%s: NSIOCGCALIB: permission denied (needs CAP_NET_ADMIN)",
				 dev->path);
			return -1;
		}
		if (err == EINTR) {
			ns_error("%s: NSIOCGCALIB: interrupted", dev->path);
			return -1;
		}
		if (err == EINVAL && cold) {
			ns_error("%s: NSIOCGCALIB: this module has no cold calibration",
				 dev->path);
			return -1;
		}
		if (!err) {
			c.cpu = cpu;
			ns_calib_put(cs, &c);
		}
	}
	return 0;
}

/*
 * What NSIOCSRECORDS asks for: event records for -M (TCP state and IP
 * fields) or -p (the ports); the blocks' addresses for --addr and for
 * any expression (whether it names hosts or not: "port 53" today,
 * "host ..." once the kernel filters).
 */
static uint32_t records_wanted(const struct ns_opts *o)
{
	uint32_t flags = 0;

	if (o->magnet || o->filter.nports)
		flags |= NSL_REC_ON;
	if (o->magnet)
		flags |= NSL_REC_TCP | NSL_REC_IP;
	if ((o->addr && o->magnet) || o->filter.nports)
		flags |= NSL_REC_ADDR;
	if (o->addr || ns_expr_active(&o->filter.expr))
		flags |= NSL_REC_FLOWADDR;
	return flags;
}

/* A kernel without event records says so once and the capture goes on. */
static int records_on(struct ns_live *l)
{
	struct ns_dev *dev = &l->dev;
	uint32_t flags = records_wanted(l->o);
	int err;

	if (!flags)
		return 0;
	err = ns_dev_records(dev, flags);
	if (!err) {
		l->records_on = true;
		return 0;
	}
	if (err == EINVAL || err == ENOTTY || err == EOPNOTSUPP) {
		ns_note("%s: kernel does not produce %s (NSIOCSRECORDS: %s); going on without them",
			dev->path, flags & NSL_REC_ON ? "event records" :
			"addresses in blocks", strerror(err));
		return 0;
	}
	ns_error("%s: NSIOCSRECORDS: %s", dev->path, strerror(err));
	return -1;
}

/* -v: where the kernel runs the expression, and why there. */
static void say_kernel_filter(const struct ns_dev *dev, bool flow_only,
			      uint32_t flags)
{
	if (flags & NSL_FILTER_FLOW)
		ns_note("%s: the kernel filters at NSI: packets of other flows get no block at all",
			dev->path);
	else if (flow_only)
		ns_note("%s: the kernel filters before the ring: this netslice.ko (ABI %u) cannot filter at NSI",
			dev->path, dev->info.abi_version);
	else
		ns_note("%s: the kernel filters before the ring: the expression reads lengths or TCP sequence numbers, which NSI does not know",
			dev->path);
}

/*
 * The expression to the kernel as well, so that blocks of other flows
 * never reach the ring; nsdump still applies it (same program, same
 * packet: see NSIOCSFILTER), which also decides the event records.  One
 * proved to read the flow alone goes with NSL_FILTER_FLOW, so that the
 * kernel runs it at NSI and refused packets cost nothing; an ABI-5
 * module refuses the flag (EINVAL), and gets the program without it.
 * An older module (ENOTTY) leaves the filtering to nsdump alone.
 */
static int kernel_filter_on(struct ns_live *l)
{
	const struct ns_expr *e = &l->o->filter.expr;
	struct ns_dev *dev = &l->dev;
	bool flow_only;
	uint32_t flags;
	int err;

	if (!ns_expr_active(e))
		return 0;
	flow_only = ns_expr_flow_only(&e->prog);
	flags = flow_only && dev->info.abi_version >= NS_DEV_ABI_SAMPLE ?
		NSL_FILTER_FLOW : 0;
	err = ns_dev_filter(dev, e->prog.bf_insns, e->prog.bf_len, flags);
	if (err == EINVAL && flags) {
		flags = 0;
		err = ns_dev_filter(dev, e->prog.bf_insns, e->prog.bf_len, flags);
	}
	if (!err) {
		l->kfilter = true;
		if (l->o->verbose)
			say_kernel_filter(dev, flow_only, flags);
		return 0;
	}
	if (err == ENOTTY || err == EINVAL) {
		if (l->o->verbose || err == EINVAL)
			ns_note("%s: the kernel does not run the expression (NSIOCSFILTER: %s); nsdump filters alone",
				dev->path, strerror(err));
		return 0;
	}
	ns_error("%s: NSIOCSFILTER: %s", dev->path, strerror(err));
	return -1;
}

/*
 * --sample, --sample-flows: after the filter, as the kernel decides.  The
 * user asked for it: a module that cannot is an error, not a note.
 */
static int sample_on(struct ns_live *l)
{
	const struct ns_opts *o = l->o;
	struct ns_dev *dev = &l->dev;
	const char *opt = ns_sample_option(o->sample_flags);
	int err = ENOTTY;

	if (!o->sample_rate)
		return 0;
	if (dev->info.abi_version >= NS_DEV_ABI_SAMPLE)
		err = ns_dev_sample(dev, o->sample_rate, o->sample_flags);
	if (!err) {
		l->sample = (struct nsl_sample){
			.rate = o->sample_rate, .flags = o->sample_flags,
		};
		l->sampled = &l->sample;
		return 0;
	}
	if (dev->info.abi_version < NS_DEV_ABI_SAMPLE)
		ns_error("%s: %s %u: this netslice.ko speaks ABI %u and cannot sample (NSIOCSSAMPLE: %s); sampling in the kernel needs ABI %u",
			 dev->path, opt, o->sample_rate, dev->info.abi_version,
			 strerror(err), NS_DEV_ABI_SAMPLE);
	else if (err == ENOTTY || err == EINVAL)
		ns_error("%s: %s %u: this netslice.ko (ABI %u) refused it: NSIOCSSAMPLE: %s",
			 dev->path, opt, o->sample_rate, dev->info.abi_version,
			 strerror(err));
	else
		ns_error("%s: %s %u: NSIOCSSAMPLE: %s", dev->path, opt,
			 o->sample_rate, strerror(err));
	return -1;
}

void ns_live_records_off(struct ns_live *l)
{
	if (l->records_on && l->dev.fd >= 0)
		ns_dev_records(&l->dev, 0);
	l->records_on = false;
}

/* NSIOCGSAMPLE into l->sample: 0, or a note and -1 (the last kept). */
static int read_sampled(struct ns_live *l)
{
	struct ns_dev *dev = &l->dev;
	struct nsl_sample now;
	int err = ns_dev_sampled(dev, &now);

	if (err) {
		if (!l->sample_unread)
			ns_note("%s: NSIOCGSAMPLE: %s: the kernel's sampling counts are missing",
				dev->path, strerror(err));
		l->sample_unread = true;
		return -1;
	}
	l->sample = now;
	return 0;
}

/*
 * The kernel's sampling, on a line of its own for scripts: "1 in R
 * packets sampled in the kernel: T taken, S passed over" (flows with
 * --sample-flows): T is awk's $9, S its $11.
 */
static void print_sampled(struct ns_live *l)
{
	const struct nsl_sample *s = &l->sample;

	if (read_sampled(l))
		return;
	fprintf(stderr, "1 in %u %s sampled in the kernel: %" PRIu64 " taken, %" PRIu64 " passed over\n",
		s->rate, ns_sample_unit(s), (uint64_t)s->taken,
		(uint64_t)s->skipped);
}

void ns_live_finish(struct ns_live *l)
{
	if (l->o->sample_rate)
		read_sampled(l);
}

void ns_live_stats(struct ns_live *l, uint64_t *drops, uint64_t *refused,
		   const char **why)
{
	struct ns_dev *dev = &l->dev;
	uint64_t lost = *drops, emitted, nomem;

	if (ns_dev_drops(dev, drops)) {
		*drops = lost;
		*why = " (NSIOCGDROPS failed: counted from loss records)";
	}
	/* Packets that never had a block are lost too: say so. */
	if (!ns_dev_emitted(dev, &emitted, &nomem) && nomem > dev->info.nomem)
		fprintf(stderr, "%" PRIu64 " blocks not made by the kernel (no memory for them)\n",
			(uint64_t)(nomem - dev->info.nomem));
	/* What the kernel's filter refused was received by the filter too. */
	if (l->kfilter) {
		if (ns_dev_filtered(dev, refused)) {
			ns_note("%s: NSIOCGFILTERED: %s: \"received by filter\" lacks the blocks the kernel refused",
				dev->path, strerror(errno));
		} else {
			fprintf(stderr, "%" PRIu64 " blocks refused by the filter in the kernel\n",
				*refused);
		}
	}
	if (l->o->sample_rate)
		print_sampled(l);
}

/* The device of @o, or -1 once said why (then nothing is open). */
static int open_device(struct ns_live *l, const struct ns_opts *o,
		       const struct ns_counters *sel)
{
	memset(l, 0, sizeof(*l));
	l->o = o;
	l->sel = sel;
	if (!ns_dev_open(&l->dev, o->dev, o->rcvbuf))
		return 0;
	ns_error("%s", l->dev.err);
	l->dev.fd = -1;
	return -1;
}

/*
 * Aggregation outlives the --serve that turned it on: a capture then gets
 * only the exemplars, and says so rather than look like a quiet link.
 */
static void say_aggregating(const struct ns_live *l)
{
	const struct nsl_agg *c;
	struct ns_agg_snap snap;
	char why[256], what[128];
	const char *region;

	if (l->o->serve ||
	    ns_agg_read(ns_agg_path(), &snap, why, sizeof(why)) != NS_AGG_OK)
		return;
	c = &snap.head.conf;
	region = c->region ? ns_region_name(c->region) : "span";
	if (c->flags & NSL_AGG_P99)
		snprintf(what, sizeof(what), "only the blocks over the running p99 of %s",
			 region);
	else if (c->threshold_ns)
		snprintf(what, sizeof(what), "only the blocks over %" PRIu64 " ns of %s",
			 (uint64_t)c->threshold_ns, region);
	else
		snprintf(what, sizeof(what), "no block");
	if (c->flags & NSL_AGG_ON && !(c->flags & NSL_AGG_ALL))
		ns_note("%s: aggregate mode is on (nsdump --serve): the kernel folds every block into its histograms, and this capture gets %s",
			l->dev.path, what);
	ns_agg_free(&snap);
}

int ns_live_open(struct ns_live *l, const struct ns_opts *o,
		 const struct ns_counters *sel, struct ns_calib_set *calib,
		 struct ns_calib_set *cold)
{
	if (open_device(l, o, sel) || set_counters(l) ||
	    calibrate_set(&l->dev, calib, false) ||
	    (o->cold && calibrate_set(&l->dev, cold, true)) ||
	    records_on(l) || kernel_filter_on(l) || sample_on(l))
		return -1;
	say_aggregating(l);
	return 0;
}

/* Only the table asked for is measured. */
int ns_live_calibrate(struct ns_live *l, const struct ns_opts *o,
		      const struct ns_counters *sel, struct ns_calib_set *cs)
{
	if (open_device(l, o, sel) || set_counters(l) ||
	    calibrate_set(&l->dev, cs, o->cold))
		return -1;
	return 0;
}

int ns_live_start(struct ns_live *l)
{
	if (ns_dev_start(&l->dev)) {
		ns_error("%s", l->dev.err);
		return -1;
	}
	print_listening(l);
	return 0;
}

void ns_live_close(struct ns_live *l)
{
	ns_live_records_off(l);
	ns_dev_close(&l->dev);
}
