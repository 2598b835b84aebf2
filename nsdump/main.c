// SPDX-License-Identifier: GPL-2.0
/*
 * nsdump: read NetSlice blocks from /dev/ns or a trace file, print them
 * per packet and per layer, or write them to a trace file; tcpdump's
 * conventions throughout.  Exit status: 0 fine, 1 error (including a
 * truncated input file or a failed write), 2 bad usage.  A reader of the
 * output that goes away (EPIPE: `nsdump | head`) ends the capture as ^C
 * does, exit status 0, as tcpdump's SIGPIPE handler does.
 *
 * Here: what the options (opts.c) asked for, and a capture's items from
 * the device (live.c) or a trace file through the pipeline to the views.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "live.h"
#include "msg.h"
#include "opts.h"
#include "serve.h"
#include "source/calib.h"
#include "source/capture.h"
#include "source/decode.h"
#include "source/counters.h"
#include "source/file.h"
#include "source/join.h"
#include "source/source.h"
#include "source/version.h"
#include "source/writer.h"
#include "stage/exemplar.h"
#include "stage/pipeline.h"
#include "stage/rtt.h"
#include "view/chrome.h"
#include "view/html.h"
#include "view/json.h"
#include "view/pcapng.h"
#include "view/report.h"

/* What a capture (from a file or the device) holds. */
struct run {
	struct ns_opts *o;
	struct ns_pipeline p;
	bool piped;		/* p initialised */
	struct ns_report rep;	/* the text or JSON view, when there is text */
	struct ns_writer wr;	/* -w */
	struct ns_counters sel;		/* -e, or the file's EVENTS */
	struct ns_calib_set calib;	/* live: NSIOCGCALIB per CPU */
	struct ns_calib_set calib_cold;	/* --cold: NSL_CALIB_COLD per CPU */
	const struct ns_calib_set *use_calib;	/* NULL: raw */
	struct ns_rtt rtt;
	struct ns_by by;	/* --by */
	struct ns_live *live;	/* the device's session; NULL: a file */
	/* what the report and -w say of sampling: the kernel's or the file's */
	const struct nsl_sample *sampled;
	struct ns_serve *serve;	/* --serve --exemplars: the loop; or NULL */
	struct ns_exemplars ex;	/* ... and the exemplars it serves */
	struct ns_join_input *join;	/* -r twice */
	/* -r twice, with text: 108 KB kept off every capture's stack */
	struct ns_joinrep *joinrep;
};

static volatile sig_atomic_t stop_flag, usr1_flag;
/* --serve: the device source's flags, never raised (serve.c stops) */
static volatile sig_atomic_t serve_hold;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1_flag = 1;
}

/*
 * SIGINT, SIGTERM and SIGHUP stop the capture (SIGHUP not if nohup(1)
 * ignores it); SIGUSR1 asks for the statistics.  SA_RESTART, so that a
 * signal during a blocked write to stdout does not fail it (and lose
 * what stdio held): the device loop waits in poll(), which a signal
 * interrupts with EINTR whatever SA_RESTART says, so the flags are seen.
 * A closed pipe is a write error (EPIPE), handled where writes are.
 */
static void set_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop, .sa_flags = SA_RESTART };
	struct sigaction hup;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!sigaction(SIGHUP, NULL, &hup) && hup.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/*
 * tcpdump's counts on one line: "captured" is what passed the filter;
 * with a filter, "received by filter" all it saw.
 */
static void print_counts(struct run *run, uint64_t drops, uint64_t refused,
			 const char *src)
{
	const struct ns_pipeline *p = &run->p;
	bool filtered = ns_filter_active(&run->o->filter);
	uint64_t received = p->captured + refused;

	if (p->event_recs && filtered)
		fprintf(stderr, "%" PRIu64 " blocks and %" PRIu64 " event records captured, %" PRIu64 " blocks and %" PRIu64 " event records received by filter, %" PRIu64 " dropped by kernel%s\n",
			p->passed, p->passed_events, received, p->event_recs,
			drops, src);
	else if (p->event_recs)
		fprintf(stderr, "%" PRIu64 " blocks and %" PRIu64 " event records captured, %" PRIu64 " dropped by kernel%s\n",
			p->passed, p->passed_events, drops, src);
	else if (filtered)
		fprintf(stderr, "%" PRIu64 " blocks captured, %" PRIu64 " received by filter, %" PRIu64 " dropped by kernel%s\n",
			p->passed, received, drops, src);
	else
		fprintf(stderr, "%" PRIu64 " blocks captured, %" PRIu64 " dropped by kernel%s\n",
			p->passed, drops, src);
}

static void print_stats(struct run *run)
{
	uint64_t drops = run->p.acc.lost, refused = 0;
	const char *src = "";

	if (run->live)
		ns_live_stats(run->live, &drops, &refused, &src);
	print_counts(run, drops, refused, src);
}

/* The source's items through the pipeline, until either stops. */
static enum ns_flow pump(struct run *run, struct ns_source *src)
{
	enum ns_flow flow = NS_FLOW_MORE;
	struct ns_item it;

	while (flow == NS_FLOW_MORE) {
		switch (ns_source_next(src, &it)) {
		case NS_SOURCE_ITEM:
			flow = ns_pipeline_push(&run->p, &it);
			break;
		case NS_SOURCE_RUN:
			flow = ns_pipeline_push_run(&run->p, &src->run);
			break;
		case NS_SOURCE_RECLAIM:
			flow = ns_pipeline_give_back(&run->p);
			break;
		case NS_SOURCE_IDLE:
			/* the event lines held for time order are due */
			ns_pipeline_idle(&run->p);
			break;
		case NS_SOURCE_STATS:
			print_stats(run);
			break;
		case NS_SOURCE_END:
			flow = NS_FLOW_DONE;
			break;
		case NS_SOURCE_FAIL:
			ns_error("%s", src->err);
			flow = NS_FLOW_FAIL;
			break;
		}
	}
	ns_pipeline_give_back(&run->p);
	ns_source_done(src);
	return flow;
}

/* The filter's notes, once each, after the tables. */
static void filter_notes(struct run *run)
{
	struct ns_filter *f = &run->o->filter;

	if (f->nports && !run->p.conns.with_addr) {
		ns_note("-p: no event record carried ports (capture with -p or -M --addr): nothing matched");
		return;
	}
	if (f->undecided_blocks || f->undecided_events)
		ns_note("%s: %" PRIu64 " blocks and %" PRIu64 " event records left out: their connection's %s never appeared",
			f->nports ? "-p" : "expression", f->undecided_blocks,
			f->undecided_events,
			f->nports ? "ports" : "flow (a block of it)");
}

/* Text on @f all written: 0, or "output: <why>" and 1 (EPIPE: 0). */
static int finish_output(FILE *f)
{
	int err = fflush(f) == EOF ? errno : ferror(f) ? EIO : 0;

	if (!err || err == EPIPE)
		return 0;
	ns_error("output: %s", strerror(err));
	return 1;
}

static void use_calibration(struct run *run, const char *none_msg)
{
	run->use_calib = NULL;
	if (run->o->raw)
		return;
	if (ns_calib_count(&run->calib))
		run->use_calib = &run->calib;
	else
		ns_note("%s: values are raw", none_msg);
}

/* Where the text goes: stdout; with -w, --html or --export, nowhere
 * unless -v (then stderr if one of them is on stdout). */
static FILE *text_output(const struct ns_opts *o)
{
	if (!o->wfile && !o->html && !o->chrome && !o->pcapng)
		return stdout;
	if (!o->verbose)
		return NULL;
	return ns_outputs_on_stdout(o) ? stderr : stdout;
}

/* --html and --export: views after the text's. */
static int add_file_views(struct run *run, const struct nsl_info *info)
{
	const struct ns_opts *o = run->o;
	const struct {
		const char *path;
		struct ns_sink *(*open)(const char *path, struct ns_pipeline *p,
					const char *source,
					const struct nsl_info *info, bool live,
					char *why, size_t len);
	} views[] = {
		{ o->html, ns_html_open },
		{ o->chrome, ns_chrome_open },
		{ o->pcapng, ns_pcapng_open },
	};
	const char *source = o->dev;
	char why[512];

	if (o->rfile)
		source = strcmp(o->rfile, "-") ? o->rfile : "standard input";
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		struct ns_sink *s;

		if (!views[i].path)
			continue;
		s = views[i].open(views[i].path, &run->p, source, info,
				  !o->rfile, why, sizeof(why));
		if (!s) {
			ns_error("%s", why);
			return -1;
		}
		ns_pipeline_add_view(&run->p, s);
	}
	return 0;
}

/* The stages' settings, -w as a tap and the report as a view. */
static enum ns_flow start_pipeline(struct run *run, const struct nsl_info *info)
{
	struct ns_opts *o = run->o;
	FILE *out = text_output(o);
	char why[512];

	ns_pipeline_init(&run->p, info->tsc_khz, run->use_calib, &o->filter);
	run->piped = true;
	run->p.count = o->count;
	if (o->magnet)
		ns_pipeline_magnet(&run->p);
	ns_acc_set_counters(&run->p.acc, &run->sel);
	ns_clock_from_info(&run->p.acc.clock, info);
	if (o->rtt) {
		ns_rtt_init(&run->rtt);
		if (run->use_calib && ns_calib_count(&run->calib_cold))
			run->rtt.cold = &run->calib_cold;
		run->p.acc.rtt = &run->rtt;
	}
	if (o->by != NS_BY_NONE) {
		ns_by_init(&run->by, o->by);
		run->by.live = !o->rfile;
		run->p.acc.by = &run->by;
	}
	if (o->wfile) {
		switch (ns_writer_open(&run->wr, o->wfile, info, run->sampled,
				       &run->sel, &run->calib, &run->calib_cold,
				       why, sizeof(why))) {
		case NS_WRITER_FAILED:
			ns_error("%s", why);
			return NS_FLOW_FAIL;
		case NS_WRITER_GONE:
			return NS_FLOW_DONE;	/* nothing to capture for */
		case NS_WRITER_OK:
			ns_pipeline_add_view(&run->p, &run->wr.sink);
		}
	}
	if (out && run->join) {
		run->joinrep = malloc(sizeof(*run->joinrep));
		if (!run->joinrep) {
			ns_error("out of memory");
			return NS_FLOW_FAIL;
		}
	}
	if (out) {
		ns_report_init(&run->rep, o->json ? &ns_json_printer : &ns_plain_printer,
			       out, &run->p.acc);
		run->rep.mag = o->magnet ? &run->p.conns : NULL;
		run->rep.verbose = o->verbose;
		run->rep.quiet = o->quiet;
		run->rep.live = !o->rfile;
		run->rep.sample = run->sampled;
		ns_tstamp_init(&run->rep.ts, o->tstamp);
		if (run->join) {
			ns_joinrep_init(run->joinrep, &run->join->join,
					run->join->lost, &run->p.acc);
			run->rep.join = run->joinrep;
		}
		ns_pipeline_add_view(&run->p, &run->rep.sink);
	}
	if (add_file_views(run, info))
		return NS_FLOW_FAIL;
	if (run->serve)
		ns_pipeline_add_view(&run->p, &run->ex.sink);
	/* -w alone: the file keeps the raw values; nothing reads the rest. */
	if (!out && !o->html && !o->chrome && !o->pcapng && !o->rtt && !o->magnet &&
	    o->by == NS_BY_NONE && !run->serve)
		ns_pipeline_record_only(&run->p);
	return NS_FLOW_MORE;
}

static void say_error(void *ctx, const char *why)
{
	(void)ctx;
	ns_error("%s", why);
}

/* After the source: the sinks' finish, -p's notes, the statistics. */
static int finish_capture(struct run *run, enum ns_flow flow)
{
	int ret = flow == NS_FLOW_FAIL;

	/* the report and the file's trailer take the kernel's final counts */
	if (run->live)
		ns_live_finish(run->live);
	if (ns_pipeline_finish(&run->p, say_error, NULL))
		ret = 1;
	filter_notes(run);
	print_stats(run);
	return ret;
}

static void stop_pipeline(struct run *run)
{
	if (!run->piped)
		return;
	ns_pipeline_free(&run->p);
	if (run->o->rtt)
		ns_rtt_free(&run->rtt);
	ns_by_free(&run->by);
	if (run->rep.join)
		ns_joinrep_free(run->joinrep);
	free(run->joinrep);
	run->joinrep = NULL;
	run->piped = false;
}

/*
 * A capture: the pipeline set up for what @info says, the source's
 * items through it, its finish.  @no_calib: whose calibration is missing.
 */
static int capture(struct run *run, struct ns_source *src,
		   const struct nsl_info *info, const char *no_calib)
{
	enum ns_flow flow;

	use_calibration(run, no_calib);
	flow = start_pipeline(run, info);
	if (flow != NS_FLOW_MORE)
		return flow == NS_FLOW_FAIL;
	src->shallow = ns_pipeline_shallow(&run->p);
	src->runs = ns_pipeline_runs(&run->p);
	if (run->live && ns_live_start(run->live))
		return 1;	/* the file, if any, is closed whole */
	if (run->serve)
		flow = ns_serve_loop(run->serve, src, &run->p, &stop_flag);
	else
		flow = pump(run, src);
	if (run->live)
		ns_live_records_off(run->live);
	return finish_capture(run, flow);
}

/* The file's EVENTS and CALIB, lent by the reader. */
static void take_trace_header(struct run *run, struct nsf_reader *r)
{
	if (r->have_events)
		run->sel = r->events;
	if (r->have_calib) {
		run->calib = r->calib;
		if (!run->calib.tsc_khz)
			run->calib.tsc_khz = r->info.tsc_khz;
	}
	if (r->have_calib_cold) {
		run->calib_cold = r->calib_cold;
		if (!run->calib_cold.tsc_khz)
			run->calib_cold.tsc_khz = r->info.tsc_khz;
	}
}

/* --version */
static int run_version(const struct ns_opts *o)
{
	struct ns_build b;

	ns_build_info(&b);
	if (o->json) {
		ns_json_version(stdout, &b);
	} else {
		printf("nsdump version %s\n", b.version);
		printf("NetSlice ABI %u, trace file format %u\n", b.abi,
		       b.file_format);
		printf("libpfm4: %s\n", b.libpfm4 ? "yes" :
		       "no (built without it: no -e, no -L)");
		printf("json-c %s\n", b.json_c);
		printf("zlib %s\n", b.zlib);
	}
	return finish_output(stdout);
}

/* -L */
static int run_list(const struct ns_opts *o)
{
	struct ns_json_lister json;
	struct ns_counter_plain plain;
	char err[512];

	ns_json_lister_init(&json, stdout);
	ns_counter_plain_init(&plain, stdout);
	if (ns_counters_list(o->json ? &json.lister : &plain.lister,
			     &ns_counter_host_real, err, sizeof(err))) {
		ns_error("%s", err);
		return 1;
	}
	return finish_output(stdout);
}

/* --calibrate: the calibration in the file, or the kernel's. */
static int run_calibrate(struct run *run)
{
	const char *names[NSL_MAX_EVENTS] = { NULL };
	struct ns_calib_set *cs = run->o->cold ? &run->calib_cold : &run->calib;
	const struct nsl_calib *first;
	struct ns_file_source file;
	struct ns_live live;
	int ret = 1;

	if (run->o->rfile) {
		if (ns_source_file(&file, run->o->rfile, &stop_flag,
				   &usr1_flag)) {
			ns_error("%s", file.src.err);
			return 1;
		}
		take_trace_header(run, &file.reader);
	} else if (ns_live_calibrate(&live, run->o, &run->sel, cs)) {
		goto out;
	}
	first = ns_calib_get(cs, 0);
	if (!first) {
		ns_error(run->o->cold ? "no cold calibration (the file has no CALIB_COLD record: written without --cold)" :
			 "no calibration (the kernel offers none, or the file has no CALIB record)");
		goto out;
	}
	for (unsigned int e = 0; e < run->sel.n; e++)
		names[e] = run->sel.name[e];
	(run->o->json ? ns_json_calib : ns_calib_print)(stdout, cs, names,
		first->nevents > run->sel.n ? first->nevents : run->sel.n);
	ret = finish_output(stdout);
out:
	if (run->o->rfile) {
		ns_source_close(&file.src);
	} else {
		ns_calib_free(&run->calib);
		ns_calib_free(&run->calib_cold);
		ns_live_close(&live);
	}
	return ret;
}

/* -r */
static int run_file(struct run *run)
{
	struct ns_file_source file;
	char note[512];
	int ret;

	if (ns_source_file(&file, run->o->rfile, &stop_flag, &usr1_flag)) {
		ns_error("%s", file.src.err);
		return 1;
	}
	take_trace_header(run, &file.reader);
	run->sampled = &file.reader.sample;	/* counts come with the trailer */
	snprintf(note, sizeof(note), "%s: no calibration in the file",
		 run->o->rfile);
	ret = capture(run, &file.src, &file.reader.info, note);
	stop_pipeline(run);
	ns_source_close(&file.src);
	return ret;
}

/*
 * --serve --exemplars: the serving loop reads the device; the device
 * source never waits, and stops only when the loop does.
 */
static int serve_device(struct run *run, struct ns_device_source *device,
			struct ns_live *live)
{
	ns_source_device(device, &live->dev, &serve_hold, &serve_hold);
	device->idle_ms = 0;
	ns_exemplars_init(&run->ex, run->o->wfile);
	if (ns_serve_open(run->serve, run->o, &live->dev, &run->ex))
		return 1;
	return capture(run, &device->src, &live->dev.info,
		       "no calibration from the kernel");
}

/* -r twice: two hosts' files, joined (source/join.h). */
static int run_join(struct run *run)
{
	const char *const path[2] = { run->o->rfile, run->o->rfile2 };
	const struct ns_citem *ci;
	struct ns_join_input in;
	enum ns_flow flow;
	char why[512];
	int ret = 1;

	if (ns_join_open(&in, path, run->o->raw,
			 (double)run->o->join_window_us * 1e3, &stop_flag, why,
			 sizeof(why))) {
		ns_error("%s", why);
		goto out;
	}
	take_trace_header(run, &in.file[0].reader);
	run->join = &in;
	snprintf(why, sizeof(why), "%s: no calibration in the file", path[0]);
	use_calibration(run, why);
	flow = start_pipeline(run, ns_join_info(&in));
	while (flow == NS_FLOW_MORE && !stop_flag && (ci = ns_join_next(&in))) {
		run->p.captured++;
		flow = ns_pipeline_push_corrected(&run->p, ci);
	}
	ret = finish_capture(run, flow);
out:
	stop_pipeline(run);
	ns_join_close(&in);
	return ret;
}

/* The device: --device, $NSDUMP_DEV or /dev/ns. */
static int run_device(struct run *run)
{
	struct ns_device_source device;
	struct ns_live live;
	int ret = 1;

	if (!ns_live_open(&live, run->o, &run->sel, &run->calib,
			  &run->calib_cold)) {
		run->live = &live;
		run->sampled = live.sampled;
		if (run->serve) {
			ret = serve_device(run, &device, &live);
		} else {
			ns_source_device(&device, &live.dev, &stop_flag,
					 &usr1_flag);
			ret = capture(run, &device.src, &live.dev.info,
				      "no calibration from the kernel");
		}
		ns_source_close(&device.src);
	}
	if (run->serve) {
		/* aggregation goes on after nsdump, as without exemplars */
		ns_live_records_off(&live);
		ns_serve_close(run->serve);
		ns_dev_release(&live.dev);
		ns_exemplars_free(&run->ex);
	}
	stop_pipeline(run);
	ns_calib_free(&run->calib);
	ns_calib_free(&run->calib_cold);
	ns_live_close(&live);
	return ret;
}

/* --serve: without exemplars, the snapshots alone; with, a capture too. */
static int run_serve(struct run *run)
{
	struct ns_serve serve;
	int ret;

	if (ns_opts_exemplars(run->o)) {
		run->serve = &serve;
		return run_device(run);
	}
	if (ns_serve_open(&serve, run->o, NULL, NULL))
		return 1;
	ret = ns_serve_loop(&serve, NULL, NULL, &stop_flag) == NS_FLOW_FAIL;
	ns_serve_close(&serve);
	return ret;
}

/* What the options asked for, once they parsed. */
static int run_opts(struct ns_opts *o)
{
	struct run run = { .o = o };
	char err[512];

	if (o->help) {
		ns_usage(stdout);
		return 0;
	}
	if (o->version)
		return run_version(o);
	if (o->list)
		return run_list(o);
	if (o->events && ns_counters_parse(o->events, &run.sel,
					   &ns_counter_host_real, err,
					   sizeof(err))) {
		ns_error("%s", err);
		return 1;
	}
	set_signals();
	if (o->calibrate)
		return run_calibrate(&run);
	if (o->rfile2)
		return run_join(&run);
	if (o->rfile)
		return run_file(&run);
	if (o->serve)
		return run_serve(&run);
	return run_device(&run);
}

int main(int argc, char **argv)
{
	struct ns_opts o;
	int ret = 2;

	if (!ns_opts_parse(argc, argv, &o))
		ret = run_opts(&o);
	ns_opts_free(&o);
	return ret;
}
