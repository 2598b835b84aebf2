// SPDX-License-Identifier: GPL-2.0
/*
 * nsdump: read NetSlice blocks from /dev/ns or a trace file, print them
 * per packet and per layer, or write them to a trace file; tcpdump's
 * conventions throughout.  Exit status: 0 fine, 1 error (including a
 * truncated input file or a failed write), 2 bad usage.  A reader of the
 * output that goes away (EPIPE: `nsdump | head`) ends the capture as ^C
 * does, exit status 0, as tcpdump's SIGPIPE handler does.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "source/calib.h"
#include "source/capture.h"
#include "source/decode.h"
#include "source/events.h"
#include "source/file.h"
#include "source/sample.h"
#include "source/version.h"
#include "source/writer.h"
#include "stage/expr.h"
#include "stage/filter.h"
#include "stage/pipeline.h"
#include "stage/rtt.h"
#include "view/chrome.h"
#include "view/html.h"
#include "view/report.h"

struct opts {
	const char *dev, *rfile, *wfile, *events;
	const char *html, *chrome;	/* --html, --export chrome-trace */
	uint64_t count, rcvbuf;	/* 0: unlimited / leave as is */
	int verbose;
	int tstamp;		/* -t's counted: enum ns_tstamp_mode */
	bool quiet, json, list, raw, calibrate, cold, rtt;
	bool magnet, addr;	/* -M, --addr */
	bool version;
	enum ns_by_what by;	/* --by */
	struct ns_filter filter;	/* expression, -i, -p, --dir */
	/* --sample, --sample-flows: 1 in sample_rate (0: not asked for) */
	uint32_t sample_rate, sample_flags;
};

/* What a capture (from a file or the device) holds. */
struct run {
	struct opts *o;
	struct ns_pipeline p;
	bool piped;		/* p initialised */
	struct ns_report rep;	/* the text or JSON view, when there is text */
	struct ns_writer wr;	/* -w */
	struct ns_evsel sel;		/* -e, or the file's EVENTS */
	struct ns_calib_set calib;	/* live: NSIOCGCALIB per CPU */
	struct ns_calib_set calib_cold;	/* --cold: NSL_CALIB_COLD per CPU */
	const struct ns_calib_set *use_calib;	/* NULL: raw */
	struct ns_rtt rtt;
	struct ns_by by;	/* --by */
	bool records_on;	/* NSIOCSRECORDS switched them on */
	bool kfilter;		/* the kernel runs the expression too */
	struct nsl_sample sample;	/* --sample: the kernel's, as last read */
	bool sample_unread;		/* NSIOCGSAMPLE failed (said once) */
	/* what the report and -w say of sampling: the kernel's or the file's */
	const struct nsl_sample *sampled;
};

static volatile sig_atomic_t stop_flag, usr1_flag;

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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsdump [-Mnqtv] [--json] [--raw] [--rtt] [--cold] [--addr] [-B size] [-c count]\n"
		"              [-e event[,event...]] [-i interface] [-p lport.rport]...\n"
		"              [--dir tx|rx] [--by conn|cpu|dir|dev] [--sample n | --sample-flows n]\n"
		"              [--device path | -r file] [-w file]\n"
		"              [--html file] [--export chrome-trace file] [expression]\n"
		"       nsdump -L [--json]\n"
		"       nsdump --version [--json]\n"
		"       nsdump --calibrate [--json] [-e event[,event...]] [--cold] [--device path | -r file]\n"
		"  expression   a pcap-filter expression over each block's flow:\n"
		"               'tcp port 5201 and host 192.0.2.2', 'ip6', 'udp'\n"
		"  -B size      ring buffer per CPU in KiB, as tcpdump's (k, M, G suffixes)\n"
		"  -c count     stop after count blocks that passed the filter\n"
		"  --sample n   the kernel gives a block to 1 in n packets (1..%u)\n"
		"  --sample-flows n\n"
		"               the kernel gives blocks to 1 in n flows, all their packets\n"
		"  -e events    up to %d counter events (perf or libpfm4 names)\n"
		"  -L           list the events this machine can count\n"
		"  -i ifname    only blocks that crossed this interface ('any': all; ifN@netns\n"
		"               as the lines print it, for a file's)\n"
		"  --device path  device to read (default $NSDUMP_DEV or /dev/ns)\n"
		"  -r file      read a trace file ('-' = stdin)\n"
		"  -w file      write a trace file ('-' = stdout) of what passed the filter;\n"
		"               no text unless -v\n"
		"  -t           no time stamp; -tt seconds since the epoch, -ttt since the\n"
		"               line before, -tttt date and time, -ttttt since the first\n"
		"  -q           no per-packet or event lines: the tables only\n"
		"  -v           more detail: raw and corrected values, flags, counters\n"
		"  -n           accepted (nsdump resolves no names)\n"
		"  -M           MAGNeT event records: one line each, and per connection\n"
		"               the application-vs-wire table (Table III)\n"
		"  --addr       ask the kernel for the blocks' addresses (and, with -M,\n"
		"               the event records' addresses and ports)\n"
		"  -p l.r       only connections with local port l and remote port r\n"
		"               (0: any; repeatable; ports come from event records)\n"
		"  --dir tx|rx  only the send or the receive direction\n"
		"  --by what    per conn, cpu, dir or dev too: n, mean, p50..p99.9, max\n"
		"  --json       JSON lines instead of text\n"
		"  --raw        do not correct for the macros' own cost\n"
		"  --rtt        the user-level round trip of a ping-pong (formula 5)\n"
		"  --html file  the capture as one HTML page: distributions, a waterfall\n"
		"               of packets, counters, Table III ('-' = stdout)\n"
		"  --export chrome-trace file\n"
		"               the capture for Perfetto or chrome://tracing ('-' = stdout)\n"
		"  --calibrate  print the macros' own cost on this machine (Table 2)\n"
		"  --cold       also calibrate with the TLB flushed and the block evicted before\n"
		"               each sample, as after a context switch: --calibrate shows it,\n"
		"               -w keeps it, --rtt corrects by it too (the other bound)\n"
		"  --version    nsdump's version and what it was built with\n"
		"  -h, --help   this summary\n",
		NSL_SAMPLE_RATE_MAX, NSL_MAX_EVENTS);
}

/*
 * As tcpdump's "listening on": collection is on from here, so a script can
 * start its traffic once this line is on stderr.
 */
static void print_listening(const struct run *run, const struct ns_dev *dev)
{
	unsigned int i;

	fprintf(stderr, "nsdump: listening on %s, %u CPUs, %llu KiB ring per CPU%s, ",
		dev->path, dev->info.ncpus,
		(unsigned long long)(dev->info.ring_bytes / 1024),
		dev->map ? " mapped" : "");
	if (!run->sel.n)
		fputs("duration mode (TSC only)", stderr);
	for (i = 0; i < run->sel.n; i++)
		fprintf(stderr, "%s%s", i ? "," : "counting ", run->sel.name[i]);
	fputc('\n', stderr);
	fflush(stderr);
}

/*
 * Under --json, where errors go as {"error": "..."} lines: the JSON
 * stream (stdout, or stderr when stdout carries the trace file).  NULL:
 * as text on stderr.
 */
static FILE *json_errors;

/* A failure (nsdump exits non-zero). */
__attribute__((format(printf, 1, 2)))
static void error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a stream that failed already cannot say why: stderr does */
	if (json_errors && !ferror(json_errors)) {
		ns_json_error(json_errors, msg);
		if (!fflush(json_errors))
			return;
	}
	fprintf(stderr, "nsdump: %s\n", msg);
}

/* A warning: the capture goes on; always on stderr, as tcpdump's. */
__attribute__((format(printf, 1, 2)))
static void note(const char *fmt, ...)
{
	va_list ap;

	fputs("nsdump: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * -B as tcpdump's: "4096" and "4096k" KiB, "4M" MiB, "1G" GiB; bytes,
 * 0 if unparsable, zero or overflowing.
 */
static uint64_t parse_size(const char *s)
{
	uint64_t v, mult = 1024;
	char *end;

	/* strtoull would take leading spaces and a sign: " -5" */
	if (!isdigit((unsigned char)*s))
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	if (*end == 'k' || *end == 'K')
		end++;
	else if (*end == 'm' || *end == 'M')
		mult = 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mult = 1024 * 1024 * 1024, end++;
	if (*end || v > UINT64_MAX / mult)
		return 0;
	return v * mult;
}

static const struct option longopts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "raw", no_argument, NULL, 'R' },
	{ "rtt", no_argument, NULL, 'T' },
	{ "calibrate", no_argument, NULL, 'C' },
	{ "cold", no_argument, NULL, 'K' },
	{ "addr", no_argument, NULL, 'A' },
	{ "dir", required_argument, NULL, 'D' },
	{ "by", required_argument, NULL, 'b' },
	{ "device", required_argument, NULL, 'd' },
	{ "html", required_argument, NULL, 'H' },
	{ "export", required_argument, NULL, 'X' },
	{ "sample", required_argument, NULL, 'P' },
	{ "sample-flows", required_argument, NULL, 'F' },
	{ NULL, 0, NULL, 0 },
};
/* ':' first: nsdump says what is wrong with an option, in JSON too */
#define SHORTOPTS	":B:c:e:hi:LMnp:qr:tvw:"

/*
 * --json anywhere on the line makes every error JSON, those about the
 * options before it too: a first pass finds it (and -w -, which takes
 * stdout for the trace).
 */
static void scan_for_json(int argc, char **argv)
{
	bool json = false, trace_on_stdout = false;
	int c;

	json_errors = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, SHORTOPTS, longopts, NULL)) != -1) {
		if (c == 'j')
			json = true;
		else if (c == 'w' || c == 'H')
			trace_on_stdout |= !strcmp(optarg, "-");
		else if (c == 'X' && optind < argc)	/* its file */
			trace_on_stdout |= !strcmp(argv[optind++], "-");
	}
	optind = 0;	/* glibc: start again from scratch */
	if (json)
		json_errors = trace_on_stdout ? stderr : stdout;
}

/*
 * getopt's '?' or ':' as one line.  optopt names a short option; a long
 * one is the argument getopt just passed (an unknown one has optopt 0).
 */
static void bad_option(int c, char **argv)
{
	const char *text = argv[optind - 1];
	bool is_long = c == ':' ? !strncmp(text, "--", 2) : !optopt;
	char name[8];

	if (!is_long) {
		snprintf(name, sizeof(name), "-%c", optopt);
		text = name;
	}
	if (c == ':')
		error("%s needs an argument", text);
	else
		error("unknown option %s", text);
}

/*
 * -i: an interface of this machine.  Its names hold no '/': an argument
 * with one is a device's path, as -i took before --device (kept).
 */
static int set_interface(struct opts *o, const char *arg)
{
	if (strchr(arg, '/')) {
		o->dev = arg;
		return 0;
	}
	if (!ns_filter_set_interface(&o->filter, arg))
		return 0;
	error("-i %s: no such interface here (ip link lists them; the device's path goes with --device)",
	      arg);
	return -1;
}

/* The words after the options, as tcpdump joins them. */
static int compile_expression(struct opts *o, int argc, char **argv)
{
	char *text = ns_expr_join(argc, argv, optind), why[PCAP_ERRBUF_SIZE + 64];
	int ret = 0;

	if (!text) {
		error("out of memory");
		return -1;
	}
	if (ns_expr_compile(&o->filter.expr, text, why, sizeof(why))) {
		error("expression '%s': %s", text, why);
		ret = -1;
	}
	free(text);
	return ret;
}

/* --export FORMAT FILE: the file is the next argument. */
static int parse_export(struct opts *o, const char *format, int argc,
			char **argv)
{
	if (strcmp(format, "chrome-trace")) {
		error("--export %s: the format is chrome-trace", format);
		return -1;
	}
	if (optind >= argc) {
		error("--export chrome-trace needs a file");
		return -1;
	}
	o->chrome = argv[optind++];
	return 0;
}

static const char *sample_option(uint32_t flags)
{
	return flags & NSL_SAMPLE_FLOWS ? "--sample-flows" : "--sample";
}

/* --sample N, --sample-flows N (@flags NSL_SAMPLE_FLOWS): one of them. */
static int parse_sample(struct opts *o, const char *arg, uint32_t flags)
{
	unsigned long long rate;
	char *end;

	if (o->sample_rate && o->sample_flags != flags) {
		error("--sample and --sample-flows: one or the other");
		return -1;
	}
	errno = 0;
	rate = strtoull(arg, &end, 10);
	if (errno || !isdigit((unsigned char)*arg) || *end || !rate ||
	    rate > NSL_SAMPLE_RATE_MAX) {
		error("%s %s: expected 1 in n %s, n from 1 to %u",
		      sample_option(flags), arg,
		      flags & NSL_SAMPLE_FLOWS ? "flows" : "packets",
		      NSL_SAMPLE_RATE_MAX);
		return -1;
	}
	o->sample_rate = rate;
	o->sample_flags = flags;
	return 0;
}

/* -w, --html, --export: one of them at most on stdout. */
static int outputs_on_stdout(const struct opts *o)
{
	return (o->wfile && !strcmp(o->wfile, "-")) +
	       (o->html && !strcmp(o->html, "-")) +
	       (o->chrome && !strcmp(o->chrome, "-"));
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	ns_filter_init(&o->filter, NULL);
	o->dev = getenv("NSDUMP_DEV");
	if (!o->dev || !*o->dev)
		o->dev = NS_DEFAULT_DEV;
	scan_for_json(argc, argv);
	while ((c = getopt_long(argc, argv, SHORTOPTS, longopts, NULL)) != -1) {
		switch (c) {
		case 'B':
			o->rcvbuf = parse_size(optarg);
			if (!o->rcvbuf) {
				error("-B %s: buffer size must be a positive number of KiB (k, M and G suffixes allowed)",
				      optarg);
				return -1;
			}
			break;
		case 'c':
			errno = 0;
			o->count = strtoull(optarg, &end, 10);
			if (errno || !isdigit((unsigned char)*optarg) || *end ||
			    !o->count) {
				error("-c %s: count must be a positive integer", optarg);
				return -1;
			}
			break;
		case 'e': o->events = optarg; break;
		case 'R': o->raw = true; break;
		case 'T': o->rtt = true; break;
		case 'C': o->calibrate = true; break;
		case 'K': o->cold = true; break;
		case 'h': usage(stdout); exit(0);
		case 'i':
			if (set_interface(o, optarg))
				return -1;
			break;
		case 'd': o->dev = optarg; break;
		case 't': o->tstamp++; break;
		case 'j': o->json = true; break;
		case 'L': o->list = true; break;
		case 'M': o->magnet = true; break;
		case 'A': o->addr = true; break;
		case 'p':
			if (ns_filter_add_ports(&o->filter, optarg)) {
				error("-p %s: expected lport.rport, ports 0..65535 (0: any), at most %d",
				      optarg, NS_FILTER_PORTS);
				return -1;
			}
			break;
		case 'D':
			if (ns_filter_set_dir(&o->filter, optarg)) {
				error("--dir %s: expected tx or rx", optarg);
				return -1;
			}
			break;
		case 'n': break;	/* nsdump resolves no names */
		case 'q': o->quiet = true; break;
		case 'r': o->rfile = optarg; break;
		case 'v': o->verbose++; break;
		case 'w': o->wfile = optarg; break;
		case 'V': o->version = true; break;
		case 'b':
			if (ns_by_parse(optarg, &o->by)) {
				error("--by %s: expected conn, cpu, dir or dev", optarg);
				return -1;
			}
			break;
		case 'H': o->html = optarg; break;
		case 'X':
			if (parse_export(o, optarg, argc, argv))
				return -1;
			break;
		case 'P':
		case 'F':
			if (parse_sample(o, optarg, c == 'F' ? NSL_SAMPLE_FLOWS : 0))
				return -1;
			break;
		default:
			bad_option(c, argv);
			usage(stderr);
			return -1;
		}
	}
	if (o->tstamp > NS_TS_MAX) {
		error("-t: at most five (-ttttt: since the first line)");
		return -1;
	}
	if (optind < argc && compile_expression(o, argc, argv))
		return -1;
	if (o->cold && o->rfile && !o->calibrate) {
		error("--cold applies to a device; a file's cold calibration, if it has one, is used by itself");
		return -1;
	}
	if (o->rfile && o->rcvbuf) {
		error("-B applies to a device, not to -r");
		return -1;
	}
	if (o->rfile && o->sample_rate) {
		error("%s applies to a device; a file's sampling is what it was written with",
		      sample_option(o->sample_flags));
		return -1;
	}
	if (o->rfile && o->events) {
		error("-e applies to a device; a file's events are those it was written with");
		return -1;
	}
	if (outputs_on_stdout(o) > 1) {
		error("only one of -w, --html and --export can write to stdout ('-')");
		return -1;
	}
	return 0;
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

/* NSIOCGSAMPLE into run->sample: 0, or a note and -1 (the last kept). */
static int read_sampled(struct run *run, struct ns_dev *dev)
{
	struct nsl_sample now;
	int err = ns_dev_sampled(dev, &now);

	if (err) {
		if (!run->sample_unread)
			note("%s: NSIOCGSAMPLE: %s: the kernel's sampling counts are missing",
			     dev->path, strerror(err));
		run->sample_unread = true;
		return -1;
	}
	run->sample = now;
	return 0;
}

/*
 * The kernel's sampling, on a line of its own for scripts: "1 in R
 * packets sampled in the kernel: T taken, S passed over" (flows with
 * --sample-flows): T is awk's $9, S its $11.
 */
static void print_sampled(struct run *run, struct ns_dev *dev)
{
	const struct nsl_sample *s = &run->sample;

	if (read_sampled(run, dev))
		return;
	fprintf(stderr, "1 in %u %s sampled in the kernel: %" PRIu64 " taken, %" PRIu64 " passed over\n",
		s->rate, ns_sample_unit(s), (uint64_t)s->taken,
		(uint64_t)s->skipped);
}

static void print_stats(struct run *run, struct ns_dev *dev)
{
	uint64_t drops = run->p.acc.lost, emitted, nomem, refused = 0;
	const char *src = "";

	if (dev && ns_dev_drops(dev, &drops)) {
		drops = run->p.acc.lost;
		src = " (NSIOCGDROPS failed: counted from loss records)";
	}
	/* Packets that never had a block are lost too: say so. */
	if (dev && !ns_dev_emitted(dev, &emitted, &nomem) &&
	    nomem > dev->info.nomem)
		fprintf(stderr, "%" PRIu64 " blocks not made by the kernel (no memory for them)\n",
			(uint64_t)(nomem - dev->info.nomem));
	/* What the kernel's filter refused was received by the filter too. */
	if (dev && run->kfilter) {
		if (ns_dev_filtered(dev, &refused)) {
			note("%s: NSIOCGFILTERED: %s: \"received by filter\" lacks the blocks the kernel refused",
			     dev->path, strerror(errno));
		} else {
			fprintf(stderr, "%" PRIu64 " blocks refused by the filter in the kernel\n",
				refused);
		}
	}
	if (dev && run->o->sample_rate)
		print_sampled(run, dev);
	print_counts(run, drops, refused, src);
}

/* The items of one read() or mapped run, each through the pipeline. */
static enum ns_flow consume_buffer(struct run *run, struct ns_dev *dev,
				   const unsigned char *buf, size_t n)
{
	for (size_t pos = 0; pos < n; ) {
		enum ns_decode_error err;
		enum ns_flow flow;
		struct ns_item it;
		char why[128];

		err = ns_decode_item(buf + pos, n - pos, &it);
		if (err) {
			ns_decode_describe(err, &it, why, sizeof(why));
			error("%s: bad item at byte %zu of a batch: %s",
			      dev->path, pos, why);
			return NS_FLOW_FAIL;
		}
		pos += it.hdr.size;
		flow = ns_pipeline_push(&run->p, &it);
		if (flow != NS_FLOW_MORE)
			return flow;
	}
	return NS_FLOW_MORE;
}

/*
 * After SIGINT/SIGTERM: switch collection off and read what is still
 * coming (blocks of skbs instrumented before the switch arrive as they
 * are freed) until the kernel's emitted count stops moving, so that
 * captured + dropped = emitted.  At most about a second; a second
 * signal cuts it short.
 */
static enum ns_flow drain_device(struct run *run, struct ns_dev *dev,
				 unsigned char *buf, size_t cap)
{
	static volatile sig_atomic_t no_wake;
	uint64_t emitted = UINT64_MAX, now;

	stop_flag = 0;
	if (ns_dev_collect(dev, false))
		return NS_FLOW_DONE;
	for (int quiet = 0; quiet < 20 && !stop_flag; ) {
		const unsigned char *items;
		ssize_t n = ns_dev_next(dev, buf, cap, &items, &stop_flag,
					&no_wake, 50);
		enum ns_flow flow;

		if (n < 0) {
			error("%s", dev->err);
			return NS_FLOW_FAIL;
		}
		flow = consume_buffer(run, dev, items, n);
		ns_dev_done(dev);
		if (flow != NS_FLOW_MORE)
			return flow;
		if (n)
			continue;
		if (ns_dev_emitted(dev, &now, NULL) || now == emitted)
			break;
		emitted = now;
		quiet++;
	}
	return NS_FLOW_DONE;
}

static enum ns_flow read_device(struct run *run, struct ns_dev *dev)
{
	size_t cap = (size_t)NS_READ_BLOCKS * dev->info.block_size;
	unsigned char *buf = malloc(cap);
	enum ns_flow flow = NS_FLOW_MORE;

	if (!buf) {
		error("out of memory");
		return NS_FLOW_FAIL;
	}
	while (flow == NS_FLOW_MORE) {
		const unsigned char *items;
		ssize_t n = ns_dev_next(dev, buf, cap, &items, &stop_flag,
					&usr1_flag, NS_IDLE_MS);

		/* What came is taken first, whatever signal came with it. */
		if (n > 0) {
			flow = consume_buffer(run, dev, items, n);
			ns_dev_done(dev);
			if (flow != NS_FLOW_MORE)
				break;
		}
		if (usr1_flag) {
			usr1_flag = 0;
			print_stats(run, dev);
		}
		if (stop_flag) {
			flow = drain_device(run, dev, buf, cap);
			break;
		}
		if (n < 0) {
			error("%s", dev->err);
			flow = NS_FLOW_FAIL;
		} else if (!n) {
			/* Idle: the event lines held for time order are due. */
			ns_pipeline_idle(&run->p);
		}
	}
	free(buf);
	return flow;
}

static enum ns_flow read_file(struct run *run, struct nsf_reader *r)
{
	for (;;) {
		struct ns_item it;

		if (usr1_flag) {
			usr1_flag = 0;
			print_stats(run, NULL);
		}
		if (stop_flag)
			return NS_FLOW_DONE;
		switch (nsf_read_item(r, &it)) {
		case NSF_OK:
			if (ns_pipeline_push(&run->p, &it) != NS_FLOW_MORE)
				return NS_FLOW_DONE;
			break;
		case NSF_END:
			return NS_FLOW_DONE;
		case NSF_TRUNC:
			error("%s: truncated: %" PRIu64 " blocks read before the cut",
			      r->name, r->blocks);
			return NS_FLOW_FAIL;
		case NSF_ERR:
			error("%s: %s", r->name, r->err);
			return NS_FLOW_FAIL;
		}
	}
}

/* NSIOCSEVENT + NSIOCSEMODE: the chosen events, or none (durations). */
static int set_events(struct run *run, struct ns_dev *dev)
{
	char msg[512];
	int ret = ns_dev_set_events(dev, &run->sel.ev);

	if (!ret)
		return 0;
	ns_events_kernel_reason(&run->sel, ret == -1 ? "NSIOCSEVENT" : "NSIOCSEMODE",
				errno, msg, sizeof(msg));
	error("%s: %s", dev->path, msg);
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
		error("out of memory");
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
			error("%s: NSIOCGCALIB: permission denied (needs CAP_NET_ADMIN)",
			      dev->path);
			return -1;
		}
		if (err == EINTR) {
			error("%s: NSIOCGCALIB: interrupted", dev->path);
			return -1;
		}
		if (err == EINVAL && cold) {
			error("%s: NSIOCGCALIB: this module has no cold calibration",
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

/* The warm calibration, and with --cold the cold one beside it. */
static int calibrate_device(struct run *run, struct ns_dev *dev)
{
	if (calibrate_set(dev, &run->calib, false))
		return -1;
	return run->o->cold ? calibrate_set(dev, &run->calib_cold, true) : 0;
}

/*
 * What NSIOCSRECORDS asks for: event records for -M (TCP state and IP
 * fields) or -p (the ports); the blocks' addresses for --addr and for
 * any expression (whether it names hosts or not: "port 53" today,
 * "host ..." once the kernel filters).
 */
static uint32_t records_wanted(const struct opts *o)
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
static int records_on(struct run *run, struct ns_dev *dev)
{
	uint32_t flags = records_wanted(run->o);
	int err;

	if (!flags)
		return 0;
	err = ns_dev_records(dev, flags);
	if (!err) {
		run->records_on = true;
		return 0;
	}
	if (err == EINVAL || err == ENOTTY || err == EOPNOTSUPP) {
		note("%s: kernel does not produce %s (NSIOCSRECORDS: %s); going on without them",
		      dev->path, flags & NSL_REC_ON ? "event records" :
		      "addresses in blocks", strerror(err));
		return 0;
	}
	error("%s: NSIOCSRECORDS: %s", dev->path, strerror(err));
	return -1;
}

/* -v: where the kernel runs the expression, and why there. */
static void say_kernel_filter(const struct ns_dev *dev, bool flow_only,
			      uint32_t flags)
{
	if (flags & NSL_FILTER_FLOW)
		note("%s: the kernel filters at NSI: packets of other flows get no block at all",
		     dev->path);
	else if (flow_only)
		note("%s: the kernel filters before the ring: this netslice.ko (ABI %u) cannot filter at NSI",
		     dev->path, dev->info.abi_version);
	else
		note("%s: the kernel filters before the ring: the expression reads lengths or TCP sequence numbers, which NSI does not know",
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
static int kernel_filter_on(struct run *run, struct ns_dev *dev)
{
	const struct ns_expr *e = &run->o->filter.expr;
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
		run->kfilter = true;
		if (run->o->verbose)
			say_kernel_filter(dev, flow_only, flags);
		return 0;
	}
	if (err == ENOTTY || err == EINVAL) {
		if (run->o->verbose || err == EINVAL)
			note("%s: the kernel does not run the expression (NSIOCSFILTER: %s); nsdump filters alone",
			     dev->path, strerror(err));
		return 0;
	}
	error("%s: NSIOCSFILTER: %s", dev->path, strerror(err));
	return -1;
}

/*
 * --sample, --sample-flows: after the filter, as the kernel decides.  The
 * user asked for it: a module that cannot is an error, not a note.
 */
static int sample_on(struct run *run, struct ns_dev *dev)
{
	const struct opts *o = run->o;
	const char *opt = sample_option(o->sample_flags);
	int err = ENOTTY;

	if (!o->sample_rate)
		return 0;
	if (dev->info.abi_version >= NS_DEV_ABI_SAMPLE)
		err = ns_dev_sample(dev, o->sample_rate, o->sample_flags);
	if (!err) {
		run->sample = (struct nsl_sample){
			.rate = o->sample_rate, .flags = o->sample_flags,
		};
		run->sampled = &run->sample;
		return 0;
	}
	if (dev->info.abi_version < NS_DEV_ABI_SAMPLE)
		error("%s: %s %u: this netslice.ko speaks ABI %u and cannot sample (NSIOCSSAMPLE: %s); sampling in the kernel needs ABI %u",
		      dev->path, opt, o->sample_rate, dev->info.abi_version,
		      strerror(err), NS_DEV_ABI_SAMPLE);
	else if (err == ENOTTY || err == EINVAL)
		error("%s: %s %u: this netslice.ko (ABI %u) refused it: NSIOCSSAMPLE: %s",
		      dev->path, opt, o->sample_rate, dev->info.abi_version,
		      strerror(err));
	else
		error("%s: %s %u: NSIOCSSAMPLE: %s", dev->path, opt,
		      o->sample_rate, strerror(err));
	return -1;
}

static void records_off(struct run *run, struct ns_dev *dev)
{
	if (run->records_on && dev->fd >= 0)
		ns_dev_records(dev, 0);
	run->records_on = false;
}

/* The filter's notes, once each, after the tables. */
static void filter_notes(struct run *run)
{
	struct ns_filter *f = &run->o->filter;

	if (f->nports && !run->p.conns.with_addr) {
		note("-p: no event record carried ports (capture with -p or -M --addr): nothing matched");
		return;
	}
	if (f->undecided_blocks || f->undecided_events)
		note("%s: %" PRIu64 " blocks and %" PRIu64 " event records left out: their connection's %s never appeared",
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
	error("output: %s", strerror(err));
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
		note("%s: values are raw", none_msg);
}

/* Where the text goes: stdout; with -w, --html or --export, nowhere
 * unless -v (then stderr if one of them is on stdout). */
static FILE *text_output(const struct opts *o)
{
	if (!o->wfile && !o->html && !o->chrome)
		return stdout;
	if (!o->verbose)
		return NULL;
	return outputs_on_stdout(o) ? stderr : stdout;
}

/* --html and --export: views after the text's. */
static int add_file_views(struct run *run, const struct nsl_info *info)
{
	const struct opts *o = run->o;
	const char *source = o->dev;
	struct ns_sink *s;
	char why[512];

	if (o->rfile)
		source = strcmp(o->rfile, "-") ? o->rfile : "standard input";

	if (o->html) {
		s = ns_html_open(o->html, &run->p, source, info, !o->rfile,
				 why, sizeof(why));
		if (!s)
			goto fail;
		ns_pipeline_add_view(&run->p, s);
	}
	if (o->chrome) {
		s = ns_chrome_open(o->chrome, &run->p, source, info, !o->rfile,
				   why, sizeof(why));
		if (!s)
			goto fail;
		ns_pipeline_add_view(&run->p, s);
	}
	return 0;
fail:
	error("%s", why);
	return -1;
}

/* The stages' settings, -w as a tap and the report as a view. */
static enum ns_flow start_pipeline(struct run *run, const struct nsl_info *info)
{
	struct opts *o = run->o;
	FILE *out = text_output(o);
	char why[512];

	ns_pipeline_init(&run->p, info->tsc_khz, run->use_calib, &o->filter);
	run->piped = true;
	run->p.count = o->count;
	if (o->magnet)
		ns_pipeline_magnet(&run->p);
	ns_acc_set_events(&run->p.acc, &run->sel);
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
			error("%s", why);
			return NS_FLOW_FAIL;
		case NS_WRITER_GONE:
			return NS_FLOW_DONE;	/* nothing to capture for */
		case NS_WRITER_OK:
			ns_pipeline_add_view(&run->p, &run->wr.sink);
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
		ns_pipeline_add_view(&run->p, &run->rep.sink);
	}
	if (add_file_views(run, info))
		return NS_FLOW_FAIL;
	/* -w alone: the file keeps the raw values; nothing reads the rest. */
	if (!out && !o->html && !o->chrome && !o->rtt && !o->magnet &&
	    o->by == NS_BY_NONE)
		ns_pipeline_record_only(&run->p);
	return NS_FLOW_MORE;
}

static void say_error(void *ctx, const char *why)
{
	(void)ctx;
	error("%s", why);
}

/* After the source: the sinks' finish, -p's notes, the statistics. */
static int finish_capture(struct run *run, struct ns_dev *dev,
			  enum ns_flow flow)
{
	int ret = flow == NS_FLOW_FAIL;

	/* the report and the file's trailer take the kernel's final counts */
	if (dev && run->o->sample_rate)
		read_sampled(run, dev);
	if (ns_pipeline_finish(&run->p, say_error, NULL))
		ret = 1;
	filter_notes(run);
	print_stats(run, dev);
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
	run->piped = false;
}

static void close_trace(struct nsf_reader *r, int fd)
{
	nsf_reader_close(r);	/* frees the calibration it lent */
	if (fd > 0)
		close(fd);
}

/* -r: the reader, its fd; 0 or -1 (said why, nothing left open). */
static int open_trace(const char *name, struct nsf_reader *r, int *fd)
{
	*fd = 0;
	if (strcmp(name, "-")) {
		*fd = open(name, O_RDONLY | O_CLOEXEC);
		if (*fd < 0) {
			error("%s: %s", name, strerror(errno));
			return -1;
		}
	}
	if (!nsf_reader_open(r, *fd, name))
		return 0;
	error("%s: %s", name, r->err);
	close_trace(r, *fd);
	return -1;
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
static int run_version(const struct opts *o)
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
static int run_list(const struct opts *o)
{
	struct ns_json_lister json;
	struct ns_event_plain plain;
	char err[512];

	ns_json_lister_init(&json, stdout);
	ns_event_plain_init(&plain, stdout);
	if (ns_events_list(o->json ? &json.lister : &plain.lister,
			   &ns_event_host_real, err, sizeof(err))) {
		error("%s", err);
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
	struct nsf_reader reader;
	struct ns_dev dev = { .fd = -1 };
	int fd = 0, ret = 1;

	if (run->o->rfile) {
		if (open_trace(run->o->rfile, &reader, &fd))
			return 1;
		take_trace_header(run, &reader);
	} else if (ns_dev_open(&dev, run->o->dev, run->o->rcvbuf)) {
		error("%s", dev.err);
		return 1;
	} else if (set_events(run, &dev) ||
		   calibrate_set(&dev, cs, run->o->cold)) {
		goto out;	/* only the table asked for is measured */
	}
	first = ns_calib_get(cs, 0);
	if (!first) {
		error(run->o->cold ? "no cold calibration (the file has no CALIB_COLD record: written without --cold)" :
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
		close_trace(&reader, fd);
	} else {
		ns_calib_free(&run->calib);
		ns_calib_free(&run->calib_cold);
		ns_dev_close(&dev);
	}
	return ret;
}

/* -r */
static int run_file(struct run *run)
{
	struct nsf_reader reader;
	char note[512];
	enum ns_flow flow;
	int fd, ret = 0;

	if (open_trace(run->o->rfile, &reader, &fd))
		return 1;
	take_trace_header(run, &reader);
	run->sampled = &reader.sample;	/* its counts come with the trailer */
	snprintf(note, sizeof(note), "%s: no calibration in the file",
		 run->o->rfile);
	use_calibration(run, note);
	flow = start_pipeline(run, &reader.info);
	if (flow == NS_FLOW_MORE)
		ret = finish_capture(run, NULL, read_file(run, &reader));
	else
		ret = flow == NS_FLOW_FAIL;
	stop_pipeline(run);
	close_trace(&reader, fd);
	return ret;
}

/* The device: --device, $NSDUMP_DEV or /dev/ns. */
static int run_device(struct run *run)
{
	struct ns_dev dev = { .fd = -1 };
	enum ns_flow flow;
	int ret = 1;

	if (ns_dev_open(&dev, run->o->dev, run->o->rcvbuf)) {
		error("%s", dev.err);
		return 1;
	}
	if (set_events(run, &dev) || calibrate_device(run, &dev) ||
	    records_on(run, &dev) || kernel_filter_on(run, &dev) ||
	    sample_on(run, &dev))
		goto out;
	use_calibration(run, "no calibration from the kernel");
	flow = start_pipeline(run, &dev.info);
	if (flow != NS_FLOW_MORE) {
		ret = flow == NS_FLOW_FAIL;
		goto out;
	}
	if (ns_dev_start(&dev)) {
		error("%s", dev.err);
		goto out;	/* the file, if any, is closed whole */
	}
	print_listening(run, &dev);
	flow = read_device(run, &dev);
	records_off(run, &dev);
	ret = finish_capture(run, &dev, flow);
out:
	records_off(run, &dev);
	stop_pipeline(run);
	ns_calib_free(&run->calib);
	ns_calib_free(&run->calib_cold);
	ns_dev_close(&dev);
	return ret;
}

/* What the options asked for, once they parsed. */
static int run_opts(struct opts *o)
{
	struct run run = { .o = o };
	char err[512];

	if (o->version)
		return run_version(o);
	if (o->list)
		return run_list(o);
	if (o->events && ns_events_parse(o->events, &run.sel, &ns_event_host_real,
					 err, sizeof(err))) {
		error("%s", err);
		return 1;
	}
	set_signals();
	if (o->calibrate)
		return run_calibrate(&run);
	if (o->rfile)
		return run_file(&run);
	return run_device(&run);
}

int main(int argc, char **argv)
{
	struct opts o;
	int ret = 2;

	if (!parse_opts(argc, argv, &o))
		ret = run_opts(&o);
	ns_filter_free(&o.filter);	/* the compiled expression */
	return ret;
}
