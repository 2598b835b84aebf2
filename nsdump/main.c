// SPDX-License-Identifier: GPL-2.0
/*
 * nsdump: read NetSlice blocks from /dev/ns or a trace file, print them
 * per packet and per layer, or write them to a trace file; tcpdump's
 * conventions throughout.  Exit status: 0 fine, 1 error (including a
 * truncated input file or a failed write), 2 bad usage.  A reader of the
 * output that goes away (EPIPE: `nsdump | head`) ends the capture as ^C
 * does, exit status 0, as tcpdump's SIGPIPE handler does.
 */
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
#include "calib.h"
#include "capture.h"
#include "decode.h"
#include "events.h"
#include "file.h"
#include "filter.h"
#include "magnet.h"
#include "report.h"

struct opts {
	const char *dev, *rfile, *wfile, *events;
	uint64_t count, rcvbuf;	/* 0: unlimited / leave as is */
	int verbose;
	bool quiet, json, list, raw, calibrate, rtt;
	bool magnet, addr;	/* -M, --addr */
	struct ns_filter filter;	/* -p, --dir */
};

struct run {
	struct opts *o;
	struct ns_report rep;
	struct nsf_writer w;
	struct ns_evsel sel;		/* -e, or the file's EVENTS */
	struct ns_calib_set calib;	/* live: NSIOCGCALIB per CPU */
	const struct ns_calib_set *use_calib;	/* NULL: raw */
	struct ns_rtt rtt;
	struct ns_magnet conns;	/* -M or -p: what each connection is */
	bool writing;
	bool records_on;	/* NSIOCSRECORDS switched them on */
	uint64_t captured, skipped, event_recs;
};

static volatile sig_atomic_t stop_flag, usr1_flag;
/* The first error writing the report to stdout (EPIPE is a clean stop). */
static int out_errno;

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
		"usage: nsdump [-Mnqv] [--json] [--raw] [--rtt] [--addr] [-B size] [-c count]\n"
		"              [-e event[,event...]] [-p lport.rport]... [--dir tx|rx]\n"
		"              [-i device | -r file] [-w file]\n"
		"       nsdump -L\n"
		"       nsdump --calibrate [-e event[,event...]] [-i device | -r file]\n"
		"  -B size      ring buffer bytes per CPU (k, M suffixes)\n"
		"  -c count     stop after count blocks\n"
		"  -e events    up to %d counter events (perf or libpfm4 names)\n"
		"  -L           list the events this machine can count\n"
		"  -i dev       device to read (default $NSDUMP_DEV or /dev/ns)\n"
		"  -r file      read a trace file ('-' = stdin)\n"
		"  -w file      write a trace file ('-' = stdout); no text unless -v\n"
		"  -q           no per-packet lines; -v more detail; -n accepted\n"
		"  -M           MAGNeT event records: one line each, and per connection\n"
		"               the application-vs-wire table (Table III)\n"
		"  --addr       with -M, ask the kernel for addresses and ports too\n"
		"  -p l.r       only connections with local port l and remote port r\n"
		"               (0: any; repeatable; ports come from event records)\n"
		"  --dir tx|rx  only the send or the receive direction\n"
		"  --json       JSON lines instead of text\n"
		"  --raw        do not correct for the macros' own cost\n"
		"  --rtt        the user-level round trip of a ping-pong (formula 5)\n"
		"  --calibrate  print the macros' own cost on this machine (Table 2)\n",
		NSL_MAX_EVENTS);
}

/*
 * As tcpdump's "listening on": collection is on from here, so a script can
 * start its traffic once this line is on stderr.
 */
static void print_listening(const struct run *run, const struct ns_dev *dev)
{
	unsigned int i;

	fprintf(stderr, "nsdump: listening on %s, %u CPUs, %llu KiB ring per CPU, ",
		dev->path, dev->info.ncpus,
		(unsigned long long)(dev->info.ring_bytes / 1024));
	if (!run->sel.n)
		fputs("duration mode (TSC only)", stderr);
	for (i = 0; i < run->sel.n; i++)
		fprintf(stderr, "%s%s", i ? "," : "counting ", run->sel.name[i]);
	fputc('\n', stderr);
	fflush(stderr);
}

__attribute__((format(printf, 1, 2)))
static void error(const char *fmt, ...)
{
	va_list ap;

	fputs("nsdump: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* "64k", "4M", "100000": bytes; 0 if unparsable, zero or overflowing. */
static uint64_t parse_size(const char *s)
{
	uint64_t v, mult = 1;
	char *end;

	if (!*s || *s == '-')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	if (*end == 'k' || *end == 'K')
		mult = 1024, end++;
	else if (*end == 'm' || *end == 'M')
		mult = 1024 * 1024, end++;
	if (*end || v > UINT64_MAX / mult)
		return 0;
	return v * mult;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "raw", no_argument, NULL, 'R' },
		{ "rtt", no_argument, NULL, 'T' },
		{ "calibrate", no_argument, NULL, 'C' },
		{ "addr", no_argument, NULL, 'A' },
		{ "dir", required_argument, NULL, 'D' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	ns_filter_init(&o->filter, NULL);
	o->dev = getenv("NSDUMP_DEV");
	if (!o->dev || !*o->dev)
		o->dev = NS_DEFAULT_DEV;
	while ((c = getopt_long(argc, argv, "B:c:e:hi:LMnp:qr:vw:", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'B':
			o->rcvbuf = parse_size(optarg);
			if (!o->rcvbuf) {
				error("-B %s: buffer size must be a positive number of bytes (k and M suffixes allowed)",
				      optarg);
				return -1;
			}
			break;
		case 'c':
			errno = 0;
			o->count = strtoull(optarg, &end, 10);
			if (errno || !*optarg || *end || *optarg == '-' ||
			    !o->count) {
				error("-c %s: count must be a positive integer", optarg);
				return -1;
			}
			break;
		case 'e': o->events = optarg; break;
		case 'R': o->raw = true; break;
		case 'T': o->rtt = true; break;
		case 'C': o->calibrate = true; break;
		case 'h': usage(stdout); exit(0);
		case 'i': o->dev = optarg; break;
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
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		error("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return -1;
	}
	if (o->rfile && o->rcvbuf) {
		error("-B applies to a device, not to -r");
		return -1;
	}
	if (o->rfile && o->events) {
		error("-e applies to a device; a file's events are those it was written with");
		return -1;
	}
	if (o->addr && !o->magnet) {
		error("--addr goes with -M");
		return -1;
	}
	return 0;
}

static void print_stats(struct run *run, struct ns_dev *dev)
{
	uint64_t drops = run->rep.lost, emitted, nomem;
	const char *src = "";

	if (dev && ns_dev_drops(dev, &drops)) {
		drops = run->rep.lost;
		src = " (NSIOCGDROPS failed: counted from loss records)";
	}
	/* Packets that never had a block are lost too: say so. */
	if (dev && !ns_dev_emitted(dev, &emitted, &nomem) &&
	    nomem > dev->info.nomem)
		fprintf(stderr, "%" PRIu64 " blocks not made by the kernel (no memory for them)\n",
			(uint64_t)(nomem - dev->info.nomem));
	if (run->event_recs)
		fprintf(stderr, "%" PRIu64 " blocks and %" PRIu64 " event records captured, %" PRIu64 " dropped by kernel%s\n",
			run->captured, run->event_recs, drops, src);
	else
		fprintf(stderr, "%" PRIu64 " blocks captured, %" PRIu64 " dropped by kernel%s\n",
			run->captured, drops, src);
}

/* A block or event record that the filter let through (now or later). */
static void deliver(void *ctx, const struct ns_item *it)
{
	struct run *run = ctx;

	if (it->type == NS_ITEM_BLOCK)
		ns_report_block(&run->rep, &it->block);
	else
		ns_report_event(&run->rep, &it->event);
}

static void offer(struct run *run, const struct ns_item *it)
{
	if (ns_filter_offer(&run->o->filter, it) == NS_FILTER_PASS)
		deliver(run, it);
}

static void event_record(struct run *run, const struct ns_item *it)
{
	run->event_recs++;
	if (ns_magnet_learn(&run->conns, &it->event) &&
	    run->o->filter.nports)
		ns_filter_release(&run->o->filter, it->event.conn, deliver, run);
	offer(run, it);
}

/* One item of either source; false once -c is satisfied or output fails. */
static bool consume(struct run *run, const struct ns_item *it)
{
	if (run->o->count && run->captured >= run->o->count)
		return false;
	switch (it->type) {
	case NS_ITEM_BLOCK:
		run->captured++;
		offer(run, it);
		break;
	case NS_ITEM_LOSS:
		ns_report_loss(&run->rep, &it->loss);
		break;
	case NS_ITEM_EVENT:
		event_record(run, it);
		break;
	case NS_ITEM_SYSINFO:
		ns_report_sysinfo(&run->rep, &it->sysinfo);
		break;
	case NS_ITEM_SKIPPED:
		run->skipped++;
		break;
	}
	if (run->writing && nsf_write_item(&run->w, it))
		return false;
	if (run->rep.out && ferror(run->rep.out)) {
		/* said once, at the end: the first error, as glibc set it */
		if (!out_errno)
			out_errno = errno ? errno : EIO;
		return false;
	}
	return !(run->o->count && run->captured >= run->o->count);
}

/* The items of one read(): 0, 1 once -c is satisfied, -1 on a bad item. */
static int consume_buffer(struct run *run, struct ns_dev *dev,
			  const unsigned char *buf, size_t n)
{
	for (size_t pos = 0; pos < n; ) {
		struct ns_item it;
		enum ns_decode_error err;
		char why[128];

		err = ns_decode_item(buf + pos, n - pos, &it);
		if (err) {
			ns_decode_describe(err, &it, why, sizeof(why));
			error("%s: bad item at byte %zu of a read: %s",
			      dev->path, pos, why);
			return -1;
		}
		pos += it.hdr.size;
		if (!consume(run, &it))
			return 1;
	}
	return 0;
}

/*
 * After SIGINT/SIGTERM: switch collection off and read what is still
 * coming (blocks of skbs instrumented before the switch arrive as they
 * are freed) until the kernel's emitted count stops moving, so that
 * captured + dropped = emitted.  At most about a second; a second
 * signal cuts it short.
 */
static int drain_device(struct run *run, struct ns_dev *dev,
			unsigned char *buf, size_t cap)
{
	static volatile sig_atomic_t no_wake;
	uint64_t emitted = UINT64_MAX, now;

	stop_flag = 0;
	if (ns_dev_collect(dev, false))
		return 0;
	for (int quiet = 0; quiet < 20 && !stop_flag; ) {
		ssize_t n = ns_dev_read(dev, buf, cap, &stop_flag, &no_wake,
					50);
		int ret;

		if (n < 0) {
			error("%s", dev->err);
			return -1;
		}
		ret = consume_buffer(run, dev, buf, n);
		if (ret)
			return ret < 0 ? -1 : 0;
		if (n)
			continue;
		if (ns_dev_emitted(dev, &now, NULL) || now == emitted)
			break;
		emitted = now;
		quiet++;
	}
	return 0;
}

static int read_device(struct run *run, struct ns_dev *dev)
{
	size_t cap = (size_t)NS_READ_BLOCKS * dev->info.block_size;
	unsigned char *buf = malloc(cap);
	int ret = 0;

	if (!buf) {
		error("out of memory");
		return -1;
	}
	while (!ret) {
		ssize_t n = ns_dev_read(dev, buf, cap, &stop_flag, &usr1_flag,
					NS_IDLE_MS);

		if (usr1_flag) {
			usr1_flag = 0;
			print_stats(run, dev);
		}
		if (stop_flag) {
			ret = drain_device(run, dev, buf, cap);
			break;
		}
		if (n < 0) {
			error("%s", dev->err);
			ret = -1;
		} else if (!n) {
			/* Idle: the event lines held for time order are due. */
			ns_report_flush_events(&run->rep);
		} else {
			ret = consume_buffer(run, dev, buf, n);
		}
	}
	free(buf);
	return ret < 0 ? -1 : 0;
}

static int read_file(struct run *run, struct nsf_reader *r)
{
	for (;;) {
		struct ns_item it;

		if (usr1_flag) {
			usr1_flag = 0;
			print_stats(run, NULL);
		}
		if (stop_flag)
			return 0;
		switch (nsf_read_item(r, &it)) {
		case NSF_OK:
			if (!consume(run, &it))
				return 0;
			break;
		case NSF_END:
			return 0;
		case NSF_TRUNC:
			error("%s: truncated: %" PRIu64 " blocks read before the cut",
			      r->name, r->blocks);
			return -1;
		case NSF_ERR:
			error("%s: %s", r->name, r->err);
			return -1;
		}
	}
}

/* -w: 0, -1 (said why), 1 if the pipe's reader is gone already. */
static int open_output(struct run *run, const struct nsl_info *info)
{
	const char *name = run->o->wfile;
	int fd = 1;

	if (strcmp(name, "-")) {
		fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			error("%s: %s", name, strerror(errno));
			return -1;
		}
	}
	run->writing = true;
	if (nsf_writer_open(&run->w, fd, name, info) ||
	    (run->sel.n && nsf_write_events(&run->w, &run->sel)) ||
	    (ns_calib_count(&run->calib) &&
	     nsf_write_calib(&run->w, &run->calib))) {
		int err = run->w.err;

		if (err != EPIPE)
			error("%s: %s; no blocks written", name, strerror(err));
		nsf_writer_close(&run->w);
		run->writing = false;
		return err == EPIPE ? 1 : -1;
	}
	return 0;
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
static int calibrate_device(struct run *run, struct ns_dev *dev)
{
	struct ns_calib_set *cs = &run->calib;

	if (ns_calib_alloc(cs, dev->info.ncpus)) {
		error("out of memory");
		return -1;
	}
	cs->tsc_khz = dev->info.tsc_khz;
	ns_calib_read_model(cs, "/proc/cpuinfo");
	for (uint32_t cpu = 0; cpu < dev->info.ncpus; cpu++) {
		struct nsl_calib c;
		int err = ns_dev_calib(dev, cpu, &c);

		if (err == ENOTTY || err == EOPNOTSUPP)
			break;
		if (err == EPERM || err == EACCES) {
			error("%s: NSIOCGCALIB: permission denied (needs CAP_NET_ADMIN)",
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
 * NSIOCSRECORDS for -M (TCP state and IP fields) or -p (the ports): a
 * kernel without event records says so once and the capture goes on.
 */
static int records_on(struct run *run, struct ns_dev *dev)
{
	struct opts *o = run->o;
	uint32_t flags = NSL_REC_ON;
	int err;

	if (!o->magnet && !o->filter.nports)
		return 0;
	if (o->magnet)
		flags |= NSL_REC_TCP | NSL_REC_IP;
	if (o->addr || o->filter.nports)
		flags |= NSL_REC_ADDR;
	err = ns_dev_records(dev, flags);
	if (!err) {
		run->records_on = true;
		return 0;
	}
	if (err == EINVAL || err == ENOTTY || err == EOPNOTSUPP) {
		error("%s: kernel does not produce event records (NSIOCSRECORDS: %s); going on without them",
		      dev->path, strerror(err));
		return 0;
	}
	error("%s: NSIOCSRECORDS: %s", dev->path, strerror(err));
	return -1;
}

static void records_off(struct run *run, struct ns_dev *dev)
{
	if (run->records_on && dev->fd >= 0)
		ns_dev_records(dev, 0);
	run->records_on = false;
}

/* -p's notes, once each, after the tables. */
static void filter_notes(struct run *run)
{
	struct ns_filter *f = &run->o->filter;

	if (!f->nports)
		return;
	ns_filter_finish(f);
	if (!run->conns.with_addr) {
		error("-p: no event record carried ports (capture with -p or -M --addr): nothing matched");
		return;
	}
	if (f->undecided_blocks || f->undecided_events)
		error("-p: %" PRIu64 " blocks and %" PRIu64 " event records left out: their connection's ports never appeared",
		      f->undecided_blocks, f->undecided_events);
}

static int close_output(struct run *run)
{
	struct nsf_writer *w = &run->w;

	if (!run->writing)
		return 0;
	run->writing = false;
	if (!nsf_writer_close(w) || w->err == EPIPE)
		return 0;
	error("%s: %s; %" PRIu64 " blocks (%" PRIu64 " bytes) are in the file, which ends without a trailer",
	      w->name, strerror(w->err), w->blocks, w->committed);
	return -1;
}

/* Text on @f all written: 0, or "output: <why>" and 1 (EPIPE: 0). */
static int finish_output(FILE *f)
{
	int err;

	if (!f)
		return 0;
	/* After a failed write glibc drops the buffer: the first error wins. */
	err = fflush(f) == EOF ? errno : ferror(f) ? EIO : 0;
	if (out_errno)
		err = out_errno;
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
	else if (!run->o->calibrate)
		error("%s: values are raw", none_msg);
}

static int print_calibration(struct run *run)
{
	const struct nsl_calib *first = ns_calib_get(&run->calib, 0);
	const char *names[NSL_MAX_EVENTS] = { NULL };

	if (!first) {
		error("no calibration (the kernel offers none, or the file has no CALIB record)");
		return 1;
	}
	for (unsigned int e = 0; e < run->sel.n; e++)
		names[e] = run->sel.name[e];
	ns_calib_print(stdout, &run->calib, names,
		       first->nevents > run->sel.n ? first->nevents : run->sel.n);
	return 0;
}

int main(int argc, char **argv)
{
	struct ns_dev dev = { .fd = -1 };
	struct nsf_reader reader;
	struct opts o;
	struct run run = { .o = &o };
	const struct nsl_info *info;
	FILE *out = stdout;
	char err[512];
	int in_fd = 0, ret = 0;

	if (parse_opts(argc, argv, &o))
		return 2;
	if (o.list) {
		if (ns_events_list(stdout, &ns_event_host_real, err, sizeof(err))) {
			error("%s", err);
			return 1;
		}
		return finish_output(stdout);
	}
	if (o.events && ns_events_parse(o.events, &run.sel, &ns_event_host_real,
					err, sizeof(err))) {
		error("%s", err);
		return 1;
	}

	set_signals();

	if (o.rfile) {
		if (strcmp(o.rfile, "-")) {
			in_fd = open(o.rfile, O_RDONLY | O_CLOEXEC);
			if (in_fd < 0) {
				error("%s: %s", o.rfile, strerror(errno));
				return 1;
			}
		}
		if (nsf_reader_open(&reader, in_fd, o.rfile)) {
			error("%s: %s", o.rfile, reader.err);
			nsf_reader_close(&reader);
			return 1;
		}
		info = &reader.info;
		if (reader.have_events)
			run.sel = reader.events;
		if (reader.have_calib) {
			run.calib = reader.calib;	/* the reader lends it */
			if (!run.calib.tsc_khz)
				run.calib.tsc_khz = info->tsc_khz;
		}
		snprintf(err, sizeof(err), "%s: no calibration in the file",
			 o.rfile);
		use_calibration(&run, err);
	} else {
		if (ns_dev_open(&dev, o.dev, o.rcvbuf)) {
			error("%s", dev.err);
			return 1;
		}
		info = &dev.info;
		if (set_events(&run, &dev) || calibrate_device(&run, &dev) ||
		    (!o.calibrate && records_on(&run, &dev))) {
			ret = 1;
			goto done;
		}
		use_calibration(&run, "no calibration from the kernel");
	}
	if (o.calibrate) {
		ret = print_calibration(&run);
		if (finish_output(stdout))
			ret = 1;
		goto done;
	}

	if (o.wfile) {
		if (!o.verbose)
			out = NULL;
		else if (!strcmp(o.wfile, "-"))
			out = stderr;
		switch (open_output(&run, info)) {
		case -1:
			ret = 1;
			goto done;
		case 1:
			goto done;	/* nothing to capture for */
		}
	}
	if (!o.rfile && ns_dev_start(&dev)) {
		error("%s", dev.err);
		close_output(&run);
		ret = 1;
		goto done;
	}
	if (!o.rfile)
		print_listening(&run, &dev);
	ns_report_init(&run.rep, o.json ? &ns_json_printer : &ns_plain_printer,
		       out, info->tsc_khz);
	ns_clock_from_info(&run.rep.clock, info);
	ns_magnet_init(&run.conns);
	o.filter.conns = &run.conns;
	if (o.magnet)
		run.rep.mag = &run.conns;
	ns_report_set_events(&run.rep, &run.sel);
	run.rep.calib = run.use_calib;
	run.rep.verbose = o.verbose;
	run.rep.quiet = o.quiet;
	if (o.rtt) {
		ns_rtt_init(&run.rtt);
		run.rep.rtt = &run.rtt;
	}

	if (o.rfile ? read_file(&run, &reader) : read_device(&run, &dev))
		ret = 1;
	if (!o.rfile)
		records_off(&run, &dev);
	if (close_output(&run))
		ret = 1;
	ns_report_table(&run.rep);
	if (finish_output(out))
		ret = 1;
	filter_notes(&run);
	print_stats(&run, o.rfile ? NULL : &dev);
	ns_report_free(&run.rep);
	ns_magnet_free(&run.conns);
	if (o.rtt)
		ns_rtt_free(&run.rtt);
done:
	if (o.rfile) {
		nsf_reader_close(&reader);	/* frees run.calib's tables */
		if (in_fd > 0)
			close(in_fd);
	} else {
		records_off(&run, &dev);
		ns_calib_free(&run.calib);
		ns_dev_close(&dev);
	}
	ns_filter_free(&o.filter);
	return ret;
}
