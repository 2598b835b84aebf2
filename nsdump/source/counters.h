/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counter events by name (-e EVENT[,EVENT...], -L), through libpfm4
 * (pfm.c; nopfm.c in a build without libpfm4-dev, where -e and -L say so).
 *
 * A name is tried as written, then with the "perf::" prefix, then through
 * a table of perf(1)'s names, whose own encoding is the last resort (a
 * libpfm4 older than the kernel may lack a software event).  The result
 * is checked with a user-space perf_event_open() of the same encoding on
 * one CPU, counting kernel mode only as the kernel will, so that "this
 * machine cannot count that" is said before anything reaches /dev/ns.
 * The machine (the probe, whether a CPU PMU exists, perf_event_paranoid)
 * is behind struct ns_counter_host, which the host tests replace.
 *
 * In nsdump's names these are counters: an event is a MAGNeT event
 * record (stage/magnet.h).  The ABI keeps its own (NSIOCSEVENT, struct
 * nsl_events), and the user's words are perf's: -e takes events.
 */
#ifndef _NS_COUNTERS_H
#define _NS_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#ifdef HAVE_LIBPFM4
#include <perfmon/pfmlib_perf_event.h>	/* its own perf_event.h */
#else
#include <linux/perf_event.h>
#endif
#include "netslice.h"

#define NS_COUNTER_NAME	64	/* bytes of a name, NUL included */

struct ns_counters {
	unsigned int n;				/* events chosen */
	char name[NSL_MAX_EVENTS][NS_COUNTER_NAME];	/* as the user wrote it */
	char canon[NSL_MAX_EVENTS][128];	/* libpfm4's full name */
	struct nsl_events ev;			/* what NSIOCSEVENT takes */
};

struct ns_counter_host {
	/* perf_event_open() of @attr: 0 if it opened, else the errno */
	int (*probe)(const struct perf_event_attr *attr, void *ctx);
	/* does the kernel have a CPU PMU (/sys/bus/event_source/devices/cpu) */
	bool (*cpu_pmu)(void *ctx);
	/* kernel.perf_event_paranoid, or INT_MIN if unknown */
	int (*paranoid)(void *ctx);
	void *ctx;
};

extern const struct ns_counter_host ns_counter_host_real;

/* Can this build name events (libpfm4)?  If not, @why says so. */
bool ns_counters_available(char *why, size_t len);

/* pfm_initialize() once; 0 or -1 with @err set. */
int ns_counters_init(char *err, size_t errlen);

/*
 * One name to an encoding (type, config, config1, config2 of @attr; the
 * rest zero but for exclude_user).  0, or -1 with a message of the form
 * "NAME: reason" in @err (unknown names get close-name suggestions).
 */
int ns_counter_encode(const char *name, struct perf_event_attr *attr,
		      char *canon, size_t canonlen, char *err, size_t errlen);

/* Parse, encode and probe "cycles,instructions"; 0 or -1 with @err. */
int ns_counters_parse(const char *spec, struct ns_counters *sel,
		      const struct ns_counter_host *host, char *err,
		      size_t errlen);

/* Why perf_event_open() refused @attr with @errnum, one line. */
void ns_counter_probe_reason(const char *name,
			     const struct perf_event_attr *attr, int errnum,
			     const struct ns_counter_host *host, char *msg,
			     size_t msglen);

/* Why NSIOCSEVENT or NSIOCSEMODE (@what) failed with @errnum. */
void ns_counters_kernel_reason(const struct ns_counters *sel, const char *what,
			       int errnum, char *msg, size_t msglen);

/* "did you mean a, b?" for @name: the closest known names, or "". */
void ns_counter_suggest(const char *name, char *buf, size_t len);

/* Hardware (needs a PMU) rather than a kernel software event. */
bool ns_counter_is_hw(const struct perf_event_attr *attr);

/*
 * perf_event_open() @attr as the kernel will count it: this encoding,
 * kernel mode only (@probe).  0 if it can be counted, else the errno.
 */
int ns_counter_probe_kernel(const struct perf_event_attr *attr,
			    const struct ns_counter_host *host,
			    struct perf_event_attr *probe);

/* What -L says, to whichever printer. */
struct ns_counter_lister {
	/* @kind "software" or "hardware"; @pmu "perf" or libpfm4's name */
	void (*section)(void *ctx, const char *kind, const char *pmu,
			const char *title);
	/* @alt: perf's second spelling, or NULL */
	void (*counter)(void *ctx, const char *name, const char *alt,
			const char *desc);
	void (*note)(void *ctx, const char *text);
	void *ctx;
};

/* -L: the events this machine can count; 0 or -1 with @err set. */
int ns_counters_list(const struct ns_counter_lister *l,
		     const struct ns_counter_host *host, char *err,
		     size_t errlen);

/* -L as text: "Software events (kernel perf):", then a line each. */
struct ns_counter_plain {
	struct ns_counter_lister lister;
	FILE *out;
	unsigned int sections;
};

void ns_counter_plain_init(struct ns_counter_plain *p, FILE *out);

/* cycles / instructions in any spelling (generic or raw): for IPC. */
enum ns_counter_kind {
	NS_COUNTER_OTHER,
	NS_COUNTER_CYCLES,
	NS_COUNTER_INSTRUCTIONS,
};
enum ns_counter_kind ns_counter_kind(const struct nsl_event *ev,
				     const char *canon);

#endif /* _NS_COUNTERS_H */
