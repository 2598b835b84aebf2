// SPDX-License-Identifier: GPL-2.0
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
#include "stage/expr.h"
#include "view/tstamp.h"

void ns_usage(FILE *f)
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

	ns_msg_json(NULL);
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

/*
 * -i: an interface of this machine.  Its names hold no '/': an argument
 * with one is a device's path, as -i took before --device (kept).
 */
static int set_interface(struct ns_opts *o, const char *arg)
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

/* --export FORMAT FILE: the file is the next argument. */
static int parse_export(struct ns_opts *o, const char *format, int argc,
			char **argv)
{
	if (strcmp(format, "chrome-trace")) {
		ns_error("--export %s: the format is chrome-trace", format);
		return -1;
	}
	if (optind >= argc) {
		ns_error("--export chrome-trace needs a file");
		return -1;
	}
	o->chrome = argv[optind++];
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

int ns_outputs_on_stdout(const struct ns_opts *o)
{
	return (o->wfile && !strcmp(o->wfile, "-")) +
	       (o->html && !strcmp(o->html, "-")) +
	       (o->chrome && !strcmp(o->chrome, "-"));
}

int ns_opts_parse(int argc, char **argv, struct ns_opts *o)
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
			o->rcvbuf = ns_parse_size(optarg);
			if (!o->rcvbuf) {
				ns_error("-B %s: buffer size must be a positive number of KiB (k, M and G suffixes allowed)",
					 optarg);
				return -1;
			}
			break;
		case 'c':
			errno = 0;
			o->count = strtoull(optarg, &end, 10);
			if (errno || !isdigit((unsigned char)*optarg) || *end ||
			    !o->count) {
				ns_error("-c %s: count must be a positive integer", optarg);
				return -1;
			}
			break;
		case 'e': o->events = optarg; break;
		case 'R': o->raw = true; break;
		case 'T': o->rtt = true; break;
		case 'C': o->calibrate = true; break;
		case 'K': o->cold = true; break;
		case 'h':
			o->help = true;
			return 0;
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
				ns_error("-p %s: expected lport.rport, ports 0..65535 (0: any), at most %d",
					 optarg, NS_FILTER_PORTS);
				return -1;
			}
			break;
		case 'D':
			if (ns_filter_set_dir(&o->filter, optarg)) {
				ns_error("--dir %s: expected tx or rx", optarg);
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
				ns_error("--by %s: expected conn, cpu, dir or dev", optarg);
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
			ns_usage(stderr);
			return -1;
		}
	}
	if (o->tstamp > NS_TS_MAX) {
		ns_error("-t: at most five (-ttttt: since the first line)");
		return -1;
	}
	if (optind < argc && compile_expression(o, argc, argv))
		return -1;
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
	if (ns_outputs_on_stdout(o) > 1) {
		ns_error("only one of -w, --html and --export can write to stdout ('-')");
		return -1;
	}
	return 0;
}

void ns_opts_free(struct ns_opts *o)
{
	ns_filter_free(&o->filter);	/* the compiled expression */
}
