// SPDX-License-Identifier: GPL-2.0
/*
 * nsdump: read NetSlice blocks from /dev/ns or a trace file, print them
 * per packet and per layer, or write them to a trace file; tcpdump's
 * conventions throughout.  Exit status: 0 fine, 1 error (including a
 * truncated input file or a failed write), 2 bad usage.
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
#include "capture.h"
#include "decode.h"
#include "events.h"
#include "file.h"
#include "report.h"

struct opts {
	const char *dev, *rfile, *wfile, *events;
	uint64_t count, rcvbuf;	/* 0: unlimited / leave as is */
	int verbose;
	bool quiet, json, list;
};

struct run {
	struct opts *o;
	struct ns_report rep;
	struct nsf_writer w;
	bool writing;
	uint64_t captured, skipped;
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

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nsdump [-nqv] [--json] [-B size] [-c count] [-e event[,event]] [-L]\n"
		"              [-i device | -r file] [-w file]\n"
		"  -B size   ring buffer bytes per CPU (k, M suffixes)\n"
		"  -c count  stop after count blocks\n"
		"  -e events counter events (libpfm4 names); -L lists them\n"
		"  -i dev    device to read (default $NSDUMP_DEV or /dev/ns)\n"
		"  -r file   read a trace file ('-' = stdin)\n"
		"  -w file   write a trace file ('-' = stdout); no text unless -v\n"
		"  -q        no per-packet lines; -v more detail; -n accepted\n"
		"  --json    JSON lines instead of text\n");
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
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->dev = getenv("NSDUMP_DEV");
	if (!o->dev || !*o->dev)
		o->dev = NS_DEFAULT_DEV;
	while ((c = getopt_long(argc, argv, "B:c:e:hi:Lnqr:vw:", longopts,
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
		case 'h': usage(stdout); exit(0);
		case 'i': o->dev = optarg; break;
		case 'j': o->json = true; break;
		case 'L': o->list = true; break;
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
	return 0;
}

static void print_stats(struct run *run, struct ns_dev *dev)
{
	uint64_t drops = run->rep.lost;
	const char *src = "";

	if (dev && ns_dev_drops(dev, &drops)) {
		drops = run->rep.lost;
		src = " (NSIOCGDROPS failed: counted from loss records)";
	}
	fprintf(stderr, "%" PRIu64 " blocks captured, %" PRIu64 " dropped by kernel%s\n",
		run->captured, drops, src);
}

/* One item of either source; false once -c is satisfied. */
static bool consume(struct run *run, const struct ns_item *it)
{
	if (run->o->count && run->captured >= run->o->count)
		return false;
	switch (it->type) {
	case NS_ITEM_BLOCK:
		run->captured++;
		ns_report_block(&run->rep, &it->block);
		break;
	case NS_ITEM_LOSS:
		ns_report_loss(&run->rep, &it->loss);
		break;
	case NS_ITEM_SKIPPED:
		run->skipped++;
		break;
	}
	if (run->writing && nsf_write_item(&run->w, it))
		return false;
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
	uint64_t emitted = UINT64_MAX, now;

	stop_flag = 0;
	if (ns_dev_collect(dev, false))
		return 0;
	for (int quiet = 0; quiet < 20 && !stop_flag; ) {
		ssize_t n = ns_dev_read_timeout(dev, buf, cap, 50);
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
		if (ns_dev_emitted(dev, &now) || now == emitted)
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
		ssize_t n = ns_dev_read(dev, buf, cap, &stop_flag, &usr1_flag);

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
	if (nsf_writer_open(&run->w, fd, name, info)) {
		error("%s: %s; no blocks written", name, strerror(run->w.err));
		nsf_writer_close(&run->w);
		run->writing = false;
		return -1;
	}
	return 0;
}

static int close_output(struct run *run)
{
	struct nsf_writer *w = &run->w;

	if (!run->writing)
		return 0;
	run->writing = false;
	if (!nsf_writer_close(w))
		return 0;
	error("%s: %s; %" PRIu64 " blocks (%" PRIu64 " bytes) are in the file, which ends without a trailer",
	      w->name, strerror(w->err), w->blocks, w->committed);
	return -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct ns_dev dev = { .fd = -1 };
	struct nsf_reader reader;
	struct opts o;
	struct run run = { .o = &o };
	const struct nsl_info *info;
	FILE *out = stdout;
	char err[256];
	int in_fd = 0, ret = 0;

	if (parse_opts(argc, argv, &o))
		return 2;
	if (o.list && ns_events_list(stdout, err, sizeof(err))) {
		error("%s", err);
		return 1;
	}
	if (o.events) {
		struct nsl_events ev;

		if (ns_events_parse(o.events, &ev, run.rep.event_name, err,
				    sizeof(err))) {
			error("%s", err);
			return 1;
		}
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);

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
			return 1;
		}
		info = &reader.info;
	} else {
		if (ns_dev_open(&dev, o.dev, o.rcvbuf)) {
			error("%s", dev.err);
			return 1;
		}
		info = &dev.info;
	}

	if (o.wfile) {
		if (!o.verbose)
			out = NULL;
		else if (!strcmp(o.wfile, "-"))
			out = stderr;
		if (open_output(&run, info)) {
			ret = 1;
			goto done;
		}
	}
	ns_report_init(&run.rep, o.json ? &ns_json_printer : &ns_plain_printer,
		       out, info->tsc_khz);
	run.rep.verbose = o.verbose;
	run.rep.quiet = o.quiet;

	if (o.rfile ? read_file(&run, &reader) : read_device(&run, &dev))
		ret = 1;
	if (close_output(&run))
		ret = 1;
	ns_report_table(&run.rep);
	if (out)
		fflush(out);
	print_stats(&run, o.rfile ? NULL : &dev);
	ns_report_free(&run.rep);
done:
	if (o.rfile) {
		nsf_reader_close(&reader);
		if (in_fd > 0)
			close(in_fd);
	} else {
		ns_dev_close(&dev);
	}
	return ret;
}
