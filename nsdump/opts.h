/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump's command line, as tcpdump's where tcpdump has the option: what
 * it asks for, parsed once before anything is opened.  Under --json,
 * wherever it stands, every error is a JSON line (msg.h), those about
 * the options before it too.
 */
#ifndef _NS_OPTS_H
#define _NS_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "stage/by.h"
#include "stage/filter.h"

struct ns_opts {
	const char *dev, *rfile, *wfile, *events;
	const char *html, *chrome;	/* --html, --export chrome-trace */
	uint64_t count, rcvbuf;	/* 0: unlimited / leave as is */
	int verbose;
	int tstamp;		/* -t's counted: enum ns_tstamp_mode */
	bool quiet, json, list, raw, calibrate, cold, rtt;
	bool magnet, addr;	/* -M, --addr */
	bool version, help;	/* --version, -h */
	enum ns_by_what by;	/* --by */
	struct ns_filter filter;	/* expression, -i, -p, --dir */
	/* --sample, --sample-flows: 1 in sample_rate (0: not asked for) */
	uint32_t sample_rate, sample_flags;
};

/*
 * @argv into @o: 0, or -1 once said why (a usage error: exit status 2).
 * -h stops there: 0 with o->help, what follows it unread.
 */
int ns_opts_parse(int argc, char **argv, struct ns_opts *o);
/* What ns_opts_parse() took: the compiled expression. */
void ns_opts_free(struct ns_opts *o);
/* --help's text. */
void ns_usage(FILE *f);
/*
 * -B as tcpdump's: "4096" and "4096k" KiB, "4M" MiB, "1G" GiB; bytes,
 * 0 if unparsable, zero or overflowing.
 */
uint64_t ns_parse_size(const char *s);
/* "--sample" or "--sample-flows", as @flags (NSL_SAMPLE_FLOWS) say. */
const char *ns_sample_option(uint32_t flags);
/* -w, --html, --export: how many write to stdout (one at most). */
int ns_outputs_on_stdout(const struct ns_opts *o);

#endif /* _NS_OPTS_H */
