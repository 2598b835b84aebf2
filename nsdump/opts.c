// SPDX-License-Identifier: GPL-2.0
/*
 * The command line: each option declared once in ns_options[], in
 * perf's manner (its OPT_* tables): names, argument, help, completion
 * and what it does.  --help's option lines, getopt_long()'s tables and
 * the parse come from the table; the forms of the command (the synopsis)
 * are written once, below.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "msg.h"
#include "netslice.h"
#include "opts.h"
#include "source/capture.h"
#include "source/histograms.h"
#include "stage/expr.h"
#include "view/http.h"
#include "view/tstamp.h"

/*
 * Where in struct ns_opts an option puts what it is given; the pointer
 * comparison breaks the build if the field is not of @type.
 */
#define FIELD(type, f)	(offsetof(struct ns_opts, f) +			\
			 0 * sizeof((type *)0 == &((struct ns_opts *)0)->f))
#define SET(f)		.kind = NS_OPT_SET, .field = FIELD(bool, f)
#define COUNT(f)	.kind = NS_OPT_COUNT, .field = FIELD(int, f)
#define STRING(f)	.kind = NS_OPT_STRING, .field = FIELD(const char *, f)
#define PARSE(fn)	.kind = NS_OPT_PARSE, .parse = fn
#define WORDS(w)	.complete = NS_COMPLETE_WORDS, .words = w

/* The command line being parsed, as getopt's optind walks it. */
static struct {
	int argc;
	char **argv;
} line;

/* The forms of the command: how the options go together. */
static const char synopsis[] =
	"usage: nsdump [-Mnqtv] [--json] [--raw] [--rtt] [--cold] [--addr] [-B size] [-c count]\n"
	"              [-e event[,event...]] [-i interface] [-p lport.rport]...\n"
	"              [--dir tx|rx] [--by conn|cpu|dir|dev] [--sample n | --sample-flows n]\n"
	"              [--device path | -r file [-r file [--join-window ms]]] [-w file]\n"
	"              [--html file] [--export chrome-trace|pcapng file]... [expression]\n"
	"       nsdump -L [--json]\n"
	"       nsdump --version [--json]\n"
	"       nsdump --calibrate [--json] [-e event[,event...]] [--cold] [--device path | -r file]\n"
	"       nsdump --serve [addr:]port [--device path]\n"
	"              [--exemplars spec [-w file] [--html file] [capture options] [expression]]\n";

uint64_t ns_parse_size(const char *s)
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

static int parse_rcvbuf(struct ns_opts *o, const char *arg)
{
	o->rcvbuf = ns_parse_size(arg);
	if (o->rcvbuf)
		return 0;
	ns_error("-B %s: buffer size must be a positive number of KiB (k, M and G suffixes allowed)",
		 arg);
	return -1;
}

static int parse_count(struct ns_opts *o, const char *arg)
{
	char *end;

	errno = 0;
	o->count = strtoull(arg, &end, 10);
	if (!errno && isdigit((unsigned char)*arg) && !*end && o->count)
		return 0;
	ns_error("-c %s: count must be a positive integer", arg);
	return -1;
}

/*
 * -i: an interface of this machine.  Its names hold no '/': an argument
 * with one is a device's path, as -i took before --device (kept).
 */
static int parse_interface(struct ns_opts *o, const char *arg)
{
	if (strchr(arg, '/')) {
		o->dev = arg;
		return 0;
	}
	if (!ns_filter_set_interface(&o->filter, arg))
		return 0;
	ns_error("-i %s: no such interface here (ip link lists them; the device's path goes with --device)",
		 arg);
	return -1;
}

static int parse_ports(struct ns_opts *o, const char *arg)
{
	if (!ns_filter_add_ports(&o->filter, arg))
		return 0;
	ns_error("-p %s: expected lport.rport, ports 0..65535 (0: any), at most %d",
		 arg, NS_FILTER_PORTS);
	return -1;
}

static int parse_dir(struct ns_opts *o, const char *arg)
{
	if (!ns_filter_set_dir(&o->filter, arg))
		return 0;
	ns_error("--dir %s: expected tx or rx", arg);
	return -1;
}

static int parse_by(struct ns_opts *o, const char *arg)
{
	if (!ns_by_parse(arg, &o->by))
		return 0;
	ns_error("--by %s: expected conn, cpu, dir or dev", arg);
	return -1;
}

/* -r FILE, once or twice (two hosts' files, joined). */
static int parse_rfile(struct ns_opts *o, const char *arg)
{
	if (!o->rfile) {
		o->rfile = arg;
		return 0;
	}
	if (!o->rfile2 && strcmp(arg, "-") && strcmp(o->rfile, "-")) {
		o->rfile2 = arg;
		return 0;
	}
	ns_error(o->rfile2 ? "-r: at most two files (two hosts, joined)" :
		 "-r -: standard input cannot be one of two files joined");
	return -1;
}

/* --join-window MS: the longest a packet may take on the wire. */
static int parse_join_window(struct ns_opts *o, const char *arg)
{
	double ms;
	char *end;

	errno = 0;
	ms = strtod(arg, &end);
	if (!errno && isdigit((unsigned char)*arg) && !*end && ms > 0 &&
	    ms <= 3600e3) {
		o->join_window_us = (uint64_t)(ms * 1000);
		return 0;
	}
	ns_error("--join-window %s: expected a time in ms, more than 0", arg);
	return -1;
}

/* --export FORMAT FILE: the file is the next argument. */
static int parse_export(struct ns_opts *o, const char *format)
{
	const char **file = !strcmp(format, "chrome-trace") ? &o->chrome :
			    !strcmp(format, "pcapng") ? &o->pcapng : NULL;

	if (!file) {
		ns_error("--export %s: the format is chrome-trace or pcapng", format);
		return -1;
	}
	if (optind >= line.argc) {
		ns_error("--export %s needs a file", format);
		return -1;
	}
	*file = line.argv[optind++];
	return 0;
}

const char *ns_sample_option(uint32_t flags)
{
	return flags & NSL_SAMPLE_FLOWS ? "--sample-flows" : "--sample";
}

/* --sample N, --sample-flows N (@flags NSL_SAMPLE_FLOWS): one of them. */
static int parse_sample(struct ns_opts *o, const char *arg, uint32_t flags)
{
	unsigned long long rate;
	char *end;

	if (o->sample_rate && o->sample_flags != flags) {
		ns_error("--sample and --sample-flows: one or the other");
		return -1;
	}
	errno = 0;
	rate = strtoull(arg, &end, 10);
	if (errno || !isdigit((unsigned char)*arg) || *end || !rate ||
	    rate > NSL_SAMPLE_RATE_MAX) {
		ns_error("%s %s: expected 1 in n %s, n from 1 to %u",
			 ns_sample_option(flags), arg,
			 flags & NSL_SAMPLE_FLOWS ? "flows" : "packets",
			 NSL_SAMPLE_RATE_MAX);
		return -1;
	}
	o->sample_rate = rate;
	o->sample_flags = flags;
	return 0;
}

static int parse_sample_packets(struct ns_opts *o, const char *arg)
{
	return parse_sample(o, arg, 0);
}

static int parse_sample_flows(struct ns_opts *o, const char *arg)
{
	return parse_sample(o, arg, NSL_SAMPLE_FLOWS);
}

static int parse_serve(struct ns_opts *o, const char *arg)
{
	char host[64], port[8];

	o->serve = arg;
	if (!ns_http_split(arg, host, sizeof(host), port, sizeof(port)))
		return 0;
	ns_error("--serve %s: expected [ADDR:]PORT, PORT 0..65535, an IPv6 ADDR in brackets",
		 arg);
	return -1;
}

static int parse_exemplars(struct ns_opts *o, const char *arg)
{
	if (!ns_agg_spec(arg, &o->exemplars))
		return 0;
	ns_error("--exemplars %s: expected all, REGION>p99 or REGION>TIME (50us, 2ms), REGION a region's name or span",
		 arg);
	return -1;
}

const struct ns_option ns_options[] = {
	{ .arg = "expression", .kind = NS_OPT_OPERAND,
	  .help = "a pcap-filter expression over each block's flow:\n"
		  "'tcp port 5201 and host 192.0.2.2', 'ip6', 'udp'" },
	{ .letter = 'B', .arg = "size", PARSE(parse_rcvbuf),
	  .help = "ring buffer per CPU in KiB, as tcpdump's (k, M, G suffixes)" },
	{ .letter = 'c', .arg = "count", PARSE(parse_count),
	  .help = "stop after count blocks that passed the filter" },
	{ .key = 'P', .name = "sample", .arg = "n", PARSE(parse_sample_packets),
	  .help = "the kernel gives a block to 1 in n packets (1..%u)",
	  .n = NSL_SAMPLE_RATE_MAX },
	{ .key = 'F', .name = "sample-flows", .arg = "n",
	  PARSE(parse_sample_flows),
	  .help = "the kernel gives blocks to 1 in n flows, all their packets" },
	{ .letter = 'e', .arg = "events", STRING(events),
	  .help = "up to %u counter events (perf or libpfm4 names)",
	  .n = NSL_MAX_EVENTS, .complete = NS_COMPLETE_EVENTS },
	{ .letter = 'L', SET(list),
	  .help = "list the events this machine can count" },
	{ .letter = 'i', .arg = "ifname", PARSE(parse_interface),
	  .help = "only blocks that crossed this interface ('any': all; ifN@netns\n"
		  "as the lines print it, for a file's)",
	  .complete = NS_COMPLETE_INTERFACE },
	{ .key = 'd', .name = "device", .arg = "path", STRING(dev),
	  .help = "device to read (default $NSDUMP_DEV or /dev/ns)",
	  .complete = NS_COMPLETE_DEVICE },
	{ .letter = 'r', .arg = "file", PARSE(parse_rfile),
	  .help = "read a trace file ('-' = stdin); twice: two hosts' files,\n"
		  "each send joined with its receive block on the other host",
	  .complete = NS_COMPLETE_FILE },
	{ .letter = 'w', .arg = "file", STRING(wfile),
	  .help = "write a trace file ('-' = stdout) of what passed the filter;\n"
		  "no text unless -v",
	  .complete = NS_COMPLETE_FILE },
	{ .letter = 't', COUNT(tstamp),
	  .help = "no time stamp; -tt seconds since the epoch, -ttt since the\n"
		  "line before, -tttt date and time, -ttttt since the first" },
	{ .letter = 'q', SET(quiet),
	  .help = "no per-packet or event lines: the tables only" },
	{ .letter = 'v', COUNT(verbose),
	  .help = "more detail: raw and corrected values, flags, counters" },
	{ .letter = 'n', .kind = NS_OPT_ACCEPTED,
	  .help = "accepted (nsdump resolves no names)" },
	{ .letter = 'M', SET(magnet),
	  .help = "MAGNeT event records: one line each, and per connection\n"
		  "the application-vs-wire table (Table III)" },
	{ .key = 'A', .name = "addr", SET(addr),
	  .help = "ask the kernel for the blocks' addresses (and, with -M,\n"
		  "the event records' addresses and ports)" },
	{ .letter = 'p', .arg = "l.r", PARSE(parse_ports),
	  .help = "only connections with local port l and remote port r\n"
		  "(0: any; repeatable; ports come from event records)" },
	{ .key = 'D', .name = "dir", .arg = "tx|rx", PARSE(parse_dir),
	  .help = "only the send or the receive direction",
	  WORDS("tx rx") },
	{ .key = 'b', .name = "by", .arg = "what", PARSE(parse_by),
	  .help = "per conn, cpu, dir or dev too: n, mean, p50..p99.9, max",
	  WORDS("conn cpu dir dev") },
	{ .key = 'W', .name = "join-window", .arg = "ms", PARSE(parse_join_window),
	  .help = "with -r twice: a datagram is joined to the one send of its flow\n"
		  "and length within ms before it (default: the longest wire\n"
		  "time of the segments matched exactly)" },
	{ .key = 'j', .name = "json", SET(json),
	  .help = "JSON lines instead of text" },
	{ .key = 'R', .name = "raw", SET(raw),
	  .help = "do not correct for the macros' own cost" },
	{ .key = 'T', .name = "rtt", SET(rtt),
	  .help = "the user-level round trip of a ping-pong (formula 5)" },
	{ .key = 'H', .name = "html", .arg = "file", STRING(html),
	  .help = "the capture as one HTML page: distributions, a waterfall\n"
		  "of packets, counters, Table III ('-' = stdout)",
	  .complete = NS_COMPLETE_FILE },
	{ .key = 'X', .name = "export", .arg = "format file",
	  PARSE(parse_export),
	  .help = "the capture as a file ('-' = stdout): chrome-trace for Perfetto\n"
		  "or chrome://tracing, pcapng for Wireshark",
	  WORDS("chrome-trace pcapng") },
	{ .key = 'S', .name = "serve", .arg = "[addr:]port", PARSE(parse_serve),
	  .help = "aggregate in the kernel and serve its histograms to Prometheus\n"
		  "at http://addr:port/metrics (addr 127.0.0.1; ':port': all)" },
	{ .key = 'E', .name = "exemplars", .arg = "spec", PARSE(parse_exemplars),
	  .help = "--serve: blocks also captured whole, as exemplars: all,\n"
		  "region>p99 or region>time (span>p99, queue>50us)",
	  WORDS("all span>p99") },
	{ .key = 'C', .name = "calibrate", SET(calibrate),
	  .help = "print the macros' own cost on this machine (Table 2)" },
	{ .key = 'K', .name = "cold", SET(cold),
	  .help = "also calibrate with the TLB flushed and the block evicted before\n"
		  "each sample, as after a context switch: --calibrate shows it,\n"
		  "-w keeps it, --rtt corrects by it too (the other bound)" },
	{ .key = 'V', .name = "version", SET(version),
	  .help = "nsdump's version and what it was built with" },
	{ .letter = 'h', .name = "help", SET(help),
	  .help = "this summary" },
};

const unsigned int ns_noptions = sizeof(ns_options) / sizeof(ns_options[0]);

/* "-B size", "--dir tx|rx", "-h, --help": an option as --help heads it. */
static void option_head(const struct ns_option *opt, char *buf, size_t len)
{
	int n = 0;

	if (opt->letter)
		n = snprintf(buf, len, "-%c%s", opt->letter,
			     opt->name ? ", " : "");
	if (opt->name)
		n += snprintf(buf + n, len - n, "--%s", opt->name);
	if (opt->arg)
		snprintf(buf + n, len - n, "%s%s", n ? " " : "", opt->arg);
	else
		buf[n] = 0;
}

/* Heads up to this wide share the line with their text, at column 15. */
#define HEAD_WIDTH	13

void ns_usage(FILE *f)
{
	fputs(synopsis, f);
	for (unsigned int i = 0; i < ns_noptions; i++) {
		const struct ns_option *opt = &ns_options[i];
		char head[64], help[512];
		const char *line, *nl;

		option_head(opt, head, sizeof(head));
		snprintf(help, sizeof(help), opt->help, opt->n);
		if (strlen(head) <= HEAD_WIDTH)
			fprintf(f, "  %-11s  ", head);
		else
			fprintf(f, "  %s\n%15s", head, "");
		for (line = help; (nl = strchr(line, '\n')); line = nl + 1)
			fprintf(f, "%.*s\n%15s", (int)(nl - line), line, "");
		fprintf(f, "%s\n", line);
	}
}

/* What getopt_long() returns for @opt. */
static int option_key(const struct ns_option *opt)
{
	return opt->letter ? opt->letter : opt->key;
}

static const struct ns_option *option_of(int key)
{
	for (unsigned int i = 0; i < ns_noptions; i++)
		if (ns_options[i].kind != NS_OPT_OPERAND &&
		    option_key(&ns_options[i]) == key)
			return &ns_options[i];
	return NULL;
}

/* getopt_long()'s tables, from ns_options[]. */
static char shortopts[2 + 2 * sizeof(ns_options) / sizeof(ns_options[0])];
static struct option longopts[sizeof(ns_options) / sizeof(ns_options[0]) + 1];

static void getopt_tables(void)
{
	char *s = shortopts;
	struct option *l = longopts;

	/* ':' first: nsdump says what is wrong with an option, in JSON too */
	*s++ = ':';
	for (unsigned int i = 0; i < ns_noptions; i++) {
		const struct ns_option *opt = &ns_options[i];

		if (opt->letter) {
			*s++ = opt->letter;
			if (opt->arg)
				*s++ = ':';
		}
		if (opt->name)
			*l++ = (struct option){
				.name = opt->name,
				.has_arg = opt->arg ? required_argument :
						      no_argument,
				.val = option_key(opt),
			};
	}
	*s = 0;
	*l = (struct option){ 0 };
}

/*
 * --json anywhere on the line makes every error JSON, those about the
 * options before it too: a first pass finds it (and -w -, which takes
 * stdout for the trace).
 */
static void scan_for_json(int argc, char **argv)
{
	bool json = false, trace_on_stdout = false;
	int c;

	ns_msg_json(NULL);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'j')				/* --json */
			json = true;
		else if (c == 'w' || c == 'H')		/* -w, --html */
			trace_on_stdout |= !strcmp(optarg, "-");
		else if (c == 'X' && optind < argc)	/* --export's file */
			trace_on_stdout |= !strcmp(argv[optind++], "-");
	}
	optind = 0;	/* glibc: start again from scratch */
	if (json)
		ns_msg_json(trace_on_stdout ? stderr : stdout);
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
		ns_error("%s needs an argument", text);
	else
		ns_error("unknown option %s", text);
}

/* @opt given, with @arg: 0, or -1 once said why. */
static int take(struct ns_opts *o, const struct ns_option *opt,
		const char *arg)
{
	char *at = (char *)o + opt->field;

	switch (opt->kind) {
	case NS_OPT_SET:
		*(bool *)at = true;
		break;
	case NS_OPT_COUNT:
		(*(int *)at)++;
		break;
	case NS_OPT_STRING:
		*(const char **)at = arg;
		break;
	case NS_OPT_PARSE:
		return opt->parse(o, arg);
	case NS_OPT_OPERAND:
	case NS_OPT_ACCEPTED:
		break;
	}
	return 0;
}

/* The words after the options, as tcpdump joins them. */
static int compile_expression(struct ns_opts *o, int argc, char **argv)
{
	char *text = ns_expr_join(argc, argv, optind), why[PCAP_ERRBUF_SIZE + 64];
	int ret = 0;

	if (!text) {
		ns_error("out of memory");
		return -1;
	}
	if (ns_expr_compile(&o->filter.expr, text, why, sizeof(why))) {
		ns_error("expression '%s': %s", text, why);
		ret = -1;
	}
	free(text);
	return ret;
}

int ns_outputs_on_stdout(const struct ns_opts *o)
{
	return (o->wfile && !strcmp(o->wfile, "-")) +
	       (o->html && !strcmp(o->html, "-")) +
	       (o->chrome && !strcmp(o->chrome, "-")) +
	       (o->pcapng && !strcmp(o->pcapng, "-"));
}

/* What the options say together. */
static int check_together(const struct ns_opts *o)
{
	if (o->cold && o->rfile && !o->calibrate) {
		ns_error("--cold applies to a device; a file's cold calibration, if it has one, is used by itself");
		return -1;
	}
	if (o->rfile && o->rcvbuf) {
		ns_error("-B applies to a device, not to -r");
		return -1;
	}
	if (o->rfile && o->sample_rate) {
		ns_error("%s applies to a device; a file's sampling is what it was written with",
			 ns_sample_option(o->sample_flags));
		return -1;
	}
	if (o->rfile && o->events) {
		ns_error("-e applies to a device; a file's events are those it was written with");
		return -1;
	}
	if (o->join_window_us && !o->rfile2) {
		ns_error("--join-window applies to a join (-r twice)");
		return -1;
	}
	if (o->rfile2 && (o->wfile || o->rtt || o->magnet || o->calibrate)) {
		ns_error("-r twice (a join) writes no trace file and has no --rtt, -M or --calibrate");
		return -1;
	}
	if (ns_outputs_on_stdout(o) > 1) {
		ns_error("only one of -w, --html and --export can write to stdout ('-')");
		return -1;
	}
	return 0;
}

/* What the exemplars' capture takes, named, if given without them. */
static const char *capture_option(const struct ns_opts *o)
{
	return o->wfile ? "-w" : o->html ? "--html" : o->chrome ? "--export" :
	       ns_filter_active(&o->filter) ? "a filter" :
	       o->sample_rate ? ns_sample_option(o->sample_flags) :
	       o->events ? "-e" : o->magnet ? "-M" : o->rtt ? "--rtt" :
	       o->by != NS_BY_NONE ? "--by" : o->count ? "-c" :
	       o->rcvbuf ? "-B" : NULL;
}

/* --serve and --exemplars with the rest. */
static int check_serve(const struct ns_opts *o)
{
	const char *what = capture_option(o);

	if (ns_opts_exemplars(o) && !o->serve) {
		ns_error("--exemplars goes with --serve");
		return -1;
	}
	if (o->serve && (o->rfile || o->calibrate)) {
		ns_error("--serve reads the device's histograms, not with %s",
			 o->rfile ? "-r" : "--calibrate");
		return -1;
	}
	if (o->serve && !ns_opts_exemplars(o) && what) {
		ns_error("%s with --serve applies to the exemplars' capture: add --exemplars",
			 what);
		return -1;
	}
	return 0;
}

int ns_opts_parse(int argc, char **argv, struct ns_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	ns_filter_init(&o->filter, NULL);
	o->dev = getenv("NSDUMP_DEV");
	if (!o->dev || !*o->dev)
		o->dev = NS_DEFAULT_DEV;
	line.argc = argc;
	line.argv = argv;
	getopt_tables();
	scan_for_json(argc, argv);
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct ns_option *opt = option_of(c);

		if (!opt) {
			bad_option(c, argv);
			ns_usage(stderr);
			return -1;
		}
		if (take(o, opt, optarg))
			return -1;
		if (o->help)
			return 0;	/* what follows is not read */
	}
	if (o->tstamp > NS_TS_MAX) {
		ns_error("-t: at most five (-ttttt: since the first line)");
		return -1;
	}
	if (optind < argc && compile_expression(o, argc, argv))
		return -1;
	return check_together(o) || check_serve(o) ? -1 : 0;
}

void ns_opts_free(struct ns_opts *o)
{
	ns_filter_free(&o->filter);	/* the compiled expression */
}
