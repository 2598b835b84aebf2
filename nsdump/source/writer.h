/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -w: the trace file as a sink of nsdump's pipeline (a tap: it sees every
 * item, filtered or not).  file.c writes the records; this opens the
 * file, adds the header records nsdump knows of, and reports errors.
 */
#ifndef _NS_WRITER_H
#define _NS_WRITER_H

#include <stdbool.h>
#include "source/calib.h"
#include "source/counters.h"
#include "source/file.h"
#include "stage/sink.h"

struct ns_writer {
	struct ns_sink sink;
	struct nsf_writer w;
	bool open;
};

/* What ns_writer_open() did. */
enum ns_writer_status {
	NS_WRITER_OK,
	NS_WRITER_FAILED,	/* @why says why */
	NS_WRITER_GONE,		/* -w -: the pipe's reader left already */
};

/*
 * @name ("-": stdout) with INFO, this nsdump's version, and EVENTS and
 * CALIB when @sel or @cs hold any.  @sample (NULL: none) is the kernel's
 * sampling, kept until the finish for its counts (nsf_writer_open_sampled).
 */
enum ns_writer_status ns_writer_open(struct ns_writer *nw, const char *name,
				     const struct nsl_info *info,
				     const struct nsl_sample *sample,
				     const struct ns_counters *sel,
				     const struct ns_calib_set *cs,
				     const struct ns_calib_set *cold,
				     char *why, size_t len);

#endif /* _NS_WRITER_H */
