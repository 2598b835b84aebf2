// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "source/capture.h"

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

/*
 * Map the rings if the module can (an older one says ENODEV) and the
 * device is one (a test's stand-in is a plain file).  Failing that,
 * read() carries everything, as it always could.
 */
static void dev_map(struct ns_dev *d)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct nsl_ring_ctl *ctl;
	struct stat st;
	void *m;

	if (fstat(d->fd, &st) || !S_ISCHR(st.st_mode))
		return;
	d->stride = page + d->info.ring_bytes;
	d->map_len = d->info.ncpus * d->stride;
	/*
	 * Populated: every page of the rings is mapped now, with the
	 * capture's start-up, not by faults as the first lap of blocks
	 * reaches it (under QEMU TCG about 50 instructions a lat_tcp round
	 * trip until the rings have gone round once).
	 */
	m = mmap(NULL, d->map_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, d->fd, 0);
	if (m == MAP_FAILED)
		return;
	for (uint32_t cpu = 0; cpu < d->info.ncpus; cpu++) {
		ctl = (const void *)((unsigned char *)m + cpu * d->stride);
		if (ctl->magic != NSL_RING_MAGIC || ctl->cpu != cpu ||
		    ctl->size != d->info.ring_bytes) {
			munmap(m, d->map_len);
			return;
		}
	}
	d->map = m;
}

int ns_dev_open(struct ns_dev *d, const char *path, uint64_t rcvbuf)
{
	memset(d, 0, sizeof(*d));
	d->path = path;
	/* Writable for the mapping's tail; read() needs only reading. */
	d->fd = open(path, O_RDWR | O_CLOEXEC);
	if (d->fd < 0 && (errno == EACCES || errno == EROFS))
		d->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (d->fd < 0)
		return dev_fail(d, NULL, errno);
	if (ioctl(d->fd, NSIOCGINFO, &d->info))
		return dev_fail(d, "NSIOCGINFO", errno);
	if (d->info.abi_version < NS_DEV_ABI_OLDEST ||
	    d->info.abi_version > NSL_ABI_VERSION) {
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
		/* The kernel keeps whole pages. */
		d->info.ring_bytes = rcvbuf & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	}
	dev_map(d);
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

static struct nsl_ring_ctl *dev_ctl(const struct ns_dev *d, uint32_t cpu)
{
	return (struct nsl_ring_ctl *)(d->map + cpu * d->stride);
}

/*
 * The longest run of whole items at @ctl's tail that is contiguous (up to
 * a PAD or the end of the data); a PAD at the tail is stepped over.
 * Returns its bytes (0: none), -1 if the ring holds no whole item there.
 * For a reader of runs (d->runs), ns_decode_run() walks the items first,
 * up to the end of the data or the head: what it takes is the run, its
 * headers read once (its bounds are the ones checked here); an item it
 * does not take, and what follows, is walked here.
 */
static ssize_t ring_run(struct ns_dev *d, uint32_t cpu,
			const unsigned char **items)
{
	struct nsl_ring_ctl *ctl = dev_ctl(d, cpu);
	const unsigned char *data = (const unsigned char *)ctl +
				    (d->stride - ctl->size);
	uint64_t head = __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE);
	uint64_t tail = d->held ? d->held[cpu] : ctl->tail, pos;
	const struct nsl_item_hdr *hdr;
	size_t off, run = 0;

	if (head - tail > ctl->size)
		return -1;
	for (pos = tail; pos != head; pos += hdr->size) {
		off = pos % ctl->size;
		/* An item that ended the data exactly: the rest is at 0. */
		if (run && !off)
			break;
		if (!run && d->runs) {
			ns_decode_run(data + off, head - pos < ctl->size - off ?
				      head - pos : ctl->size - off, &d->run);
			if (d->run.len) {
				run = d->run.len;
				break;
			}
		}
		hdr = (const void *)(data + off);
		if (hdr->size < sizeof(*hdr) || hdr->size % 8 ||
		    hdr->size > ctl->size - off || hdr->size > head - pos)
			return -1;
		if (hdr->kind != NSL_ITEM_PAD) {
			run += hdr->size;
			continue;
		}
		if (run)
			break;
		/* Only the end of the data is padded: the rest is there. */
		tail = pos + hdr->size;
		if (d->held)
			d->held[cpu] = tail;
		else
			__atomic_store_n(&ctl->tail, tail, __ATOMIC_RELEASE);
	}
	*items = data + tail % ctl->size;
	d->taken_ctl = ctl;
	d->taken_cpu = cpu;
	d->taken_tail = tail + run;
	return run;
}

/* The next run of items in the mapping, the rings taken in turn. */
static ssize_t map_take(struct ns_dev *d, const unsigned char **items)
{
	for (uint32_t i = 0; i < d->info.ncpus; i++) {
		uint32_t cpu = (d->next_cpu + i) % d->info.ncpus;
		ssize_t n = ring_run(d, cpu, items);

		if (n < 0) {
			snprintf(d->err, sizeof(d->err),
				 "%s: ring of cpu %u holds no whole item at its tail",
				 d->path, cpu);
			return -1;
		}
		if (n) {
			d->next_cpu = cpu + 1;
			return n;
		}
	}
	return 0;
}

void ns_dev_done(struct ns_dev *d)
{
	struct nsl_ring_ctl *ctl = d->taken_ctl;

	d->taken_ctl = NULL;
	if (!ctl)
		return;
	if (!d->held) {
		__atomic_store_n(&ctl->tail, d->taken_tail, __ATOMIC_RELEASE);
		return;
	}
	d->held[d->taken_cpu] = d->taken_tail;
	d->lent = true;
	/* Room for the kernel's next items, in a ring of any size. */
	if (d->taken_tail - ctl->tail >= ctl->size / 4)
		d->due = true;
}

int ns_dev_lend(struct ns_dev *d)
{
	if (d->held)
		return 0;
	if (!d->map)
		return -1;
	d->held = calloc(d->info.ncpus, sizeof(*d->held));
	if (!d->held)
		return -1;
	for (uint32_t cpu = 0; cpu < d->info.ncpus; cpu++)
		d->held[cpu] = dev_ctl(d, cpu)->tail;
	return 0;
}

void ns_dev_give_back(struct ns_dev *d)
{
	if (!d->lent)
		return;
	for (uint32_t cpu = 0; cpu < d->info.ncpus; cpu++) {
		struct nsl_ring_ctl *ctl = dev_ctl(d, cpu);

		if (ctl->tail != d->held[cpu])
			__atomic_store_n(&ctl->tail, d->held[cpu],
					 __ATOMIC_RELEASE);
	}
	d->lent = d->due = false;
}

ssize_t ns_dev_take(struct ns_dev *d, const unsigned char **items)
{
	ssize_t n;

	d->run.len = 0;
	d->from_map = false;
	if (!d->map || !d->sysinfo_read)
		return 0;
	n = map_take(d, items);
	d->from_map = n > 0;
	return n;
}

ssize_t ns_dev_next(struct ns_dev *d, void *buf, size_t len,
		    const unsigned char **items, volatile sig_atomic_t *stop,
		    volatile sig_atomic_t *wake, int idle_ms)
{
	struct pollfd p = { .fd = d->fd, .events = POLLIN };
	bool mapped = d->map && d->sysinfo_read;

	*items = buf;
	d->run.len = 0;
	d->from_map = false;
	while (!*stop && !*wake) {
		ssize_t n;
		int ready;

		/* What is there is taken; poll() is for when nothing is. */
		n = ns_dev_take(d, items);
		if (n)
			return n;
		ready = poll(&p, 1, idle_ms);
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
		if (mapped)
			continue;
		n = read(d->fd, buf, len);
		if (n > 0) {
			d->sysinfo_read = true;
			return n;
		}
		if (n == 0) {
			snprintf(d->err, sizeof(d->err), "%s: unexpected end of file",
				 d->path);
			return -1;
		}
		if ((errno == EAGAIN || errno == EINTR) && !idle_ms)
			return 0;
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

int ns_dev_filter(struct ns_dev *d, const void *insns, uint32_t len,
		  uint32_t flags)
{
	struct nsl_filter f = {
		.len = len,
		.flags = flags,
		.insns = (uint64_t)(uintptr_t)insns,
	};

	return ioctl(d->fd, NSIOCSFILTER, &f) ? errno : 0;
}

int ns_dev_sample(struct ns_dev *d, uint32_t rate, uint32_t flags)
{
	struct nsl_sample s = { .rate = rate, .flags = flags };

	return ioctl(d->fd, NSIOCSSAMPLE, &s) ? errno : 0;
}

int ns_dev_sampled(struct ns_dev *d, struct nsl_sample *s)
{
	memset(s, 0, sizeof(*s));
	return ioctl(d->fd, NSIOCGSAMPLE, s) ? errno : 0;
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

int ns_dev_agg(struct ns_dev *d, const struct nsl_agg *a)
{
	struct nsl_agg conf = *a;

	return ioctl(d->fd, NSIOCSAGG, &conf) ? errno : 0;
}

void ns_dev_release(struct ns_dev *d)
{
	if (d->map)
		munmap(d->map, d->map_len);
	d->map = NULL;
	free(d->held);
	d->held = NULL;
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

void ns_dev_close(struct ns_dev *d)
{
	if (d->fd >= 0)
		ns_dev_collect(d, false);
	ns_dev_release(d);
}
