// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "source/source.h"

#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))

__attribute__((format(printf, 2, 3)))
static enum ns_source_status say(struct ns_source *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return NS_SOURCE_FAIL;
}

/* ---- a trace file ---- */

static enum ns_source_status file_next(struct ns_source *s,
				       struct ns_item *it)
{
	struct nsf_reader *r = &container_of(s, struct ns_file_source,
					     src)->reader;

	if (*s->stats) {
		*s->stats = 0;
		return NS_SOURCE_STATS;
	}
	if (*s->stop)
		return NS_SOURCE_END;
	switch (nsf_read_item(r, it)) {
	case NSF_OK:
		return NS_SOURCE_ITEM;
	case NSF_END:
		break;
	case NSF_TRUNC:
		return say(s, "%s: truncated: %" PRIu64 " blocks read before the cut",
			   r->name, r->blocks);
	case NSF_ERR:
		return say(s, "%s: %s", r->name, r->err);
	}
	return NS_SOURCE_END;
}

static void file_done(struct ns_source *s)
{
	(void)s;
}

static void file_close(struct ns_source *s)
{
	struct ns_file_source *f = container_of(s, struct ns_file_source, src);

	nsf_reader_close(&f->reader);	/* frees the calibration it lent */
	if (f->fd > 0)
		close(f->fd);
}

static const struct ns_source_ops file_ops = {
	.next = file_next,
	.done = file_done,
	.close = file_close,
};

int ns_source_file(struct ns_file_source *f, const char *name,
		   volatile sig_atomic_t *stop, volatile sig_atomic_t *stats)
{
	f->src = (struct ns_source){
		.ops = &file_ops, .stop = stop, .stats = stats,
	};
	f->fd = 0;
	if (strcmp(name, "-")) {
		f->fd = open(name, O_RDONLY | O_CLOEXEC);
		if (f->fd < 0) {
			say(&f->src, "%s: %s", name, strerror(errno));
			return -1;
		}
	}
	if (!nsf_reader_open(&f->reader, f->fd, name))
		return 0;
	say(&f->src, "%s: %s", name, f->reader.err);
	file_close(&f->src);
	return -1;
}

/* ---- the device ---- */

/* Where the device source's next() stands. */
enum {
	DEV_START,		/* the read buffer to allocate */
	DEV_READ,		/* a run of items to wait for */
	DEV_ITEMS,		/* a run's items to hand out */
	DEV_AFTER,		/* a run handed out, or none came */
	DEV_DRAIN,		/* stopped: collection to switch off */
	DEV_DRAIN_READ,		/* draining: a run to wait for */
	DEV_DRAIN_AFTER,	/* draining: a run handed out, or none came */
	DEV_RECLAIMED,		/* what was lent is written: the tails move */
	DEV_END,
};

/* Draining, SIGUSR1 waits for the end. */
static volatile sig_atomic_t no_wake;

static enum ns_source_status dev_end(struct ns_device_source *d,
				     enum ns_source_status status)
{
	d->phase = DEV_END;
	return status;
}

/*
 * The runs lent out are wanted back, before a wait (a ring's tail held
 * behind its items makes poll() ready at once) or as a ring fills; the
 * tails move at the next call, and the source goes on at @next.
 */
static enum ns_source_status dev_reclaim(struct ns_device_source *d, int next)
{
	d->resume = next;
	d->phase = DEV_RECLAIMED;
	return NS_SOURCE_RECLAIM;
}

/* The next run: at once if one is lent (none there: 0), else waiting. */
static ssize_t dev_take(struct ns_device_source *d, int idle_ms,
			volatile sig_atomic_t *wake)
{
	if (d->dev->lent)
		return ns_dev_take(d->dev, &d->items);
	return ns_dev_next(d->dev, d->buf, d->cap, &d->items, d->src.stop,
			   wake, idle_ms);
}

/*
 * The run's next item: each length checked, a malformed one an error.
 * With runs, as many items as ns_decode_run() takes, whole.
 */
static enum ns_source_status dev_item(struct ns_device_source *d,
				      struct ns_item *it)
{
	enum ns_decode_error err;
	char why[128];

	if (d->src.runs) {
		/* counted as the device found it (ns_dev_next()) */
		if (!d->pos && d->dev->run.len == (size_t)d->n)
			d->src.run = d->dev->run;
		else
			ns_decode_run(d->items + d->pos, d->n - d->pos,
				      &d->src.run);
		if (d->src.run.len) {
			d->src.run.lent = d->dev->held && d->dev->from_map;
			d->pos += d->src.run.len;
			return NS_SOURCE_RUN;
		}
	}
	if (d->src.shallow)
		err = ns_decode_shallow(d->items + d->pos, d->n - d->pos, it);
	else
		err = ns_decode_item(d->items + d->pos, d->n - d->pos, it);
	if (!err) {
		d->pos += it->hdr.size;
		return NS_SOURCE_ITEM;
	}
	ns_decode_describe(err, it, why, sizeof(why));
	ns_dev_done(d->dev);
	return dev_end(d, say(&d->src, "%s: bad item at byte %zu of a batch: %s",
			      d->dev->path, d->pos, why));
}

/*
 * Runs of items from the rings, each handed out item by item.  After
 * SIGINT/SIGTERM (@stop): switch collection off and read what is still
 * coming (blocks of skbs instrumented before the switch arrive as they
 * are freed) until the kernel's emitted count stops moving, so that
 * captured + dropped = emitted.  At most about a second; a second
 * signal cuts it short.
 */
static enum ns_source_status dev_next(struct ns_source *s, struct ns_item *it)
{
	struct ns_device_source *d = container_of(s, struct ns_device_source,
						  src);
	uint64_t now;

	for (;;) {
		switch (d->phase) {
		case DEV_START:
			d->dev->runs = s->runs;
			d->cap = (size_t)NS_READ_BLOCKS * d->dev->info.block_size;
			d->buf = malloc(d->cap);
			if (!d->buf)
				return dev_end(d, say(s, "out of memory"));
			/* A recorder writes the mapped runs from where they are. */
			if (s->runs)
				ns_dev_lend(d->dev);
			d->phase = DEV_READ;
			break;
		case DEV_READ:
			d->n = dev_take(d, d->idle_ms, s->stats);
			if (!d->n && d->dev->lent)
				return dev_reclaim(d, DEV_READ);
			d->pos = 0;
			d->phase = d->n > 0 ? DEV_ITEMS : DEV_AFTER;
			break;
		case DEV_ITEMS:
			if ((ssize_t)d->pos < d->n)
				return dev_item(d, it);
			ns_dev_done(d->dev);
			d->phase = d->draining ? DEV_DRAIN_AFTER : DEV_AFTER;
			if (d->dev->due)
				return dev_reclaim(d, d->phase);
			break;
		case DEV_RECLAIMED:
			ns_dev_give_back(d->dev);
			d->phase = d->resume;
			break;
		case DEV_AFTER:
			/* What came is taken first, whatever signal came with it. */
			if (*s->stats) {
				*s->stats = 0;
				return NS_SOURCE_STATS;
			}
			if (*s->stop) {
				d->phase = DEV_DRAIN;
				break;
			}
			if (d->n < 0)
				return dev_end(d, say(s, "%s", d->dev->err));
			d->phase = DEV_READ;
			if (!d->n)
				return NS_SOURCE_IDLE;
			break;
		case DEV_DRAIN:
			*s->stop = 0;
			if (ns_dev_collect(d->dev, false))
				return dev_end(d, NS_SOURCE_END);
			d->draining = true;
			d->emitted = UINT64_MAX;
			d->quiet = 0;
			d->phase = DEV_DRAIN_READ;
			break;
		case DEV_DRAIN_READ:
			if (d->quiet >= 20 || *s->stop)
				return dev_end(d, NS_SOURCE_END);
			d->n = dev_take(d, 50, &no_wake);
			if (!d->n && d->dev->lent)
				return dev_reclaim(d, DEV_DRAIN_READ);
			if (d->n < 0)
				return dev_end(d, say(s, "%s", d->dev->err));
			d->pos = 0;
			d->phase = DEV_ITEMS;
			break;
		case DEV_DRAIN_AFTER:
			d->phase = DEV_DRAIN_READ;
			if (d->n)
				break;
			if (ns_dev_emitted(d->dev, &now, NULL) || now == d->emitted)
				return dev_end(d, NS_SOURCE_END);
			d->emitted = now;
			d->quiet++;
			break;
		default:
			return NS_SOURCE_END;
		}
	}
}

/* The pipeline gave back what was lent (ns_pipeline_give_back()). */
static void dev_done(struct ns_source *s)
{
	struct ns_dev *dev = container_of(s, struct ns_device_source,
					  src)->dev;

	ns_dev_done(dev);
	ns_dev_give_back(dev);
}

static void dev_close(struct ns_source *s)
{
	free(container_of(s, struct ns_device_source, src)->buf);
}

static const struct ns_source_ops device_ops = {
	.next = dev_next,
	.done = dev_done,
	.close = dev_close,
};

void ns_source_device(struct ns_device_source *d, struct ns_dev *dev,
		      volatile sig_atomic_t *stop,
		      volatile sig_atomic_t *stats)
{
	memset(d, 0, sizeof(*d));
	d->src = (struct ns_source){
		.ops = &device_ops, .stop = stop, .stats = stats,
	};
	d->dev = dev;
	d->phase = DEV_START;
	d->idle_ms = NS_IDLE_MS;
}
