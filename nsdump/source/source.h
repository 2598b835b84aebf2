/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a capture's items come from, behind one interface: the device
 * (capture.h: its rings' runs of bytes, decoded here) or a trace file
 * (file.h: its reader decodes).  The per-item loop asks the source for
 * the next item and hands it to the pipeline, whichever source it is.
 *
 * Between items a source says that it is idle (nothing came for a
 * while: the lines held for time order are due) or that SIGUSR1 asked
 * for the statistics; @stop raised by a signal ends it: a file at once,
 * the device once it has drained what the kernel still delivers.
 */
#ifndef _NS_SOURCE_H
#define _NS_SOURCE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "source/capture.h"
#include "source/decode.h"
#include "source/file.h"

enum ns_source_status {
	NS_SOURCE_ITEM,		/* an item, valid until the next call */
	NS_SOURCE_RUN,		/* items whole in run, valid as long */
	/*
	 * The runs lent out (ns_run.lent) are wanted back: the pipeline
	 * writes out what it holds of them (ns_pipeline_give_back()).
	 */
	NS_SOURCE_RECLAIM,
	NS_SOURCE_IDLE,		/* nothing came for a while */
	NS_SOURCE_STATS,	/* the statistics were asked for */
	NS_SOURCE_END,		/* no more items */
	NS_SOURCE_FAIL,		/* no more items: err says why */
};

struct ns_source;

struct ns_source_ops {
	enum ns_source_status (*next)(struct ns_source *s, struct ns_item *it);
	/*
	 * The caller is done with the items handed out (it stops early),
	 * and holds none of the runs lent.
	 */
	void (*done)(struct ns_source *s);
	void (*close)(struct ns_source *s);
};

struct ns_source {
	const struct ns_source_ops *ops;
	/* raised by signals: stop reading; the statistics asked for */
	volatile sig_atomic_t *stop, *stats;
	char err[1024];		/* what NS_SOURCE_FAIL says, to be said */
	/*
	 * Blocks may come decoded only as far as their header, when
	 * nothing reads further (ns_pipeline_shallow()): the device's do.
	 */
	bool shallow;
	/*
	 * Runs of items may come whole, when the pipeline takes them so
	 * (ns_pipeline_runs()): the device's do, in @run.
	 */
	bool runs;
	struct ns_run run;
};

static inline enum ns_source_status ns_source_next(struct ns_source *s,
						   struct ns_item *it)
{
	return s->ops->next(s, it);
}

static inline void ns_source_done(struct ns_source *s)
{
	s->ops->done(s);
}

static inline void ns_source_close(struct ns_source *s)
{
	s->ops->close(s);
}

/* A trace file (-r): its header read, and its reader for what it says. */
struct ns_file_source {
	struct ns_source src;
	struct nsf_reader reader;
	int fd;			/* 0: standard input */
};

/* @name ('-': standard input): 0, or -1 (src.err) with nothing open. */
int ns_source_file(struct ns_file_source *f, const char *name,
		   volatile sig_atomic_t *stop, volatile sig_atomic_t *stats);

/* The device, opened and set up, collection on (live.h). */
struct ns_device_source {
	struct ns_source src;
	struct ns_dev *dev;
	unsigned char *buf;	/* what read() fills, when not mapped */
	size_t cap;
	const unsigned char *items;	/* the run ns_dev_next() handed out */
	ssize_t n;			/* its bytes; 0 idle, -1 failed */
	size_t pos;			/* the next item's offset in it */
	int phase;			/* where next() is: source.c */
	int resume;			/* the phase after a reclaim */
	bool draining;		/* stopped: what the kernel still delivers */
	uint64_t emitted;	/* draining: the kernel's count, last seen */
	int quiet;		/* draining: reads that brought nothing new */
	int idle_ms;		/* NS_IDLE_MS; --serve: 0, never waits */
};

void ns_source_device(struct ns_device_source *d, struct ns_dev *dev,
		      volatile sig_atomic_t *stop,
		      volatile sig_atomic_t *stats);

#endif /* _NS_SOURCE_H */
