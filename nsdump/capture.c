// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "capture.h"

static int dev_fail(struct ns_dev *d, const char *what, int err)
{
	const char *why;

	switch (err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		why = "no such device (is netslice.ko loaded?)";
		break;
	case EACCES:
	case EPERM:
		why = "permission denied (needs root or CAP_NET_ADMIN)";
		break;
	case ENOTTY:
		why = "not a NetSlice device";
		break;
	case EBUSY:
		why = "busy (one reader at a time: is another nsdump running?)";
		break;
	default:
		why = strerror(err);
	}
	if (what)
		snprintf(d->err, sizeof(d->err), "%s: %s: %s", d->path, what, why);
	else
		snprintf(d->err, sizeof(d->err), "%s: %s", d->path, why);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
	return -1;
}

int ns_dev_open(struct ns_dev *d, const char *path, uint64_t rcvbuf)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return dev_fail(d, NULL, errno);
	if (ioctl(d->fd, NSIOCGINFO, &d->info))
		return dev_fail(d, "NSIOCGINFO", errno);
	if (d->info.abi_version != NSL_ABI_VERSION) {
		snprintf(d->err, sizeof(d->err),
			 "%s: kernel speaks NetSlice ABI %u, this nsdump %u",
			 path, d->info.abi_version, NSL_ABI_VERSION);
		close(d->fd);
		return -1;
	}
	if (!d->info.tsc_khz || d->info.block_size < NSL_BLOCK_SIZE(0)) {
		snprintf(d->err, sizeof(d->err),
			 "%s: implausible NSIOCGINFO (tsc_khz %u, block_size %u)",
			 path, d->info.tsc_khz, d->info.block_size);
		close(d->fd);
		return -1;
	}
	if (rcvbuf) {
		struct nsl_rcvbuf rb = { .bytes = rcvbuf };

		if (ioctl(d->fd, NSIOCSRCVBUF, &rb)) {
			int err = errno;

			if (err == EINVAL || err == ENOMEM || err == E2BIG) {
				snprintf(d->err, sizeof(d->err),
					 "%s: buffer size %llu refused (%s; largest per CPU %llu)",
					 path, (unsigned long long)rcvbuf,
					 strerror(err),
					 (unsigned long long)d->info.ring_max);
				close(d->fd);
				return -1;
			}
			return dev_fail(d, "NSIOCSRCVBUF", err);
		}
		d->info.ring_bytes = rcvbuf;
	}
	return 0;
}

int ns_dev_start(struct ns_dev *d)
{
	if (ns_dev_collect(d, true))
		return dev_fail(d, "NSIOCSSTATE", errno);
	return 0;
}

int ns_dev_set_events(struct ns_dev *d, const struct nsl_events *ev)
{
	struct nsl_mode mode = {
		.mode = ev->nevents ? NSL_MODE_COUNT : NSL_MODE_DURATION,
	};

	if (ioctl(d->fd, NSIOCSEVENT, ev))
		return -1;
	return ioctl(d->fd, NSIOCSEMODE, &mode) ? -2 : 0;
}

int ns_dev_calib(struct ns_dev *d, uint32_t cpu, bool cold,
		 struct nsl_calib *c)
{
	memset(c, 0, sizeof(*c));
	c->cpu = cpu;
	c->flags = cold ? NSL_CALIB_COLD : 0;
	return ioctl(d->fd, NSIOCGCALIB, c) ? errno : 0;
}

ssize_t ns_dev_read(struct ns_dev *d, void *buf, size_t len,
		    volatile sig_atomic_t *stop, volatile sig_atomic_t *wake,
		    int idle_ms)
{
	struct pollfd p = { .fd = d->fd, .events = POLLIN };

	while (!*stop && !*wake) {
		ssize_t n;
		int ready = poll(&p, 1, idle_ms);

		/*
		 * A signal ends poll() with EINTR, SA_RESTART or not, and the
		 * flags are looked at again; one that comes just before poll()
		 * is seen after @idle_ms.
		 */
		if (ready < 0) {
			if (errno == EINTR)
				continue;
			snprintf(d->err, sizeof(d->err), "%s: poll: %s",
				 d->path, strerror(errno));
			return -1;
		}
		if (!ready)
			return 0;
		n = read(d->fd, buf, len);
		if (n > 0)
			return n;
		if (n == 0) {
			snprintf(d->err, sizeof(d->err), "%s: unexpected end of file",
				 d->path);
			return -1;
		}
		if (errno != EINTR && errno != EAGAIN) {
			snprintf(d->err, sizeof(d->err), "%s: read: %s",
				 d->path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int ns_dev_emitted(struct ns_dev *d, uint64_t *emitted, uint64_t *nomem)
{
	struct nsl_info info;

	if (ioctl(d->fd, NSIOCGINFO, &info))
		return -1;
	*emitted = info.emitted;
	if (nomem)
		*nomem = info.nomem;
	return 0;
}

int ns_dev_collect(struct ns_dev *d, bool on)
{
	struct nsl_state st = { .state = on ? NSL_STATE_ON : NSL_STATE_OFF };

	return ioctl(d->fd, NSIOCSSTATE, &st);
}

int ns_dev_records(struct ns_dev *d, uint32_t flags)
{
	struct nsl_record_opts opts = { .flags = flags };

	return ioctl(d->fd, NSIOCSRECORDS, &opts) ? errno : 0;
}

int ns_dev_filter(struct ns_dev *d, const void *insns, uint32_t len)
{
	struct nsl_filter f = {
		.len = len,
		.insns = (uint64_t)(uintptr_t)insns,
	};

	return ioctl(d->fd, NSIOCSFILTER, &f) ? errno : 0;
}

int ns_dev_filtered(struct ns_dev *d, uint64_t *n)
{
	struct nsl_count c = { 0 };

	if (ioctl(d->fd, NSIOCGFILTERED, &c))
		return -1;
	*n = c.count;
	return 0;
}

int ns_dev_drops(struct ns_dev *d, uint64_t *drops)
{
	struct nsl_count c = { 0 };

	if (ioctl(d->fd, NSIOCGDROPS, &c))
		return -1;
	*drops = c.count;
	return 0;
}

void ns_dev_close(struct ns_dev *d)
{
	if (d->fd < 0)
		return;
	ns_dev_collect(d, false);
	close(d->fd);
	d->fd = -1;
}
