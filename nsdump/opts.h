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
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "netslice.h"
#include "stage/by.h"
#include "stage/filter.h"

struct ns_opts {
	const char *dev, *rfile, *wfile, *events;
	const char *rfile2;	/* a second -r: two hosts' files joined */
	uint64_t join_window_us;	/* --join-window: 0, the join's own */
	const char *html;	/* --html */
	const char *chrome, *pcapng;	/* --export chrome-trace, pcapng */
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
	const char *serve;	/* --serve [ADDR:]PORT */
	/* --exemplars: what NSIOCSAGG asks for besides ON; flags 0: none */
	struct nsl_agg exemplars;
};

/* What the bash completion (doc/nsdump.bash) offers for an argument. */
enum ns_complete {
	NS_COMPLETE_NOTHING,	/* a number, ports: nothing to offer */
	NS_COMPLETE_FILE,	/* a file name */
	NS_COMPLETE_DEVICE,	/* a file name, from /dev/ */
	NS_COMPLETE_INTERFACE,	/* an interface of this machine, or any */
	NS_COMPLETE_EVENTS,	/* events as -L names them, comma-separated */
	NS_COMPLETE_WORDS,	/* one of the option's words */
};

/* What an option does when it is given. */
enum ns_option_kind {
	NS_OPT_OPERAND,		/* no option: the words after them */
	NS_OPT_SET,		/* a bool of struct ns_opts made true */
	NS_OPT_COUNT,		/* an int counted up: -vv, -ttt */
	NS_OPT_STRING,		/* a string: the argument itself */
	NS_OPT_PARSE,		/* what parse() makes of the argument */
	NS_OPT_ACCEPTED,	/* accepted as tcpdump's, nothing to do */
};

/*
 * One option, declared once: its names, its argument, its help and its
 * completion, and what it does.  --help's lines, getopt_long()'s tables
 * and the parser come from ns_options[]; the man page and the bash
 * completion are held against it by a host test (tests/host/test_opts.c).
 */
struct ns_option {
	char letter;		/* -x; 0: a long option only */
	/*
	 * A long option's getopt_long() value (a letter that is no short
	 * option).  glibc reports a long option given an argument it does
	 * not take (--json=1) by this value, which the error names (-j).
	 */
	char key;
	const char *name;	/* --name, or NULL */
	const char *arg;	/* its argument as --help names it; NULL: none */
	enum ns_option_kind kind;
	size_t field;		/* SET, COUNT, STRING: where in struct ns_opts */
	/* PARSE: 0, or -1 once said why */
	int (*parse)(struct ns_opts *o, const char *arg);
	/* --help's text, lines joined by '\n'; a %u in it is @n */
	const char *help;
	unsigned int n;
	enum ns_complete complete;
	const char *words;	/* NS_COMPLETE_WORDS: the words, ' ' between */
};

/* Whether --exemplars asked for any (a threshold alone has no flag). */
static inline bool ns_opts_exemplars(const struct ns_opts *o)
{
	return o->exemplars.flags || o->exemplars.threshold_ns;
}

/* The options in --help's order. */
extern const struct ns_option ns_options[];
extern const unsigned int ns_noptions;

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
