// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: nsdump's option parsers.  The first byte picks one:
 *   0  the whole command line (ns_opts_parse: getopt, -B, -c, -p, --dir, -i,
 *      -t, --sample, the checks between options and the filter
 *      expression that libpcap compiles, and the proof that it reads
 *      the flow alone), arguments separated by NUL bytes;
 *   1  -B's size parser, against a reading of its documented form;
 *   2  -p's lport.rport parser (filter.c), the same, repeated as nsdump
 *      allows;
 *   3  --dir's parser.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "opts.h"
#include "view/tstamp.h"

#define MAX_ARGS	32

/*
 * "123" (KiB, as tcpdump's -B), "64k", "4M", "1G": bytes, or 0 if not
 * of that form, zero, or over 2^64 - 1.  Every argument is checked against it: opts.c no
 * longer lets strtoull take leading spaces and a sign (-B ' -5').
 */
static uint64_t size_oracle(const char *s)
{
	uint64_t v = 0, mult = 1024;

	if (!isdigit((unsigned char)*s))
		return 0;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - (*s - '0')) / 10)
			return 0;
		v = v * 10 + (*s - '0');
	}
	if (*s == 'k' || *s == 'K')
		s++;
	else if (*s == 'm' || *s == 'M')
		mult = 1024 * 1024, s++;
	else if (*s == 'g' || *s == 'G')
		mult = 1024 * 1024 * 1024, s++;
	if (*s || v > UINT64_MAX / mult)
		return 0;
	return v * mult;
}

/* "l.r", ports 0..65535 in decimal: 0 and the ports, or -1. */
static int ports_oracle(const char *s, uint16_t *l, uint16_t *r)
{
	uint32_t v[2] = { 0, 0 };

	for (int k = 0; k < 2; k++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		for (; isdigit((unsigned char)*s); s++) {
			v[k] = v[k] * 10 + (*s - '0');
			if (v[k] > 65535)
				return -1;
		}
		if (*s != (k ? '\0' : '.'))
			return -1;
		s++;
	}
	*l = v[0];
	*r = v[1];
	return 0;
}

static void fuzz_command_line(char *args, size_t len)
{
	char *argv[MAX_ARGS + 2] = { "nsdump" };
	int argc = 1;
	struct ns_opts o;

	for (size_t at = 0; at < len && argc <= MAX_ARGS;
	     at += strlen(args + at) + 1)
		argv[argc++] = args + at;
	optind = 0;		/* glibc: start over, as for a new process */
	opterr = 0;
	/* -h: the options after it unread, so unchecked */
	if (!ns_opts_parse(argc, argv, &o) && !o.help) {
		FUZZ_ASSERT(o.filter.nports <= NS_FILTER_PORTS);
		FUZZ_ASSERT(!o.rfile || (!o.rcvbuf && !o.events));
		FUZZ_ASSERT(o.tstamp >= 0 && o.tstamp <= NS_TS_MAX);
		FUZZ_ASSERT(o.sample_rate <= NSL_SAMPLE_RATE_MAX &&
			    !(o.sample_flags & ~NSL_SAMPLE_FLOWS) &&
			    !(o.rfile && o.sample_rate));
		/* the proof walks whatever libpcap compiled, within its bound */
		if (ns_expr_active(&o.filter.expr))
			ns_expr_flow_only(&o.filter.expr.prog);
	}
	ns_opts_free(&o);
}

static void fuzz_ports(char *args, size_t len)
{
	struct ns_filter f;

	ns_filter_init(&f, NULL);
	for (size_t at = 0; at < len; at += strlen(args + at) + 1) {
		unsigned int before = f.nports;
		uint16_t l, r;
		bool want = before < NS_FILTER_PORTS &&
			    !ports_oracle(args + at, &l, &r);

		FUZZ_ASSERT(!ns_filter_add_ports(&f, args + at) == want);
		FUZZ_ASSERT(f.nports == before + want);
		if (want)
			FUZZ_ASSERT(f.port[before].local == l &&
				    f.port[before].remote == r);
	}
	ns_filter_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the arguments, each NUL-terminated, the last one too */
	char *args;
	size_t len;

	if (!size)
		return 0;
	len = size - 1;
	args = malloc(len + 1);
	if (!args)
		abort();
	memcpy(args, data + 1, len);
	args[len] = 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_command_line(args, len);
		break;
	case 1:
		FUZZ_ASSERT(ns_parse_size(args) == size_oracle(args));
		break;
	case 2:
		fuzz_ports(args, len);
		break;
	case 3: {
		struct ns_filter f;
		int ret;

		ns_filter_init(&f, NULL);
		ret = ns_filter_set_dir(&f, args);
		FUZZ_ASSERT(ret ? f.dir == NS_DIR_ANY :
			    (!strcmp(args, "tx") && f.dir == NSL_DIR_TX) ||
			    (!strcmp(args, "rx") && f.dir == NSL_DIR_RX));
		break;
	}
	}
	free(args);
	return 0;
}
