/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The device session (--device, $NSDUMP_DEV or /dev/ns): the device
 * opened and set up as the options ask (the counters of -e, its
 * calibration, event records, the expression, sampling), collection
 * switched on with tcpdump's "listening on" line, and at the end what
 * the device alone can say: drops, blocks it could not make, what its
 * filter refused, its sampling.  Errors are said (msg.h) before -1.
 */
#ifndef _NS_LIVE_H
#define _NS_LIVE_H

#include <stdbool.h>
#include <stdint.h>
#include "netslice.h"
#include "opts.h"
#include "source/calib.h"
#include "source/capture.h"
#include "source/counters.h"

struct ns_live {
	struct ns_dev dev;
	const struct ns_opts *o;
	const struct ns_counters *sel;	/* the counters asked for */
	bool records_on;	/* NSIOCSRECORDS switched them on */
	bool kfilter;		/* the kernel runs the expression too */
	struct nsl_sample sample;	/* --sample: the kernel's, as last read */
	bool sample_unread;		/* NSIOCGSAMPLE failed (said once) */
	/* what the report and -w say of sampling: &sample, or NULL */
	const struct nsl_sample *sampled;
};

/*
 * The device of @o set up for a capture of the counters @sel, the warm
 * calibration into @calib and with --cold the cold one into @cold (the
 * caller's to free): 0 or -1.  ns_live_close() after either.
 */
int ns_live_open(struct ns_live *l, const struct ns_opts *o,
		 const struct ns_counters *sel, struct ns_calib_set *calib,
		 struct ns_calib_set *cold);
/* --calibrate: the device, the counters, the one calibration asked for. */
int ns_live_calibrate(struct ns_live *l, const struct ns_opts *o,
		      const struct ns_counters *sel, struct ns_calib_set *cs);
/* Collection on, and the line that says so: 0 or -1. */
int ns_live_start(struct ns_live *l);
/* No more event records: the capture is over. */
void ns_live_records_off(struct ns_live *l);
/* The kernel's final sampling counts, for the report and the trailer. */
void ns_live_finish(struct ns_live *l);
/*
 * The device's lines of the statistics (blocks not made, refused by its
 * filter, sampled), and for the counts' line its @drops (left as they
 * are, loss records', where it cannot say: then @why says so) and what
 * its filter @refused.
 */
void ns_live_stats(struct ns_live *l, uint64_t *drops, uint64_t *refused,
		   const char **why);
void ns_live_close(struct ns_live *l);

#endif /* _NS_LIVE_H */
