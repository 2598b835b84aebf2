// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ns from user space: bad input is refused with the documented errno,
 * read() hands out whole items only, and every block offered is accounted
 * for (read, or dropped and marked by a loss item); blocks and event
 * records share one seq per CPU, and the stream starts with a sysinfo.  Runs as root in the
 * VM with netslice.ko loaded; TAP on stdout, exit 0 pass / 1 fail.
 *
 *	ioctl_test check		the whole test
 *	ioctl_test traffic SECONDS	loopback TCP traffic, for unload tests
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/perf_event.h>

#include "netslice.h"
#include "itemstream.h"
#define TAP_IMPLEMENT
#include "../tap.h"

#define DEV		"/dev/ns"
#define BIG_READ	(1 << 20)
#define PAGE		4096	/* the smallest ring */
#define BLOCK		sizeof(struct nsl_block)

#define tap(ok, ...)	tap_ok(ok, __VA_ARGS__)

/* @ret/@err are what the call returned; it must have failed with @want. */
static void expect_errno(long ret, int err, int want, const char *what)
{
	if (ret == -1 && err == want)
		tap(1, "%s -> %s", what, strerrorname_np(want));
	else
		tap(0, "%s -> %s (got %ld, %s)", what, strerrorname_np(want),
		    ret, ret == -1 ? strerrorname_np(err) : "success");
}

#define EXPECT_ERR(call, want) do {				\
		long ret_ = (call);				\
		expect_errno(ret_, errno, want, #call);		\
	} while (0)

#define EXPECT_OK(call) do {					\
		long ret_ = (call);				\
		int err_ = errno;				\
		tap(ret_ == 0, "%s -> 0%s%s", #call,		\
		    ret_ ? ", got " : "",			\
		    ret_ ? strerrorname_np(err_) : "");		\
	} while (0)

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------- traffic */

/* Send @nmsg messages of @size bytes (or for @secs seconds) over TCP on lo. */
static int traffic(int nmsg, size_t size, int secs)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	char *buf = calloc(1, size);
	int ls, cs, one = 1, status, i;
	time_t end = time(NULL) + secs;
	pid_t pid;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (!buf || ls < 0 || bind(ls, (void *)&a, sizeof(a)) ||
	    listen(ls, 1) || getsockname(ls, (void *)&a, &alen))
		return -1;
	pid = fork();
	if (pid == 0) {
		int s = accept(ls, NULL, NULL);

		while (s >= 0 && read(s, buf, size) > 0)
			;
		_exit(0);
	}
	close(ls);
	cs = socket(AF_INET, SOCK_STREAM, 0);
	if (cs < 0 || connect(cs, (void *)&a, sizeof(a)))
		return -1;
	setsockopt(cs, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (i = 0; secs ? time(NULL) < end : i < nmsg; i++)
		if (write(cs, buf, size) < 0)
			break;
	close(cs);
	waitpid(pid, &status, 0);
	free(buf);
	return 0;
}

/* ------------------------------------------------------ stream check */

/* Read with a @len buffer until EAGAIN; returns the reads' total. */
static long drain(int fd, struct ns_stream *s, size_t len)
{
	static char *buf;
	long total = 0;
	ssize_t n;

	if (!buf)
		buf = malloc(BIG_READ);
	while ((n = read(fd, buf, len)) > 0) {
		if ((size_t)n > len)
			ns_stream_bad(s, "read %zd bytes into %zu", n, len);
		ns_stream_take(s, buf, n);
		total += n;
	}
	if (n == 0)
		ns_stream_bad(s, "read returned 0");
	else if (errno != EAGAIN)
		ns_stream_bad(s, "read: %s", strerror(errno));
	return total;
}

static uint64_t counter(int fd, unsigned long cmd)
{
	struct nsl_count c = { 0 };

	if (ioctl(fd, cmd, &c))
		return ~0ULL;
	return c.count;
}

static uint64_t emitted(int fd)
{
	struct nsl_info info;

	return ioctl(fd, NSIOCGINFO, &info) ? ~0ULL : info.emitted;
}

static int set_state(int fd, uint32_t on)
{
	struct nsl_state st = { .state = on };

	return ioctl(fd, NSIOCSSTATE, &st);
}

static int set_rcvbuf(int fd, uint64_t bytes)
{
	struct nsl_rcvbuf rb = { .bytes = bytes };

	return ioctl(fd, NSIOCSRCVBUF, &rb);
}

/*
 * Collection is off: drain, then check that every block offered since
 * open() was read or dropped, that the drops are exactly the loss items'
 * sum, and that the core emitted exactly what we were offered.
 */
static void check_accounting(int fd, struct ns_stream *s, uint64_t emitted0,
			     const char *phase)
{
	uint64_t pkts, drops, e1, e2;
	int tries;

	for (tries = 0; tries < 20; tries++) {
		msleep(100);	/* skbs still being freed may emit late */
		e1 = emitted(fd);
		pkts = counter(fd, NSIOCGPACKETS);
		drops = counter(fd, NSIOCGDROPS);
		drain(fd, s, BIG_READ);
		e2 = emitted(fd);
		if (e1 == e2 && pkts == counter(fd, NSIOCGPACKETS))
			break;
	}
	tap(!s->bad[0], "%s: stream of whole items, seqs continuous%s%s",
	    phase, s->bad[0] ? ": " : "", s->bad);
	tap(pkts == s->items + drops,
	    "%s: packets %llu == items read %llu + drops %llu", phase,
	    (unsigned long long)pkts, (unsigned long long)s->items,
	    (unsigned long long)drops);
	tap(drops == s->lost, "%s: drops %llu == lost in %llu loss items %llu",
	    phase, (unsigned long long)drops, (unsigned long long)s->losses,
	    (unsigned long long)s->lost);
	tap(e2 - emitted0 == pkts,
	    "%s: core emitted %llu since open == packets %llu", phase,
	    (unsigned long long)(e2 - emitted0), (unsigned long long)pkts);
}

/* ------------------------------------------------------ the mapping */

static size_t map_stride(const struct nsl_info *info)
{
	return sysconf(_SC_PAGESIZE) + info->ring_bytes;
}

static struct nsl_ring_ctl *map_ctl(void *m, const struct nsl_info *info,
				    unsigned int cpu)
{
	return (struct nsl_ring_ctl *)((char *)m + cpu * map_stride(info));
}

/*
 * What a mapper does: every ring's items from tail to head, in place, into
 * @s (PADs skipped), then tail moved past them.  Returns the items taken;
 * with @half, only about half of each ring's (a reader cut short).
 */
static uint64_t map_take(void *m, const struct nsl_info *info,
			 struct ns_stream *s, bool half)
{
	const struct nsl_item_hdr *hdr;
	struct nsl_ring_ctl *ctl;
	uint64_t head, pos, n = 0;
	unsigned int cpu;
	char *data;

	for (cpu = 0; cpu < info->ncpus; cpu++) {
		ctl = map_ctl(m, info, cpu);
		data = (char *)ctl + sysconf(_SC_PAGESIZE);
		head = __atomic_load_n(&ctl->head, __ATOMIC_ACQUIRE);
		pos = ctl->tail;
		if (head - pos > ctl->size) {
			ns_stream_bad(s, "cpu %u: head %llu tail %llu", cpu,
				   (unsigned long long)head,
				   (unsigned long long)pos);
			continue;
		}
		if (half)
			head = pos + (head - pos) / 2;
		while (pos < head) {
			hdr = (const void *)(data + pos % ctl->size);
			if (hdr->size < sizeof(*hdr) || hdr->size % 8 ||
			    pos % ctl->size + hdr->size > ctl->size) {
				ns_stream_bad(s, "cpu %u: bad item at %llu", cpu,
					   (unsigned long long)pos);
				break;
			}
			if (hdr->kind != NSL_ITEM_PAD) {
				ns_stream_take(s, (const char *)hdr, hdr->size);
				n++;
			}
			pos += hdr->size;
		}
		__atomic_store_n(&ctl->tail, pos, __ATOMIC_RELEASE);
	}
	return n;
}

/* The rings mapped: the same stream and accounting, items in place. */
static void check_mmap(int fd, struct ns_stream *s, uint64_t e0)
{
	const int rw = PROT_READ | PROT_WRITE;
	uint64_t offered = 0, dropped = 0, taken;
	struct nsl_ring_ctl *ctl;
	struct nsl_info info;
	unsigned int cpu, ok;
	size_t len, page = sysconf(_SC_PAGESIZE);
	unsigned char vec;
	void *m, *m2;
	int status;
	pid_t pid;

	EXPECT_OK(ioctl(fd, NSIOCGINFO, &info));
	len = info.ncpus * map_stride(&info);
	m = mmap(NULL, len - page, rw, MAP_SHARED, fd, 0);
	expect_errno(m == MAP_FAILED ? -1 : 0, errno, EINVAL,
		     "mmap() one page short");
	m = mmap(NULL, len, rw, MAP_PRIVATE, fd, 0);
	expect_errno(m == MAP_FAILED ? -1 : 0, errno, EINVAL,
		     "mmap() MAP_PRIVATE");
	m = mmap(NULL, len, rw, MAP_SHARED, fd, page);
	expect_errno(m == MAP_FAILED ? -1 : 0, errno, EINVAL,
		     "mmap() at an offset");
	m = mmap(NULL, len, rw, MAP_SHARED, fd, 0);
	tap(m != MAP_FAILED, "mmap() of %u rings, %zu bytes%s%s", info.ncpus,
	    len, m == MAP_FAILED ? ": " : "",
	    m == MAP_FAILED ? strerror(errno) : "");
	if (m == MAP_FAILED)
		return;
	for (cpu = 0, ok = 0; cpu < info.ncpus; cpu++) {
		ctl = map_ctl(m, &info, cpu);
		ok += ctl->magic == NSL_RING_MAGIC && ctl->cpu == cpu &&
		      ctl->size == info.ring_bytes;
	}
	tap(ok == info.ncpus, "%u of %u control pages: magic, cpu, size %llu",
	    ok, info.ncpus, (unsigned long long)info.ring_bytes);
	m2 = mmap(NULL, len, rw, MAP_SHARED, fd, 0);
	expect_errno(m2 == MAP_FAILED ? -1 : 0, errno, EBUSY,
		     "second mmap()");
	EXPECT_ERR(set_rcvbuf(fd, 1 << 20), EBUSY);
	pid = fork();
	if (pid == 0)	/* not inherited: nothing mapped there in a child */
		_exit(mincore(m, page, &vec) && errno == ENOMEM ? 0 : 1);
	waitpid(pid, &status, 0);
	tap(TAP_IS(WIFEXITED(status)) && TAP_IS(!WEXITSTATUS(status)),
	    "the mapping is not inherited by fork()");

	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	traffic(300, 1000, 0);
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	msleep(100);
	taken = map_take(m, &info, s, false);
	for (cpu = 0; cpu < info.ncpus; cpu++) {
		ctl = map_ctl(m, &info, cpu);
		offered += ctl->offered;
		dropped += ctl->dropped;
	}
	tap(TAP_IS(offered == counter(fd, NSIOCGPACKETS)) &&
	    TAP_IS(dropped == counter(fd, NSIOCGDROPS)),
	    "control pages: offered %llu, dropped %llu, as the ioctls say",
	    (unsigned long long)offered, (unsigned long long)dropped);
	tap(TAP_IS(taken > 0) && TAP_IS(drain(fd, s, BIG_READ) == 0),
	    "mapped: %llu items taken in place, none left for read()",
	    (unsigned long long)taken);
	check_accounting(fd, s, e0, "mapped");

	/* Moved elsewhere: refused, and the rings stay mapped. */
	m2 = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	tap(TAP_IS(m2 != MAP_FAILED) &&
	    TAP_IS(mremap(m, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, m2) ==
		   MAP_FAILED),
	    "mremap() of the mapping refused");
	EXPECT_ERR(set_rcvbuf(fd, 1 << 20), EBUSY);
	if (m2 != MAP_FAILED)
		munmap(m2, len);
	/* A child that was given it (MADV_DOFORK) holds it past our munmap. */
	madvise(m, len, MADV_DOFORK);
	pid = fork();
	if (pid == 0) {
		msleep(500);
		_exit(((struct nsl_ring_ctl *)m)->magic == NSL_RING_MAGIC ? 0 : 1);
	}
	munmap(m, len);
	EXPECT_ERR(set_rcvbuf(fd, 1 << 20), EBUSY);
	waitpid(pid, &status, 0);
	tap(TAP_IS(WIFEXITED(status)) && TAP_IS(!WEXITSTATUS(status)),
	    "a child given the mapping (MADV_DOFORK) reads it after our munmap");
	EXPECT_OK(set_rcvbuf(fd, 1 << 20));
}

/* Whether child @pid is still running; a reaped one (or none, -1) is not. */
static bool running(pid_t pid)
{
	return pid > 0 && waitpid(pid, NULL, WNOHANG) == 0;
}

/*
 * A mapper killed half-way through a batch, under traffic: the device is
 * free again at once, and the next reader's stream is whole and exact.
 */
static void check_mapper_dies(void)
{
	struct ns_stream s = { 0 };
	struct nsl_info info;
	pid_t load, load2 = -1, mapper;
	int fd, status;
	uint64_t e0;
	void *m;

	load = fork();
	if (load == 0)
		_exit(traffic(0, 1000, 3) ? 1 : 0);
	mapper = fork();
	if (mapper == 0) {
		fd = open(DEV, O_RDWR | O_NONBLOCK);
		if (fd < 0 || ioctl(fd, NSIOCGINFO, &info))
			_exit(1);
		m = mmap(NULL, info.ncpus * map_stride(&info),
			 PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED || set_state(fd, NSL_STATE_ON))
			_exit(1);
		s.ncpus = info.ncpus;
		s.track = true;
		msleep(500);
		map_take(m, &info, &s, true);
		raise(SIGKILL);
	}
	waitpid(mapper, &status, 0);
	tap(TAP_IS(WIFSIGNALED(status)) && TAP_IS(WTERMSIG(status) == SIGKILL),
	    "a mapper killed mid-batch under traffic");
	fd = open(DEV, O_RDWR | O_NONBLOCK);
	tap(fd >= 0, "the device opens again at once%s%s", fd < 0 ? ": " : "",
	    fd < 0 ? strerror(errno) : "");
	if (fd < 0)
		goto out;
	EXPECT_OK(ioctl(fd, NSIOCGINFO, &info));
	s.ncpus = info.ncpus;
	s.track = true;
	/* Left on by the mapper: quiet it to take the emitted count. */
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	msleep(200);
	e0 = emitted(fd) - counter(fd, NSIOCGPACKETS);
	m = mmap(NULL, info.ncpus * map_stride(&info), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	tap(m != MAP_FAILED, "and maps again");
	drain(fd, &s, BIG_READ);	/* the sysinfo, and what came by then */
	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	/*
	 * Traffic of its own, for as long: what is left of the first load
	 * after the mapper's part depends on how slow the kernel is (a
	 * debug kernel on a loaded host left 56 packets).
	 */
	load2 = fork();
	if (load2 == 0)
		_exit(traffic(0, 1000, 2) ? 1 : 0);
	while (m != MAP_FAILED && (running(load) || running(load2))) {
		map_take(m, &info, &s, false);
		msleep(20);
	}
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	check_accounting(fd, &s, e0, "after the mapper died");
	tap(s.blocks > 100, "the next reader: %llu blocks",
	    (unsigned long long)s.blocks);
	close(fd);
out:
	waitpid(load, &status, 0);
	if (load2 > 0)
		waitpid(load2, &status, 0);
}

/* ------------------------------------------------------------ tests */

static void check_info(int fd, struct nsl_info *info)
{
	struct timespec now;
	int64_t skew;
	long onln = sysconf(_SC_NPROCESSORS_ONLN);

	memset(info, 0, sizeof(*info));
	EXPECT_OK(ioctl(fd, NSIOCGINFO, info));
	clock_gettime(CLOCK_REALTIME, &now);
	skew = (int64_t)(now.tv_sec * 1000000000ULL + now.tv_nsec -
			 info->ref_realtime_ns);
	tap(info->abi_version == NSL_ABI_VERSION, "info: abi_version %u",
	    info->abi_version);
	tap(info->block_size == BLOCK, "info: block_size %u == %zu",
	    info->block_size, BLOCK);
	tap(TAP_IS(info->max_records == NSL_MAX_RECORDS) &&
	    TAP_IS(info->max_events == NSL_MAX_EVENTS),
	    "info: max_records %u, max_events %u", info->max_records,
	    info->max_events);
	tap(TAP_IS(info->ncpus >= 1) && TAP_IS(info->ncpus >= onln),
	    "info: ncpus %u >= online %ld", info->ncpus, onln);
	tap(info->tsc_khz > 0, "info: tsc_khz %u", info->tsc_khz);
	tap(TAP_IS(info->ring_bytes >= PAGE) &&
	    TAP_IS(info->ring_bytes % PAGE == 0) &&
	    TAP_IS(info->ring_bytes <= info->ring_max),
	    "info: ring_bytes %llu whole pages, <= ring_max %llu",
	    (unsigned long long)info->ring_bytes,
	    (unsigned long long)info->ring_max);
	tap(TAP_IS(info->ref_tsc != 0) && TAP_IS(skew > -10000000000LL) &&
	    TAP_IS(skew < 10000000000LL),
	    "info: ref_tsc %llu, ref_realtime_ns %lld ns from now",
	    (unsigned long long)info->ref_tsc, (long long)skew);
}

static void check_bad_input(int fd, const struct nsl_info *info)
{
	struct nsl_rcvbuf rb;
	struct nsl_state st;
	struct nsl_events evs;
	struct nsl_mode mode;
	struct nsl_calib calib, cold;
	struct nsl_record_opts recs;
	char buf[BLOCK];
	int ret;

	EXPECT_ERR(ioctl(fd, _IO(NSL_IOC_MAGIC, 0x7f)), ENOTTY);
	EXPECT_ERR(ioctl(fd, _IOW(NSL_IOC_MAGIC, 0x01, struct nsl_state), &st),
		   ENOTTY);
	EXPECT_ERR(ioctl(fd, _IOR('T', 0x01, int), &st), ENOTTY);
	EXPECT_ERR(ioctl(fd, NSIOCGINFO, NULL), EFAULT);
	EXPECT_ERR(ioctl(fd, NSIOCSSTATE, (void *)8), EFAULT);

	rb = (struct nsl_rcvbuf){ .bytes = 1 << 20, .flags = 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSRCVBUF, &rb), EINVAL);
	rb = (struct nsl_rcvbuf){ .bytes = 1 << 20, .pad = 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSRCVBUF, &rb), EINVAL);
	EXPECT_ERR(set_rcvbuf(fd, 0), EINVAL);
	EXPECT_ERR(set_rcvbuf(fd, PAGE - 1), EINVAL);
	EXPECT_ERR(set_rcvbuf(fd, info->ring_max + BLOCK), ENOMEM);
	EXPECT_ERR(set_rcvbuf(fd, UINT64_MAX), ENOMEM);

	st = (struct nsl_state){ .state = 2 };
	EXPECT_ERR(ioctl(fd, NSIOCSSTATE, &st), EINVAL);
	st = (struct nsl_state){ .state = ~0U };
	EXPECT_ERR(ioctl(fd, NSIOCSSTATE, &st), EINVAL);
	st = (struct nsl_state){ .state = NSL_STATE_ON, .flags = 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSSTATE, &st), EINVAL);

	evs = (struct nsl_events){ .flags = 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSEVENT, &evs), EINVAL);
	evs = (struct nsl_events){ .nevents = NSL_MAX_EVENTS + 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSEVENT, &evs), EINVAL);
	evs = (struct nsl_events){ .nevents = 1 };
	evs.ev[1].config = 1;
	EXPECT_ERR(ioctl(fd, NSIOCSEVENT, &evs), EINVAL);
	evs = (struct nsl_events){ .nevents = 1 };
	evs.ev[0].flags = 1;
	EXPECT_ERR(ioctl(fd, NSIOCSEVENT, &evs), EINVAL);
	evs = (struct nsl_events){ .nevents = 0 };
	EXPECT_OK(ioctl(fd, NSIOCSEVENT, &evs));

	mode = (struct nsl_mode){ .mode = 2 };
	EXPECT_ERR(ioctl(fd, NSIOCSEMODE, &mode), EINVAL);
	mode = (struct nsl_mode){ .mode = NSL_MODE_DURATION, .flags = 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSEMODE, &mode), EINVAL);
	mode = (struct nsl_mode){ .mode = NSL_MODE_DURATION };
	EXPECT_OK(ioctl(fd, NSIOCSEMODE, &mode));

	memset(&calib, 0, sizeof(calib));
	calib.flags = NSL_CALIB_COLD << 1;
	EXPECT_ERR(ioctl(fd, NSIOCGCALIB, &calib), EINVAL);
	memset(&calib, 0, sizeof(calib));
	calib.cpu = ~0U;
	EXPECT_ERR(ioctl(fd, NSIOCGCALIB, &calib), EINVAL);
	memset(&calib, 0, sizeof(calib));
	calib.nevents = 1;
	EXPECT_ERR(ioctl(fd, NSIOCGCALIB, &calib), EINVAL);
	memset(&calib, 0, sizeof(calib));
	ret = ioctl(fd, NSIOCGCALIB, &calib);
	tap(TAP_IS(ret == 0) && TAP_IS(calib.reps >= 16) &&
	    TAP_IS(calib.cost[NSL_C_NSS].samples > 0),
	    "NSIOCGCALIB cpu 0: %d, reps %u, NSS %llu ticks", ret, calib.reps,
	    (unsigned long long)calib.cost[NSL_C_NSS].ticks);
	cold = (struct nsl_calib){ .flags = NSL_CALIB_COLD };
	EXPECT_OK(ioctl(fd, NSIOCGCALIB, &cold));
	/*
	 * Every cost measured cold too.  A cold sample starts with an empty
	 * TLB and the block out of the cache, and is no cheaper than a warm
	 * one on hardware; under TCG the two medians differ by less than
	 * the host's load moves them (a debug boot beside another VM saw
	 * cold 240638 ticks, warm 246910), so the comparison is printed,
	 * not asserted: that is a benchmark's to judge (bench/README.md).
	 */
	for (int m = 0; m < NSL_C_MAX; m++) {
		printf("# NSIOCGCALIB cost %d: cold %llu ticks, warm %llu\n", m,
		       (unsigned long long)cold.cost[m].ticks,
		       (unsigned long long)calib.cost[m].ticks);
		tap(TAP_IS(cold.cost[m].samples > 0) &&
		    TAP_IS(cold.cost[m].samples <= cold.reps) &&
		    TAP_IS(cold.cost[m].min <= cold.cost[m].ticks),
		    "NSIOCGCALIB cold, cost %d: %u of %u samples, min %llu <= median",
		    m, cold.cost[m].samples, cold.reps,
		    (unsigned long long)cold.cost[m].min);
	}

	recs = (struct nsl_record_opts){ .flags = NSL_REC_ALL + 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSRECORDS, &recs), EINVAL);
	recs = (struct nsl_record_opts){ .flags = NSL_REC_ON, .pad = 1 };
	EXPECT_ERR(ioctl(fd, NSIOCSRECORDS, &recs), EINVAL);
	recs = (struct nsl_record_opts){ .flags = 0 };
	EXPECT_OK(ioctl(fd, NSIOCSRECORDS, &recs));

	evs = (struct nsl_events){ .nevents = 1 };
	evs.ev[0].type = PERF_TYPE_SOFTWARE;
	evs.ev[0].config = PERF_COUNT_SW_CPU_CLOCK;
	EXPECT_OK(ioctl(fd, NSIOCSEVENT, &evs));
	evs = (struct nsl_events){ .nevents = 0 };
	EXPECT_OK(ioctl(fd, NSIOCSEVENT, &evs));

	EXPECT_ERR(read(fd, buf, BLOCK - 1), EINVAL);
	EXPECT_ERR(read(fd, buf, 0), EINVAL);
}

/*
 * Without CAP_NET_ADMIN every known ioctl is EPERM; an unknown one is
 * ENOTTY for everybody (it is not this device's, whoever asks).
 */
static void check_eperm(int fd)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	struct nsl_info info;
	int status, bits = 0;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		memset(d, 0, sizeof(d));
		if (syscall(SYS_capset, &h, d))
			_exit(0xff);
		if (ioctl(fd, NSIOCGINFO, &info) == -1 && errno == EPERM)
			bits |= 1;
		if (set_state(fd, NSL_STATE_ON) == -1 && errno == EPERM)
			bits |= 2;
		if (ioctl(fd, _IO(NSL_IOC_MAGIC, 0x7f)) == -1 && errno == ENOTTY)
			bits |= 4;
		_exit(bits);
	}
	waitpid(pid, &status, 0);
	bits = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	tap(bits != 0xff, "no capabilities: capset dropped them all");
	tap(TAP_IS(bits != 0xff) && TAP_IS((bits & 1)),
	    "no CAP_NET_ADMIN: NSIOCGINFO -> EPERM");
	tap(TAP_IS(bits != 0xff) && TAP_IS((bits & 2)),
	    "no CAP_NET_ADMIN: NSIOCSSTATE -> EPERM");
	tap(TAP_IS(bits != 0xff) && TAP_IS((bits & 4)),
	    "no CAP_NET_ADMIN: unknown ioctl -> ENOTTY");
}

/* poll() on empty rings must wake when blocks arrive. */
static void check_poll_wakeup(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n, status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		msleep(300);
		_exit(traffic(50, 1000, 0) ? 1 : 0);
	}
	n = poll(&p, 1, 10000);
	tap(TAP_IS(n == 1) && TAP_IS((p.revents & POLLIN)),
	    "poll on empty rings wakes with POLLIN when traffic starts");
	waitpid(pid, &status, 0);
}

/*
 * A resize before the stream began (nothing read, collection not switched
 * on by this reader; on from the module's load) forgets what the rings
 * hold, as the open did: none of it is the reader's drop.
 */
static void check_fresh_resize(int fd, const struct nsl_info *info)
{
	uint64_t before, drops;

	traffic(20, 100, 0);
	msleep(100);
	before = counter(fd, NSIOCGPACKETS);
	EXPECT_OK(set_rcvbuf(fd, info->ring_bytes));
	drops = counter(fd, NSIOCGDROPS);
	tap(TAP_IS(before > 0) && TAP_IS(drops == 0),
	    "a resize before the stream began: %llu items since open, %llu counted as dropped",
	    (unsigned long long)before, (unsigned long long)drops);
}

static int check(void)
{
	struct nsl_record_opts recs;
	struct nsl_info info;
	struct ns_stream s = { 0 };
	struct pollfd p;
	struct stat st;
	uint64_t e0;
	char buf[BLOCK];
	int fd, fd2;

	signal(SIGPIPE, SIG_IGN);
	fd = open(DEV, O_RDWR | O_NONBLOCK);
	tap(fd >= 0, "open " DEV "%s%s", fd < 0 ? ": " : "",
	    fd < 0 ? strerror(errno) : "");
	if (fd < 0)
		goto out;
	if (getenv("NSL_DEV_MADE"))
		tap(1, DEV " mode 0600 # SKIP node made by hand, no devtmpfs");
	else
		tap(TAP_IS(!stat(DEV, &st)) &&
		    TAP_IS((st.st_mode & 07777) == 0600),
		    DEV " mode 0600 (is %o)", st.st_mode & 07777);
	fd2 = open(DEV, O_RDONLY);
	expect_errno(fd2, errno, EBUSY, "second open()");
	if (fd2 >= 0)
		close(fd2);

	check_info(fd, &info);
	s.ncpus = info.ncpus;
	s.track = true;
	check_bad_input(fd, &info);
	check_eperm(fd);
	check_fresh_resize(fd, &info);

	/* Quiet rings: off, drained, EAGAIN, poll says nothing. */
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	e0 = emitted(fd) - counter(fd, NSIOCGPACKETS);
	drain(fd, &s, BIG_READ);
	tap(s.sysinfos == 1, "the stream starts with one sysinfo item");
	EXPECT_ERR(read(fd, buf, sizeof(buf)), EAGAIN);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	tap(poll(&p, 1, 0) == 0, "poll on empty rings: not readable");
	check_accounting(fd, &s, e0, "idle");

	/* Default ring, a reader that sleeps in poll(). */
	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	check_poll_wakeup(fd);
	traffic(200, 1000, 0);
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	check_accounting(fd, &s, e0, "default ring");
	tap(s.blocks > 0, "default ring: %llu blocks read",
	    (unsigned long long)s.blocks);

	/* Smallest ring, nobody reading: drops, marked by loss items. */
	EXPECT_OK(set_rcvbuf(fd, PAGE + 100));
	check_info(fd, &info);
	tap(info.ring_bytes == PAGE, "ring_bytes %llu after NSIOCSRCVBUF of a page and 100 bytes",
	    (unsigned long long)info.ring_bytes);
	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	traffic(500, 100, 0);
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	check_accounting(fd, &s, e0, "one-page ring");
	tap(TAP_IS(s.losses > 0) && TAP_IS(s.lost > 0),
	    "one-page ring: %llu loss items for %llu blocks",
	    (unsigned long long)s.losses, (unsigned long long)s.lost);

	/* Resizing a ring with items in it turns them into counted drops. */
	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	traffic(20, 100, 0);
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	msleep(100);
	EXPECT_OK(set_rcvbuf(fd, 1 << 20));
	check_accounting(fd, &s, e0, "resized");

	/* Event records share the per-CPU seq with blocks. */
	recs = (struct nsl_record_opts){ .flags = NSL_REC_ALL };
	EXPECT_OK(ioctl(fd, NSIOCSRECORDS, &recs));
	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	traffic(100, 1000, 0);
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	recs.flags = 0;
	EXPECT_OK(ioctl(fd, NSIOCSRECORDS, &recs));
	check_accounting(fd, &s, e0, "event records");
	tap(s.events > 0, "event records: %llu read",
	    (unsigned long long)s.events);

	/* A buffer of exactly one slot still only ever gets whole items. */
	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	traffic(100, 1000, 0);
	EXPECT_OK(set_state(fd, NSL_STATE_OFF));
	msleep(100);
	drain(fd, &s, BLOCK);
	check_accounting(fd, &s, e0, "one-slot reads");

	check_mmap(fd, &s, e0);

	EXPECT_OK(set_state(fd, NSL_STATE_ON));
	close(fd);
	check_mapper_dies();
out:
	return tap_finish();
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "check"))
		return check();
	if (argc == 3 && !strcmp(argv[1], "traffic")) {
		signal(SIGPIPE, SIG_IGN);
		return traffic(0, 1000, atoi(argv[2])) ? 1 : 0;
	}
	fprintf(stderr, "usage: %s check | traffic SECONDS\n", argv[0]);
	return 2;
}
