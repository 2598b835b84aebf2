/* SPDX-License-Identifier: GPL-2.0 */
/* The live source: /dev/ns (or $NSDUMP_DEV, or -i path). */
#ifndef _NS_CAPTURE_H
#define _NS_CAPTURE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "netslice.h"
#include "source/decode.h"

#define NS_DEFAULT_DEV		"/dev/ns"
#define NS_READ_BLOCKS		64	/* read buffer, in largest items */
#define NS_IDLE_MS		200	/* no items this long: print what is held */
/*
 * The oldest module nsdump reads: ABI 6's items are version 5's with a
 * device count in a compact block's cflags that a version-5 module
 * leaves 0.  The rest of 6 is ioctls: without NSL_FILTER_FLOW the
 * kernel filters before the ring; sampling asked of a version-5 module
 * is an error.
 */
#define NS_DEV_ABI_OLDEST	5
#define NS_DEV_ABI_SAMPLE	6	/* NSIOCSSAMPLE, NSL_FILTER_FLOW */

struct ns_dev {
	int fd;
	const char *path;
	struct nsl_info info;
	char err[256];
	/* The rings mapped (struct nsl_ring_ctl), or NULL: read() only. */
	unsigned char *map;
	size_t map_len, stride;
	unsigned int next_cpu;	/* ring the next take starts at */
	bool sysinfo_read;	/* the sysinfo only comes by read() */
	/* The run ns_dev_next() handed out, until ns_dev_done(). */
	struct nsl_ring_ctl *taken_ctl;
	uint64_t taken_tail;
	uint32_t taken_cpu;
	bool from_map;		/* the last run is in the mapping */
	/*
	 * Lending (ns_dev_lend()): ns_dev_done() leaves a ring's tail where
	 * it was, and the next run is taken from held[cpu], where the last
	 * one ended, until ns_dev_give_back().  The bytes between stay
	 * where they are, for a recorder to write out from there.
	 */
	uint64_t *held;		/* per CPU, or NULL: not lending */
	bool lent;		/* a ring's tail is behind what was taken */
	bool due;		/* one is behind by a quarter of the ring */
	/*
	 * Set by a reader that takes runs whole (ns_decode_run()): a mapped
	 * ring's items are then checked and counted in the one walk over
	 * their headers that finds the run, and @run says what it found.
	 */
	bool runs;
	struct ns_run run;	/* run.len 0: ns_dev_next() counted nothing */
};

/*
 * Open, check the ABI, set the ring size if @rcvbuf, map the rings (a
 * module that cannot leaves read()).  0 or -1.
 */
int ns_dev_open(struct ns_dev *d, const char *path, uint64_t rcvbuf);
/* Switch collection on; 0 or -1 (d->err, the device closed). */
int ns_dev_start(struct ns_dev *d);
/*
 * NSIOCSEVENT with @ev, then NSIOCSEMODE (COUNT if any event, else
 * DURATION): 0, -1 if NSIOCSEVENT failed, -2 if NSIOCSEMODE; errno set.
 */
int ns_dev_set_events(struct ns_dev *d, const struct nsl_events *ev);
/* NSIOCGCALIB for @cpu (default repetitions): 0 or the errno. */
int ns_dev_calib(struct ns_dev *d, uint32_t cpu, bool cold,
		 struct nsl_calib *c);
/*
 * Wait for whole items and hand out the next run of them: in place in
 * the mapping, or read() into @buf (@len bytes); *@items points at them.
 * Returns their bytes, 0 if @stop or @wake was raised by a signal
 * meanwhile or nothing came for @idle_ms (-1: wait for ever; 0: look
 * once, as --serve's loop, which polls the device itself), -1 on error
 * (d->err).  Call ns_dev_done() once done with the items: a mapped
 * ring's tail moves past them then, and the kernel may write over them.
 * With d->runs, d->run.len equal to the bytes returned says that they
 * are one run, as ns_decode_run() would make of them, in d->run.
 */
ssize_t ns_dev_next(struct ns_dev *d, void *buf, size_t len,
		    const unsigned char **items, volatile sig_atomic_t *stop,
		    volatile sig_atomic_t *wake, int idle_ms);
void ns_dev_done(struct ns_dev *d);
/*
 * Lend the runs taken from the mapping from now on: 0, or -1 without
 * the mapping or the memory (nothing changes).
 */
int ns_dev_lend(struct ns_dev *d);
/*
 * The next run in the mapping, as ns_dev_next() takes it, without
 * waiting: its bytes, 0 if there is none now, -1 on error (d->err).
 */
ssize_t ns_dev_take(struct ns_dev *d, const unsigned char **items);
/* The rings' tails move past everything lent: the kernel may write there. */
void ns_dev_give_back(struct ns_dev *d);
int ns_dev_collect(struct ns_dev *d, bool on);	/* NSIOCSSTATE */
/* NSIOCSRECORDS with NSL_REC_* @flags (0: off): 0 or the errno. */
int ns_dev_records(struct ns_dev *d, uint32_t flags);
int ns_dev_drops(struct ns_dev *d, uint64_t *drops);	/* NSIOCGDROPS */
/*
 * NSIOCSFILTER with @len classic BPF instructions (libpcap's struct
 * bpf_insn is the kernel's struct sock_filter) and NSL_FILTER_* @flags;
 * 0 or the errno.
 */
int ns_dev_filter(struct ns_dev *d, const void *insns, uint32_t len,
		  uint32_t flags);
/* NSIOCSSAMPLE: 1 in @rate packets, or flows (NSL_SAMPLE_FLOWS); 0 or the errno. */
int ns_dev_sample(struct ns_dev *d, uint32_t rate, uint32_t flags);
/* NSIOCGSAMPLE: the setting and its counts into @s; 0 or the errno. */
int ns_dev_sampled(struct ns_dev *d, struct nsl_sample *s);
/* NSIOCGFILTERED: blocks the kernel's filter refused; 0 or -1. */
int ns_dev_filtered(struct ns_dev *d, uint64_t *n);
/* NSIOCGINFO: blocks emitted and not made (no memory) since boot */
int ns_dev_emitted(struct ns_dev *d, uint64_t *emitted, uint64_t *nomem);
/* NSIOCSAGG (ABI 7): aggregate mode as @a says; 0 or the errno. */
int ns_dev_agg(struct ns_dev *d, const struct nsl_agg *a);
/* Switch collection off (the module leaves it as it is on close), close. */
void ns_dev_close(struct ns_dev *d);
/* Close, collection and aggregation left as they are (--serve). */
void ns_dev_release(struct ns_dev *d);

#endif /* _NS_CAPTURE_H */
