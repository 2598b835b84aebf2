// SPDX-License-Identifier: GPL-2.0
/*
 * stress: /dev/ns under hostile, concurrent use (issue 13).  Run as root in
 * the VM by tests/vm/t_stress.sh; TAP on stdout, exit 0 pass / 1 fail.
 *
 *	stress run MODULE.ko	the phases below; loads and unloads the module
 *	stress capture		a capture checked exactly (module loaded)
 *	stress emitted		the core's emitted count once nothing moves
 *
 * "run" keeps TCP and UDP traffic going through the NIC (to and from the
 * peer namespace) and over loopback all along, and then:
 *
 *  pinned  /dev/ns opened once and shared by threads issuing every ioctl
 *          with random, boundary and hostile arguments (three threads with
 *          every capability, one with CAP_NET_ADMIN alone, one with none),
 *          readers with odd sizes and bad buffers, poll/epoll, O_NONBLOCK
 *          toggles; one thread opens it again (EBUSY, every time) and a
 *          process rmmods and insmods the module in a loop (EAGAIN and
 *          EEXIST, every time: the device is open).
 *  racing  threads each open /dev/ns, use it (ioctls, reads, polls, write,
 *          mmap, lseek), close it, while that process unloads and reloads
 *          the module whenever nobody holds it.
 *  cycles  at least 100 times: insmod, open, NSIOCSSTATE on, read until a
 *          block comes, close, rmmod; every step must succeed.
 *
 * Every answer must be one the code allows for that call with those
 * arguments: the expect_*() models say which, from include/netslice.h,
 * kernel/ns_module/device.c, the core (counters.c, calib.c, events.c),
 * perf and the VFS in front of them.  A success where the code must fail
 * is a failure too.  In short:
 *
 *   every ioctl     ENOTTY for a command not ours (whoever asks), EPERM
 *                   without CAP_NET_ADMIN, EFAULT for an argument that
 *                   cannot be copied
 *   NSIOCSRCVBUF    EINVAL flags, pad, fewer than 4 slots; ENOMEM above
 *                   ring_max or out of memory
 *   NSIOCSSTATE     EINVAL flags, state neither on nor off
 *   NSIOCSEVENT     EINVAL flags, nevents > 4, bytes past nevents, an
 *                   event's flags, a bad config of a fixed perf type or a
 *                   fixed type perf has no use for here (tracepoint,
 *                   breakpoint); EPERM a non-software event without
 *                   CAP_PERFMON or CAP_SYS_ADMIN; from perf: ENODEV (no PMU
 *                   takes the event), EINVAL, EOPNOTSUPP, ENOMEM
 *   NSIOCSEMODE     EINVAL flags, mode neither duration nor count
 *   NSIOCGPACKETS, NSIOCGDROPS, NSIOCGINFO: only EFAULT
 *   NSIOCGCALIB     EINVAL flags but NSL_CALIB_COLD, nevents, cpu not
 *                   online, reps 1..15 or above 2^16; ENOMEM; EINTR a signal while waiting for
 *                   it (or for another one to end); EFAULT also after a
 *                   calibration whose result cannot be written back
 *   NSIOCSRECORDS   EINVAL unknown flags, pad, record options without ON
 *   NSIOCSFILTER    EINVAL flags but NSL_FILTER_FLOW, more than 4096
 *                   instructions, a program the kernel's checker refuses;
 *                   EFAULT instructions not user memory; ENOMEM
 *   NSIOCGFILTERED  only EFAULT
 *   read            EFAULT (the VFS: not user memory; the driver: nothing
 *                   could be copied), EINVAL shorter than a block, EAGAIN
 *                   non-blocking with nothing to read, EINTR our signal,
 *                   EBADF a write-only descriptor
 *   write           EBADF read-only descriptor, EINVAL (no write op)
 *   mmap            EINVAL wrong length (or a resize in between), EBUSY
 *                   mapped already or resizing, EACCES write-only descriptor
 *   lseek, pread    ESPIPE (a stream), EINVAL bad whence or offset
 *   open            EBUSY (one reader at a time); ENOENT, ENODEV unloaded;
 *                   EACCES unloading, without CAP_DAC_OVERRIDE (devtmpfs
 *                   sets the node's mode to 0 before it unlinks it)
 *   close, poll, fcntl: nothing (poll: EINTR, our signal)
 *   rmmod           EAGAIN in use, ENOENT not loaded, EBUSY coming/going
 *   cost_stage      (the module's parameter, written by the loader under
 *                   the traffic) EINVAL a stage that does not exist;
 *                   ENOENT, ENODEV unloaded or going
 *   insmod          EEXIST loaded, EBUSY going, ENOMEM
 *
 * The kernel's own checks (KASAN, lockdep, WARN, kmemleak) are the
 * harness's: run-vm.sh fails the run on any splat.
 *
 * Iteration counts come from a measure of this kernel's speed taken at the
 * start (a debug kernel under TCG is several times slower than the plain
 * one), so that each phase takes about its budget on either kernel.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/perf_event.h>

#include "netslice.h"
#include "source/decode.h"	/* nsdump's: the compact blocks */

/* A failed term's name is one whole line among the other threads' */
#define TAP_SAY(fmt, ...) say(fmt, __VA_ARGS__)
#include "../tapterm.h"

#define DEV		"/dev/ns"
#define MODNAME		"netslice"
#define SLOT		sizeof(struct nsl_block)	/* largest item */
#define MAXCPUS		256
#define CYCLES		100		/* load/capture/unload, at least */
#define READ_BYTES	(64 * 1024)

/* Seconds each phase should take, whatever the kernel's speed. */
#define PINNED_S	25.0
#define RACING_S	15.0

/*
 * The limits the core compares with are 6.12's (counters.c), not those of
 * the headers this is compiled with.
 */
enum {
	K_TYPE_MAX = 6,			/* PERF_TYPE_MAX */
	K_HW_MAX = 10,			/* PERF_COUNT_HW_MAX */
	K_SW_MAX = 12,			/* PERF_COUNT_SW_MAX */
	K_SW_DUMMY = 9,
	K_SW_BPF_OUTPUT = 10,
	K_CACHE_MAX = 7,
	K_CACHE_OP_MAX = 3,
	K_CACHE_RESULT_MAX = 2,
	K_CALIB_DEFAULT = 4096,		/* NSL_CALIB_REPS */
	K_CALIB_MAX = 1 << 16,		/* NSL_CALIB_REPS_MAX */
	K_RING_MIN = 4096,		/* NSLM_RING_MIN_BYTES: a page */
};

/* ---------------------------------------------------------- answers */

/* A set of answers: bit 0 success, bit e errno e. */
typedef unsigned __int128 errset;
#define OK		((errset)1)
#define E(e)		((errset)1 << (e))
#define NERR		134		/* counted errnos: 0 .. EHWPOISON */
_Static_assert(EOPNOTSUPP < 128 && ESPIPE < 128, "errset too small");

enum op {
	OP_SRCVBUF, OP_SSTATE, OP_SEVENT, OP_SEMODE, OP_GPACKETS, OP_GDROPS,
	OP_GINFO, OP_GCALIB, OP_SRECORDS, OP_SFILTER, OP_GFILTERED, OP_UNKNOWN,
	OP_READ, OP_POLL, OP_FCNTL, OP_WRITE, OP_MMAP, OP_LSEEK,
	OP_OPEN, OP_CLOSE, OP_RMMOD, OP_INSMOD, OP_STAGE,
	OP_MAX
};
#define NIOCTLS		(OP_UNKNOWN + 1)

static const char *const op_name[OP_MAX] = {
	"NSIOCSRCVBUF", "NSIOCSSTATE", "NSIOCSEVENT", "NSIOCSEMODE",
	"NSIOCGPACKETS", "NSIOCGDROPS", "NSIOCGINFO", "NSIOCGCALIB",
	"NSIOCSRECORDS", "NSIOCSFILTER", "NSIOCGFILTERED", "unknown ioctl",
	"read", "poll", "fcntl", "write", "mmap", "lseek/pread",
	"open", "close", "rmmod", "insmod", "cost_stage",
};

static const unsigned long op_cmd[NIOCTLS - 1] = {
	NSIOCSRCVBUF, NSIOCSSTATE, NSIOCSEVENT, NSIOCSEMODE, NSIOCGPACKETS,
	NSIOCGDROPS, NSIOCGINFO, NSIOCGCALIB, NSIOCSRECORDS, NSIOCSFILTER,
	NSIOCGFILTERED,
};

struct stats {
	uint64_t n[OP_MAX][NERR];	/* answers: [op][0 or errno] */
	uint64_t bad[OP_MAX];		/* answers the code does not allow */
	uint64_t max_ns[OP_MAX];	/* longest call */
	uint64_t sum_ns[OP_MAX];	/* all calls */
	errset allowed[OP_MAX];		/* every answer that was allowed */
	uint64_t harness;		/* the test itself went wrong */
};

static void stats_add(struct stats *to, const struct stats *from)
{
	for (int op = 0; op < OP_MAX; op++) {
		for (int e = 0; e < NERR; e++)
			to->n[op][e] += from->n[op][e];
		to->bad[op] += from->bad[op];
		to->sum_ns[op] += from->sum_ns[op];
		to->allowed[op] |= from->allowed[op];
		if (from->max_ns[op] > to->max_ns[op])
			to->max_ns[op] = from->max_ns[op];
	}
	to->harness += from->harness;
}

static uint64_t calls(const struct stats *st, int op)
{
	uint64_t sum = 0;

	for (int e = 0; e < NERR; e++)
		sum += st->n[op][e];
	return sum;
}

static const char *err_name(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "E?";
}

static char *errset_str(errset s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int e = 0; e < 128 && off < len; e++)
		if (s & E(e))
			off += snprintf(buf + off, len - off, "%s%s",
					off ? "," : "", err_name(e));
	return buf;
}

/* "0 x12, EINVAL x30, ..." */
static char *answers_str(const struct stats *st, int op, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int e = 0; e < NERR && off < len; e++)
		if (st->n[op][e])
			off += snprintf(buf + off, len - off, "%s%s x%" PRIu64,
					off ? ", " : "", err_name(e),
					st->n[op][e]);
	return buf;
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint printed;

/* One whole line on stdout, whichever thread prints it. */
static void vline(const char *prefix, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&out_lock);
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("", fmt, ap);
	va_end(ap);
}

/* A TAP comment; only the first few are shown. */
static void complain(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&printed, 1) >= 60)
		return;
	va_start(ap, fmt);
	vline("# VIOLATION: ", fmt, ap);
	va_end(ap);
}

/*
 * Count one answer of @op; false (and a complaint naming @what) when it is
 * not in @allowed.  @ret < 0 means the call failed with @err.
 */
static bool answer(struct stats *st, enum op op, long ret, int err,
		   errset allowed, uint64_t ns, const char *what)
{
	int e = ret < 0 ? err : 0;
	bool ok = e < 128 && (allowed & E(e));
	char set[256];

	st->n[op][e < NERR ? e : NERR - 1]++;
	st->allowed[op] |= allowed;
	st->sum_ns[op] += ns;
	if (ns > st->max_ns[op])
		st->max_ns[op] = ns;
	if (!ok) {
		st->bad[op]++;
		complain("%s: %s, allowed {%s}: %s", op_name[op], err_name(e),
			 errset_str(allowed, set, sizeof(set)), what);
	}
	return ok;
}

/*
 * Time @call, count its answer (errno taken right after it, not in an
 * argument list, whose order of evaluation C leaves open); its value.
 */
#define CHECKED(st, op, allowed, what, call) ({				\
		uint64_t t0_ = now_ns();				\
		long r_ = (call);					\
		int e_ = errno;						\
									\
		answer((st), (op), r_, e_, (allowed), now_ns() - t0_, (what)); \
		r_;							\
	})

/* ------------------------------------------------------ small things */

static long page;
static struct nsl_info info;		/* NSIOCGINFO of the module */
static bool cpu_online[MAXCPUS];
static unsigned int ncpus_online;
static bool cpu_pmu;			/* a core PMU: hardware events */
static uint32_t pmu_type[64];		/* dynamic PMU types (sysfs) */
static int npmu_types;
/*
 * The kprobe and uprobe PMUs take config1 as a pointer to the caller's
 * memory (the probed symbol or path: perf_kprobe_init() copies it with
 * strndup_user()), so a random config is EFAULT from them.
 */
static uint32_t probe_pmu_type[2];
static int nprobe_pmu_types;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static double now_s(void)
{
	return now_ns() / 1e9;
}

/* xorshift64*, one state per thread */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static bool chance(uint64_t *s, unsigned int pct)
{
	return below(s, 100) < pct;
}

static int ntests, nfailed;

/* Only the main thread calls tap(). */
static void tap(bool ok, const char *fmt, ...)
{
	char prefix[32];
	va_list ap;

	ntests++;
	nfailed += !ok;
	snprintf(prefix, sizeof(prefix), "%sok %d - ", ok ? "" : "not ", ntests);
	va_start(ap, fmt);
	vline(prefix, fmt, ap);
	va_end(ap);
}

static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vline("# ", fmt, ap);
	va_end(ap);
}

/* CPUs online, from "0-1,4" */
static void read_online_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	unsigned int a, b;
	char sep;

	if (!f)
		return;
	while (fscanf(f, "%u", &a) == 1) {
		b = a;
		sep = fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%u", &b) != 1)
				break;
			sep = fgetc(f);
		}
		for (; a <= b && a < MAXCPUS; a++) {
			cpu_online[a] = true;
			ncpus_online++;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
}

/* The PMUs perf has here: which types exist beyond the fixed ones. */
static void read_pmus(void)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	char path[512];
	unsigned int type;
	FILE *f;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!strcmp(de->d_name, "cpu") || !strcmp(de->d_name, "cpu_core") ||
		    !strcmp(de->d_name, "cpu_atom"))
			cpu_pmu = true;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u", &type) != 1 || type < K_TYPE_MAX) {
			fclose(f);
			continue;
		}
		if (npmu_types < (int)(sizeof(pmu_type) / sizeof(pmu_type[0])))
			pmu_type[npmu_types++] = type;
		if ((!strcmp(de->d_name, "kprobe") || !strcmp(de->d_name, "uprobe")) &&
		    nprobe_pmu_types < 2)
			probe_pmu_type[nprobe_pmu_types++] = type;
		fclose(f);
	}
	closedir(d);
}

/*
 * Whether a PMU may have @type.  Sysfs lists all but two: perf_event_init()
 * registers cpu_clock and task_clock, which it keeps out of sysfs, before
 * any other dynamic PMU, so they have the first two dynamic types.
 */
static bool pmu_type_exists(uint32_t type)
{
	if (type >= K_TYPE_MAX && type < K_TYPE_MAX + 2)
		return true;
	for (int i = 0; i < npmu_types; i++)
		if (pmu_type[i] == type)
			return true;
	return false;
}

static bool module_loaded(void)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, MODNAME " ", sizeof(MODNAME));
	fclose(f);
	return found;
}

static long insmod(int kofd, const char *params)
{
	return syscall(SYS_finit_module, kofd, params, 0);
}

static long rmmod(void)
{
	return syscall(SYS_delete_module, MODNAME, O_NONBLOCK);
}

/* ------------------------------------------------------ bad memory */

/*
 * Each thread's memory for arguments and read buffers: RW_PAGES writable
 * pages followed by an unmapped one (mmap'd and munmap'd: a buffer ending
 * there ends on an unmapped page), and a read-only page.  Only small holes
 * are left, which no later mapping of this process (thread stacks, malloc
 * arenas: megabytes) can fill; the phases check they are still holes.
 */
enum { RW_PAGES = 17 };		/* more than a READ_BYTES read */

struct bufs {
	uint8_t *rw;
	size_t rw_len;
	uint8_t *hole;		/* unmapped page right after rw */
	uint8_t *ro;		/* PROT_READ */
};

static int bufs_init(struct bufs *b)
{
	uint8_t *p = mmap(NULL, (RW_PAGES + 1) * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	b->rw = p;
	b->rw_len = RW_PAGES * page;
	b->hole = p + b->rw_len;
	if (munmap(b->hole, page))
		return -1;
	b->ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return b->ro == MAP_FAILED ? -1 : 0;
}

static bool hole_still_unmapped(const struct bufs *b)
{
	return msync(b->hole, page, MS_ASYNC) == -1 && errno == ENOMEM;
}

/* Where an argument pointer points. */
enum ptr {
	P_RW, P_RO, P_EDGE, P_NULL, P_LOW, P_HOLE, P_KERNEL, P_NONCANON,
	P_TOP, P_MAX
};

static const char *const ptr_name[P_MAX] = {
	"writable", "read-only", "ends on an unmapped page", "NULL",
	"first page", "unmapped", "kernel address", "non-canonical",
	"top of the address space",
};

static enum ptr pick_ptr(uint64_t *r)
{
	unsigned int x = below(r, 100);

	if (x < 62)
		return P_RW;
	if (x < 72)
		return P_RO;
	if (x < 80)
		return P_EDGE;
	return P_NULL + below(r, P_MAX - P_NULL);
}

/* The address of an argument of @size bytes, @content, of class @p. */
static void *place(struct bufs *b, uint64_t *r, enum ptr p,
		   const void *content, size_t size)
{
	size_t off, k;

	switch (p) {
	case P_RW:
		off = below(r, 64);	/* unaligned too */
		memcpy(b->rw + off, content, size);
		return b->rw + off;
	case P_RO:
		off = below(r, page - size + 1);
		mprotect(b->ro, page, PROT_READ | PROT_WRITE);
		memcpy(b->ro + off, content, size);
		mprotect(b->ro, page, PROT_READ);
		return b->ro + off;
	case P_EDGE:
		/* all but the last 1..size-1 bytes readable */
		k = 1 + below(r, size - 1);
		memcpy(b->hole - k, content, k);
		return b->hole - k;
	case P_NULL:
		return NULL;
	case P_LOW:
		return (void *)(uintptr_t)(8 + below(r, 2048));
	case P_HOLE:
		return b->hole + below(r, page - size + 1);
	case P_KERNEL:
		return (void *)(uintptr_t)(0xffffffff81000000ULL +
					   8 * below(r, 4096));
	case P_NONCANON:
		return (void *)(uintptr_t)(0x8000000000000000ULL |
					   below(r, 1ULL << 40));
	case P_TOP:
		return (void *)(uintptr_t)(-8 - 8 * below(r, 16));
	case P_MAX:
		break;
	}
	return NULL;
}

static bool ptr_readable(enum ptr p)
{
	return p == P_RW || p == P_RO;
}

/* ------------------------------------------------ what the code allows */

enum caps { CAPS_ALL, CAPS_NETADMIN, CAPS_NONE };
static const char *const caps_name[] = { "all caps", "CAP_NET_ADMIN only", "no caps" };

/* Only the calling thread's capabilities change (capset is per task). */
static int drop_caps(enum caps caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (caps == CAPS_ALL)
		return 0;
	memset(d, 0, sizeof(d));
	if (caps == CAPS_NETADMIN)
		d[0].effective = d[0].permitted = 1U << CAP_NET_ADMIN;
	return syscall(SYS_capset, &h, d);
}

union arg {
	struct nsl_rcvbuf rb;
	struct nsl_state st;
	struct nsl_events evs;
	struct nsl_mode mode;
	struct nsl_count cnt;
	struct nsl_info info;
	struct nsl_calib calib;
	struct nsl_record_opts rec;
	struct nsl_filter filt;
	uint8_t raw[512];
};

/*
 * Programs NSIOCSFILTER may get: each accepts every block (so readers
 * still see traffic), the kernel's checker takes them; and garbage.
 */
static const struct sock_filter accept_all[] = {
	{ BPF_RET | BPF_K, 0, 0, 0xffffffff },
};
static const struct sock_filter accept_udp[] = {
	{ BPF_LD | BPF_B | BPF_ABS, 0, 0, 9 },		/* IPv4 protocol */
	{ BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 17 },
	{ BPF_RET | BPF_K, 0, 0, 0xffff },
	{ BPF_RET | BPF_K, 0, 0, 0xffff },		/* and the rest too */
};

static size_t op_size(enum op op)
{
	return op == OP_UNKNOWN ? sizeof(union arg) : _IOC_SIZE(op_cmd[op]);
}

static errset expect_rcvbuf(const struct nsl_rcvbuf *rb)
{
	if (rb->flags || rb->pad)
		return E(EINVAL);
	if (rb->bytes < K_RING_MIN)
		return E(EINVAL);
	if (rb->bytes > info.ring_max)
		return E(ENOMEM);
	/* EBUSY: another worker has the rings mapped */
	return OK | E(ENOMEM) | E(EBUSY);
}

static errset expect_state(const struct nsl_state *st)
{
	if (st->flags || (st->state != NSL_STATE_OFF && st->state != NSL_STATE_ON))
		return E(EINVAL);
	return OK;
}

static errset expect_mode(const struct nsl_mode *m)
{
	if (m->flags || (m->mode != NSL_MODE_DURATION && m->mode != NSL_MODE_COUNT))
		return E(EINVAL);
	return OK;
}

static errset expect_records(const struct nsl_record_opts *r)
{
	if ((r->flags & ~NSL_REC_ALL) || r->pad)
		return E(EINVAL);
	if ((r->flags & ~NSL_REC_FLOWADDR) && !(r->flags & NSL_REC_ON))
		return E(EINVAL);
	return OK;
}

static errset expect_calib(const struct nsl_calib *c)
{
	if ((c->flags & ~NSL_CALIB_COLD) || c->nevents ||
	    c->cpu >= info.ncpus)
		return E(EINVAL);
	if (c->reps > K_CALIB_MAX || (c->reps && c->reps < 16))
		return E(EINVAL);
	if (c->cpu >= MAXCPUS || !cpu_online[c->cpu])
		return E(EINVAL);
	return OK | E(ENOMEM) | E(EINTR);
}

/* nsl_event_check() in the core: what it refuses outright. */
static bool core_refuses(const struct nsl_event *e)
{
	switch (e->type) {
	case PERF_TYPE_HARDWARE:
		return (e->config & 0xffffffff) >= K_HW_MAX;
	case PERF_TYPE_SOFTWARE:
		return e->config >= K_SW_MAX || e->config == K_SW_DUMMY ||
		       e->config == K_SW_BPF_OUTPUT;
	case PERF_TYPE_HW_CACHE:
		return (e->config & 0xff) >= K_CACHE_MAX ||
		       ((e->config >> 8) & 0xff) >= K_CACHE_OP_MAX ||
		       ((e->config >> 16) & 0xff) >= K_CACHE_RESULT_MAX ||
		       e->config >> 24;
	case PERF_TYPE_RAW:
		return false;
	default:
		return e->type < K_TYPE_MAX;
	}
}

/*
 * What perf answers when the core asks it for a pinned, kernel-only,
 * CPU-wide counter of an event the core accepted.  Software events always
 * exist.  Hardware, cache and raw events need a core PMU: without one
 * (TCG) nothing takes them (ENOENT, which the core turns into ENODEV), an
 * extended type in config's top half included.  A dynamic PMU may refuse
 * an encoding in several ways; a type no PMU has is nobody's.
 */
static errset expect_perf(const struct nsl_event *e)
{
	const errset pmu_says = OK | E(EINVAL) | E(EOPNOTSUPP) | E(ENODEV) |
				E(ENOMEM);

	switch (e->type) {
	case PERF_TYPE_SOFTWARE:
		return OK | E(ENOMEM);
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return cpu_pmu ? pmu_says : E(ENODEV);
	default:
		for (int i = 0; i < nprobe_pmu_types; i++)
			if (e->type == probe_pmu_type[i])
				return pmu_says | E(EFAULT);
		return pmu_type_exists(e->type) ? pmu_says : E(ENODEV);
	}
}

/*
 * set_events() in the module, then nsl_counters_set() in the core, then
 * perf, event by event (per CPU: the first event that fails decides).
 * Software events need CAP_NET_ADMIN only (doc/design.md), so perf's own
 * CAP_PERFMON check for CPU-wide counters must not show through.
 */
static errset expect_events(const struct nsl_events *evs, bool perfmon)
{
	errset acc = 0, s;
	uint32_t i;

	if (evs->flags || evs->nevents > NSL_MAX_EVENTS)
		return E(EINVAL);
	for (i = evs->nevents; i < NSL_MAX_EVENTS; i++) {
		static const struct nsl_event zero;

		if (memcmp(&evs->ev[i], &zero, sizeof(zero)))
			return E(EINVAL);
	}
	for (i = 0; i < evs->nevents; i++) {
		if (evs->ev[i].flags)
			return E(EINVAL);
		if (evs->ev[i].type != PERF_TYPE_SOFTWARE && !perfmon)
			return E(EPERM);
	}
	for (i = 0; i < evs->nevents; i++)
		if (core_refuses(&evs->ev[i]))
			return E(EINVAL);
	for (i = 0; i < evs->nevents; i++) {
		s = expect_perf(&evs->ev[i]);
		acc |= s & ~OK;
		if (!(s & OK))
			return acc;
	}
	return acc | OK;
}

/*
 * NSIOCSFILTER: its own checks (NSL_FILTER_FLOW the one flag), then the
 * program copied (EFAULT), checked by the kernel (EINVAL for garbage),
 * converted (ENOMEM).
 */
static errset expect_filter(const struct nsl_filter *f)
{
	const void *insns = (const void *)(uintptr_t)f->insns;

	if (f->flags & ~NSL_FILTER_FLOW || f->len > NSL_FILTER_MAX_INSNS)
		return E(EINVAL);
	if (!f->len)
		return OK;
	if (insns == accept_all || insns == accept_udp)
		return OK | E(ENOMEM);
	return E(EFAULT) | E(EINVAL) | E(ENOMEM) | OK;
}

/* Everything an ioctl may answer, given who asks and with what. */
static errset expect_ioctl(enum op op, enum caps caps, enum ptr p,
			   const union arg *a)
{
	errset e;

	if (op == OP_UNKNOWN)
		return E(ENOTTY);
	if (caps == CAPS_NONE)
		return E(EPERM);
	switch (op) {
	case OP_GPACKETS:
	case OP_GDROPS:
	case OP_GINFO:
	case OP_GFILTERED:
		return p == P_RW ? OK : E(EFAULT);
	default:
		break;
	}
	if (!ptr_readable(p))
		return E(EFAULT);
	switch (op) {
	case OP_SRCVBUF:
		return expect_rcvbuf(&a->rb);
	case OP_SSTATE:
		return expect_state(&a->st);
	case OP_SEVENT:
		return expect_events(&a->evs, caps == CAPS_ALL);
	case OP_SEMODE:
		return expect_mode(&a->mode);
	case OP_GCALIB:
		e = expect_calib(&a->calib);
		/* calibrated, then copy_to_user() fails */
		if (p != P_RW && (e & OK))
			e = (e & ~OK) | E(EFAULT);
		return e;
	case OP_SRECORDS:
		return expect_records(&a->rec);
	case OP_SFILTER:
		return expect_filter(&a->filt);
	default:
		return 0;
	}
}

/* ------------------------------------------------- argument makers */

static uint64_t pick_ring_bytes(uint64_t *r)
{
	switch (below(r, 16)) {
	case 0:
		return below(r, K_RING_MIN);	/* too small */
	case 1:
		return K_RING_MIN - 1 + below(r, 3);
	case 2:
		/* the largest there is: rarely, it is a quarter of memory */
		return chance(r, 5) ? info.ring_max : info.ring_max + 1 +
			below(r, 2 * SLOT);
	case 3:
		return chance(r, 50) ? UINT64_MAX : rnd(r);
	case 4:
		return 1ULL << (32 + below(r, 32));
	default:
		return K_RING_MIN + below(r, 4 << 20);
	}
}

static uint64_t pick_config(uint64_t *r, uint64_t max)
{
	switch (below(r, 8)) {
	case 0:
		return rnd(r);
	case 1:
		return max + below(r, 3);
	default:
		return below(r, max);
	}
}

static void make_event(uint64_t *r, struct nsl_event *ev)
{
	uint64_t x = below(r, 100);

	memset(ev, 0, sizeof(*ev));
	if (x < 35) {
		ev->type = PERF_TYPE_SOFTWARE;
		ev->config = pick_config(r, K_SW_MAX);
	} else if (x < 50) {
		ev->type = PERF_TYPE_HARDWARE;
		ev->config = pick_config(r, K_HW_MAX);
		if (chance(r, 25))	/* an extended PMU type */
			ev->config |= (uint64_t)(npmu_types && chance(r, 50) ?
				pmu_type[below(r, npmu_types)] :
				below(r, 16)) << 32;
	} else if (x < 60) {
		ev->type = PERF_TYPE_HW_CACHE;
		ev->config = pick_config(r, K_CACHE_MAX) & 0xff;
		ev->config |= (pick_config(r, K_CACHE_OP_MAX) & 0xff) << 8;
		ev->config |= (pick_config(r, K_CACHE_RESULT_MAX) & 0xff) << 16;
		if (chance(r, 10))
			ev->config |= rnd(r) << 24;
	} else if (x < 68) {
		ev->type = PERF_TYPE_RAW;
		ev->config = rnd(r);
	} else if (x < 76) {
		ev->type = chance(r, 50) ? PERF_TYPE_TRACEPOINT :
					   PERF_TYPE_BREAKPOINT;
		ev->config = below(r, 4);
	} else if (x < 86 && npmu_types) {
		ev->type = pmu_type[below(r, npmu_types)];
		ev->config = pick_config(r, 8);
	} else {
		static const uint32_t odd[] = { K_TYPE_MAX, 63, 0x7fffffff,
						0xffffffff };

		ev->type = chance(r, 50) ? odd[below(r, 4)] : rnd(r);
		ev->config = rnd(r);
	}
	if (chance(r, 15))
		ev->config1 = rnd(r);
	if (chance(r, 15))
		ev->config2 = chance(r, 50) ? 0xffffffff81000000ULL : rnd(r);
	if (chance(r, 5))
		ev->flags = 1U << below(r, 32);
}

static void make_calib(uint64_t *r, struct nsl_calib *c)
{
	static const uint32_t big[] = { K_CALIB_MAX + 1, UINT32_MAX,
					0x80000000 };

	memset(c, 0, sizeof(*c));
	c->cpu = chance(r, 85) ? below(r, info.ncpus) :
		 chance(r, 50) ? info.ncpus + below(r, 3) : (uint32_t)rnd(r);
	switch (below(r, 20)) {
	case 0:
		c->reps = 0;		/* the default, 4096 */
		break;
	case 1:
	case 2:
		c->reps = 1 + below(r, 15);
		break;
	case 3:
	case 4:
		c->reps = chance(r, 50) ? big[below(r, 3)] :
			  K_CALIB_MAX + 1 + below(r, 1ULL << 31);
		break;
	case 5:
		c->reps = 16;
		break;
	default:
		c->reps = 16 + below(r, 240);
	}
	if (chance(r, 5))
		c->flags = 1U << below(r, 32);
	if (chance(r, 5))
		c->nevents = 1 + below(r, 8);
	if (chance(r, 10))	/* out fields: the kernel ignores them */
		c->cost[below(r, NSL_C_MAX)].ticks = rnd(r);
}

static void make_filter(uint64_t *r, struct nsl_filter *f)
{
	static uint8_t junk[4096 * 8];
	uint32_t i;

	switch (below(r, 8)) {
	case 0:
		f->len = 0;
		break;
	case 1:
	case 2:
		f->insns = (uintptr_t)accept_all;
		f->len = 1;
		break;
	case 3:
		f->insns = (uintptr_t)accept_udp;
		f->len = 4;
		break;
	case 4:		/* garbage the checker must refuse (or take) */
		for (i = 0; i < 64; i++)
			((uint64_t *)junk)[below(r, sizeof(junk) / 8)] = rnd(r);
		f->insns = (uintptr_t)junk;
		f->len = 1 + below(r, NSL_FILTER_MAX_INSNS);
		break;
	case 5:		/* too long, or no such memory */
		f->len = chance(r, 50) ? NSL_FILTER_MAX_INSNS + 1 + below(r, 1000) :
					 (uint32_t)rnd(r);
		f->insns = (uintptr_t)accept_all;
		break;
	default:
		f->insns = chance(r, 50) ? rnd(r) : 0xffffffff81000000ULL;
		f->len = 1 + below(r, 16);
	}
	if (chance(r, 5))
		f->flags = 1U << below(r, 32);
}

/* Contents for an ioctl's argument: mostly plausible, sometimes not. */
static void make_arg(uint64_t *r, enum op op, union arg *a)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	if (chance(r, 4) || op == OP_UNKNOWN || op == OP_GPACKETS ||
	    op == OP_GDROPS || op == OP_GINFO || op == OP_GFILTERED) {
		for (i = 0; i < sizeof(a->raw) / 8; i++)
			((uint64_t *)a->raw)[i] = rnd(r);
		return;
	}
	switch (op) {
	case OP_SRCVBUF:
		a->rb.bytes = pick_ring_bytes(r);
		if (chance(r, 5))
			a->rb.flags = 1U << below(r, 32);
		if (chance(r, 5))
			a->rb.pad = rnd(r);
		break;
	case OP_SSTATE:
		/* mostly on: a reader should have something to read */
		a->st.state = chance(r, 70) ? NSL_STATE_ON :
			      chance(r, 40) ? NSL_STATE_OFF : 2 + below(r, 0xffffffff);
		if (chance(r, 8))
			a->st.flags = 1U << below(r, 32);
		break;
	case OP_SEVENT:
		a->evs.nevents = chance(r, 85) ? below(r, NSL_MAX_EVENTS + 1) :
				 chance(r, 50) ? NSL_MAX_EVENTS + 1 + below(r, 4) :
						 (uint32_t)rnd(r);
		for (i = 0; i < a->evs.nevents && i < NSL_MAX_EVENTS; i++)
			make_event(r, &a->evs.ev[i]);
		if (chance(r, 5) && a->evs.nevents < NSL_MAX_EVENTS)
			a->evs.ev[NSL_MAX_EVENTS - 1].config2 = rnd(r) | 1;
		if (chance(r, 5))
			a->evs.flags = 1U << below(r, 32);
		break;
	case OP_SEMODE:
		a->mode.mode = chance(r, 85) ? below(r, 2) : 2 + below(r, 1000);
		if (chance(r, 8))
			a->mode.flags = 1U << below(r, 32);
		break;
	case OP_GCALIB:
		make_calib(r, &a->calib);
		break;
	case OP_SRECORDS:
		a->rec.flags = chance(r, 85) ? below(r, NSL_REC_ALL + 1) :
					       (uint32_t)rnd(r);
		if (chance(r, 5))
			a->rec.pad = 1U << below(r, 32);
		break;
	case OP_SFILTER:
		make_filter(r, &a->filt);
		break;
	default:
		break;
	}
}

/* A command that is not ours: the VFS's own (FIONBIO, FIFREEZE...) excluded. */
static unsigned long unknown_cmd(uint64_t *r)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	unsigned int dir = dirs[below(r, 4)], type, nr, size, i;
	unsigned long cmd;

	for (;;) {
		switch (below(r, 4)) {
		case 0:		/* one of ours with another direction or size */
			i = below(r, NIOCTLS - 1);
			type = NSL_IOC_MAGIC;
			nr = _IOC_NR(op_cmd[i]);
			size = chance(r, 50) ? _IOC_SIZE(op_cmd[i]) ^ (8U << below(r, 4)) :
					       _IOC_SIZE(op_cmd[i]);
			break;
		case 1:		/* our magic, a number we do not use */
			type = NSL_IOC_MAGIC;
			nr = chance(r, 30) ? 0 : 0x0a + below(r, 0xf6);
			size = below(r, 1 << 14);
			break;
		case 2:		/* another driver's */
			type = below(r, 256);
			nr = below(r, 256);
			size = below(r, 1 << 14);
			break;
		default:	/* anything */
			cmd = (uint32_t)rnd(r);
			dir = _IOC_DIR(cmd);
			type = _IOC_TYPE(cmd);
			nr = _IOC_NR(cmd);
			size = _IOC_SIZE(cmd);
		}
		cmd = _IOC(dir, type, nr, size);
		/* do_vfs_ioctl() answers these before any driver */
		if (type == 0 || type == 'T' || type == 'X' || type == 'f' ||
		    type == 0x94 || type == 0x15)
			continue;
		for (i = 0; i < NIOCTLS - 1; i++)
			if (cmd == op_cmd[i])
				break;
		if (i == NIOCTLS - 1)
			return cmd;
	}
}

static void describe_arg(enum op op, const union arg *a, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	switch (op) {
	case OP_SRCVBUF:
		snprintf(buf, len, "bytes %" PRIu64 " flags %#x pad %#x (ring_max %llu)",
			 (uint64_t)a->rb.bytes, a->rb.flags, a->rb.pad,
			 (unsigned long long)info.ring_max);
		break;
	case OP_SSTATE:
		snprintf(buf, len, "state %u flags %#x", a->st.state, a->st.flags);
		break;
	case OP_SEVENT:
		off = snprintf(buf, len, "nevents %u flags %#x:", a->evs.nevents,
			       a->evs.flags);
		for (i = 0; i < NSL_MAX_EVENTS && off < len; i++)
			off += snprintf(buf + off, len - off,
					" {type %u config %#llx/%#llx/%#llx flags %#x}",
					a->evs.ev[i].type,
					(unsigned long long)a->evs.ev[i].config,
					(unsigned long long)a->evs.ev[i].config1,
					(unsigned long long)a->evs.ev[i].config2,
					a->evs.ev[i].flags);
		break;
	case OP_SEMODE:
		snprintf(buf, len, "mode %u flags %#x", a->mode.mode, a->mode.flags);
		break;
	case OP_GCALIB:
		snprintf(buf, len, "cpu %u reps %u flags %#x nevents %u",
			 a->calib.cpu, a->calib.reps, a->calib.flags,
			 a->calib.nevents);
		break;
	case OP_SRECORDS:
		snprintf(buf, len, "flags %#x pad %#x", a->rec.flags, a->rec.pad);
		break;
	case OP_SFILTER:
		snprintf(buf, len, "len %u flags %#x insns %#llx", a->filt.len,
			 a->filt.flags, (unsigned long long)a->filt.insns);
		break;
	default:
		buf[0] = 0;
	}
}

/* ------------------------------------------------------ item streams */

/* What one reader of one open has read. */
struct stream {
	bool track;			/* one reader: seqs must be continuous */
	uint64_t next_seq[MAXCPUS];
	uint64_t reads, bytes, items, blocks, events, losses, lost, sysinfos;
	uint64_t nic_blocks, lo_blocks, rx_blocks;
	int nic_ifindex;
	char bad[200];			/* the first thing wrong */
};

static void stream_bad(struct stream *s, const char *fmt, ...)
{
	va_list ap;

	if (s->bad[0])
		return;
	va_start(ap, fmt);
	vsnprintf(s->bad, sizeof(s->bad), fmt, ap);
	va_end(ap);
}

static void seq_step(struct stream *s, const char *what, uint32_t cpu,
		     uint64_t seq, uint64_t n)
{
	if (!s->track)
		return;
	if (seq != s->next_seq[cpu])
		stream_bad(s, "cpu %u: %s seq %" PRIu64 ", want %" PRIu64,
			   cpu, what, seq, s->next_seq[cpu]);
	s->next_seq[cpu] = seq + n;
}

/*
 * The @n bytes a read returned: whole items, each sound, a sysinfo only at
 * the start of a read (and, for one reader, of the stream).  Returns
 * whether all was well (else s->bad says what was not).
 */
static bool take_items(struct stream *s, const uint8_t *buf, size_t n)
{
	struct nsl_item_hdr h;
	struct nsl_sysinfo si;
	struct nsl_block blk;
	struct nsl_event_rec ev;
	struct nsl_loss loss;
	struct ns_item it;
	size_t off = 0;

	s->reads++;
	s->bytes += n;
	while (off < n && !s->bad[0]) {
		if (n - off < sizeof(h)) {
			stream_bad(s, "%zu bytes of a header at the end", n - off);
			break;
		}
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > n - off ||
		    h.size > SLOT) {
			stream_bad(s, "item at %zu of %zu: size %u", off, n, h.size);
			break;
		}
		if (h.cpu >= info.ncpus) {
			stream_bad(s, "item cpu %u of %u", h.cpu, info.ncpus);
			break;
		}
		switch (h.kind) {
		case NSL_ITEM_SYSINFO:
			memcpy(&si, buf + off, sizeof(si) < h.size ? sizeof(si) : h.size);
			if (off || h.size != sizeof(si) ||
			    (s->track && (s->items || s->losses)))
				stream_bad(s, "sysinfo at %zu, size %u, after %" PRIu64 " items",
					   off, h.size, s->items);
			else if (si.abi_version != NSL_ABI_VERSION ||
				 si.byte_order != NSL_BYTE_ORDER_MARK ||
				 si.ncpus != info.ncpus)
				stream_bad(s, "sysinfo abi %u bom %#x ncpus %u",
					   si.abi_version, si.byte_order, si.ncpus);
			s->sysinfos++;
			break;
		case NSL_ITEM_CBLOCK:
			if (ns_decode_item(buf + off, n - off, &it)) {
				stream_bad(s, "compact block at %zu of %zu, size %u",
					   off, n, h.size);
				break;
			}
			blk = it.block;
			if (blk.nrec > NSL_MAX_RECORDS ||
			    blk.dir > NSL_DIR_RX || blk.mode > NSL_MODE_COUNT ||
			    blk.nevents > NSL_MAX_EVENTS) {
				stream_bad(s, "block size %u nrec %u dir %u mode %u",
					   h.size, blk.nrec, blk.dir, blk.mode);
				break;
			}
			seq_step(s, "block", h.cpu, blk.seq, 1);
			s->items++;
			s->blocks++;
			if (blk.flags & NSL_BF_LOOPBACK)
				s->lo_blocks++;
			else if (s->nic_ifindex && (int)blk.ifindex == s->nic_ifindex)
				s->nic_blocks++;
			if (blk.dir == NSL_DIR_RX)
				s->rx_blocks++;
			break;
		case NSL_ITEM_EVENT:
			memcpy(&ev, buf + off, sizeof(ev) < h.size ? sizeof(ev) : h.size);
			if (h.size != sizeof(ev) || !ev.type || ev.type >= NSL_EV_MAX) {
				stream_bad(s, "event size %u type %u", h.size, ev.type);
				break;
			}
			seq_step(s, "event", h.cpu, ev.seq, 1);
			s->items++;
			s->events++;
			break;
		case NSL_ITEM_LOSS:
			memcpy(&loss, buf + off, sizeof(loss) < h.size ? sizeof(loss) : h.size);
			if (h.size != sizeof(loss) || !loss.lost) {
				stream_bad(s, "loss size %u lost %" PRIu64, h.size,
					   (uint64_t)loss.lost);
				break;
			}
			seq_step(s, "loss from", h.cpu, loss.first_seq, loss.lost);
			s->losses++;
			s->lost += loss.lost;
			break;
		default:
			stream_bad(s, "item kind %u", h.kind);
		}
		off += h.size;
	}
	return !s->bad[0];
}

/* ------------------------------------------------------------ traffic */

enum flow {
	F_NIC_TX, F_NIC_RX, F_LO_TCP, F_NIC_UDP, F_LO_UDP, NFLOWS
};

static const struct flow_def {
	const char *name;
	int type;
	bool sink_in_peer, source_in_peer;
	const char *dst_env;	/* address the source sends to; NULL: lo */
	uint16_t port;
	size_t max_msg;
} flow_defs[NFLOWS] = {
	{ "TCP to the peer through the NIC", SOCK_STREAM, true, false,
	  "NS_PEER_IP", 7301, 65536 },
	{ "TCP from the peer through the NIC", SOCK_STREAM, false, true,
	  "NS_LOCAL_IP", 7302, 65536 },
	{ "TCP over loopback", SOCK_STREAM, false, false, NULL, 7303, 65536 },
	{ "UDP to the peer through the NIC", SOCK_DGRAM, true, false,
	  "NS_PEER_IP", 7304, 1400 },
	{ "UDP over loopback", SOCK_DGRAM, false, false, NULL, 7305, 8000 },
};

struct flow_state {
	_Atomic uint64_t sent, received;	/* bytes (TCP), datagrams (UDP) */
	_Atomic int source_done;
	char error[160];
};

struct traffic {
	atomic_int stop;
	uint64_t budget;		/* per source, bytes; 0: until stop */
	struct flow_state f[NFLOWS];
	pid_t sink[NFLOWS], source[NFLOWS];
	int sink_status[NFLOWS], source_status[NFLOWS];	/* -1: not reaped */
};

static void enter_peer(void)
{
	char path[256];
	const char *ns = getenv("NS_PEER_NS");
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns ? ns : "peer");
	fd = open(path, O_RDONLY);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "stress: enter %s: %s\n", path, strerror(errno));
		_exit(1);
	}
	close(fd);
}

/*
 * A child keeps only what it needs (@keep, or none: -1): one that held
 * /dev/ns would keep the device open behind the test's back.
 */
static void close_fds(int keep)
{
	if (keep > 3)
		close_range(3, keep - 1, 0);
	close_range(keep >= 3 ? keep + 1 : 3, ~0U, 0);
}

static void child_setup(bool in_peer, int keep)
{
	/* No orphans if the test dies; the stress threads come first. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	setpriority(PRIO_PROCESS, 0, 5);
	signal(SIGPIPE, SIG_IGN);
	close_fds(keep);
	if (in_peer)
		enter_peer();
}

static void flow_error(struct flow_state *f, const char *what)
{
	snprintf(f->error, sizeof(f->error), "%s: %s", what, strerror(errno));
}

/*
 * A TCP stream carries its own offsets: the 8 bytes at stream offset 8k
 * hold k, so the sink can tell a byte lost (or doubled) from one counted
 * wrong, and where.  Fills @words so that the @len bytes at stream offset
 * @off start at the returned address.
 */
static uint8_t *pattern(uint64_t *words, uint64_t off, size_t len)
{
	uint64_t first = off / 8;
	size_t n = (off % 8 + len + 7) / 8;

	for (size_t i = 0; i < n; i++)
		words[i] = first + i;
	return (uint8_t *)words + off % 8;
}

/* Whether the @n bytes at stream offset @off are what was sent; else say what. */
static bool pattern_check(struct flow_state *f, uint64_t *words,
			  const uint8_t *got, uint64_t off, size_t n)
{
	const uint8_t *want = pattern(words, off, n);
	uint64_t found;
	size_t i;

	if (!memcmp(want, got, n))
		return true;
	for (i = 0; want[i] == got[i]; i++)
		;
	/* the word that begins at or after the first wrong byte */
	i += (8 - (off + i) % 8) % 8;
	found = 0;
	if (i + 8 <= n)
		memcpy(&found, got + i, 8);
	snprintf(f->error, sizeof(f->error),
		 "byte %" PRIu64 " is not what was sent: the word at %" PRIu64
		 " holds stream offset %" PRIu64, off + i, off + i, found * 8);
	return false;
}

static void sink_main(struct traffic *t, int i, int ready)
{
	const struct flow_def *d = &flow_defs[i];
	struct flow_state *f = &t->f[i];
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(d->port) };
	uint64_t *words = malloc(65536 + 16), off = 0;
	int s, c, one = 1;
	char *buf = malloc(65536);
	bool good = true;
	ssize_t n;

	child_setup(d->sink_in_peer, ready);
	s = socket(AF_INET, d->type, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!buf || !words || s < 0 || bind(s, (void *)&a, sizeof(a)) ||
	    (d->type == SOCK_STREAM && listen(s, 1))) {
		flow_error(f, "sink socket");
		_exit(1);
	}
	if (write(ready, "", 1) != 1)
		_exit(1);
	if (d->type == SOCK_STREAM) {
		/* a source that never connected must not leave us waiting */
		for (;;) {
			struct pollfd p = { .fd = s, .events = POLLIN };

			if (poll(&p, 1, 100) == 1)
				break;
			if (f->source_done) {
				snprintf(f->error, sizeof(f->error),
					 "the source never connected");
				_exit(1);
			}
		}
		c = accept(s, NULL, NULL);
		if (c < 0) {
			flow_error(f, "accept");
			_exit(1);
		}
		while ((n = read(c, buf, 65536)) > 0) {
			if (good)
				good = pattern_check(f, words, (uint8_t *)buf, off, n);
			off += n;
			f->received += n;
		}
		if (n < 0)
			flow_error(f, "sink read");
		_exit(n < 0 || !good);
	}
	/* UDP: until the source is done and nothing more is queued */
	for (;;) {
		struct pollfd p = { .fd = s, .events = POLLIN };

		if (poll(&p, 1, 100) == 1) {
			if (recv(s, buf, 65536, 0) >= 0)
				f->received++;
		} else if (f->source_done) {
			_exit(0);
		}
	}
}

static void source_main(struct traffic *t, int i)
{
	const struct flow_def *d = &flow_defs[i];
	struct flow_state *f = &t->f[i];
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(d->port) };
	const char *dst = d->dst_env ? getenv(d->dst_env) : "127.0.0.1";
	uint64_t r = 0x9e3779b97f4a7c15ULL * (i + 1), bytes = 0;
	uint64_t *words = calloc(1, d->max_msg + 16);
	uint8_t *buf;
	size_t len;
	int s;

	child_setup(d->source_in_peer, -1);
	if (!words || !dst || inet_pton(AF_INET, dst, &a.sin_addr) != 1) {
		snprintf(f->error, sizeof(f->error), "no address in %s", d->dst_env);
		f->source_done = 1;
		_exit(1);
	}
	s = socket(AF_INET, d->type, 0);
	if (s < 0 || connect(s, (void *)&a, sizeof(a))) {
		flow_error(f, "connect");
		f->source_done = 1;
		_exit(1);
	}
	while (!t->stop && (!t->budget || bytes < t->budget)) {
		len = 1 + below(&r, d->max_msg);
		buf = d->type == SOCK_STREAM ? pattern(words, bytes, len) :
					       (uint8_t *)words;
		if (send(s, buf, len, 0) != (ssize_t)len) {
			flow_error(f, "send");
			break;
		}
		bytes += len;
		f->sent += d->type == SOCK_STREAM ? len : 1;
	}
	/* TCP: the FIN tells the sink it has everything */
	close(s);
	f->source_done = 1;
	_exit(f->error[0] != 0);
}

static struct traffic *traffic_start(uint64_t budget)
{
	struct traffic *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int pfd[2];
	pid_t pid;
	char c;

	if (t == MAP_FAILED)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->budget = budget;
	for (int i = 0; i < NFLOWS; i++) {
		t->sink_status[i] = t->source_status[i] = -1;
		if (pipe(pfd))
			return NULL;
		fflush(stdout);
		/* fork()'s 0 must not reach the shared page: the child's write races */
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			sink_main(t, i, pfd[1]);
		}
		t->sink[i] = pid;
		close(pfd[1]);
		/* the source may connect once the sink listens */
		if (read(pfd[0], &c, 1) != 1) {
			close(pfd[0]);
			note("traffic: %s: the sink did not start: %s",
			     flow_defs[i].name, t->f[i].error);
			return NULL;
		}
		close(pfd[0]);
		pid = fork();
		if (pid == 0)
			source_main(t, i);
		t->source[i] = pid;
	}
	return t;
}

/* Waits for the sources (stopping them unless they have a budget) and sinks. */
static void traffic_finish(struct traffic *t, bool check)
{
	const struct flow_def *d;
	struct flow_state *f;
	int status;
	bool exited;

	if (!t->budget)
		t->stop = 1;
	for (int i = 0; i < NFLOWS; i++)
		if (t->source[i] > 0 && waitpid(t->source[i], &status, 0) == t->source[i])
			t->source_status[i] = status;
	for (int i = 0; i < NFLOWS; i++)
		if (waitpid(t->sink[i], &status, 0) == t->sink[i])
			t->sink_status[i] = status;
	if (!check)
		return;
	for (int i = 0; i < NFLOWS; i++) {
		d = &flow_defs[i];
		f = &t->f[i];
		/* each process exited by itself, without complaint */
		exited = WIFEXITED(t->source_status[i]) && WIFEXITED(t->sink_status[i]) &&
			 !WEXITSTATUS(t->source_status[i]) && !WEXITSTATUS(t->sink_status[i]);
		if (d->type == SOCK_STREAM)
			tap(TAP_IS(exited) && TAP_IS(!f->error[0]) &&
			    TAP_IS(f->sent > 0) &&
			    TAP_IS(f->sent == f->received),
			    "traffic: %s went on undisturbed: %" PRIu64
			    " bytes sent, %" PRIu64 " received, every byte as sent (status %#x, %#x)%s%s",
			    d->name, (uint64_t)f->sent, (uint64_t)f->received,
			    t->source_status[i], t->sink_status[i],
			    f->error[0] ? "; " : "", f->error);
		else
			tap(TAP_IS(exited) && TAP_IS(!f->error[0]) &&
			    TAP_IS(f->received > 0) &&
			    TAP_IS(f->received <= f->sent),
			    "traffic: %s: %" PRIu64 " datagrams sent, %" PRIu64
			    " received (status %#x, %#x)%s%s", d->name, (uint64_t)f->sent,
			    (uint64_t)f->received, t->source_status[i], t->sink_status[i],
			    f->error[0] ? "; " : "", f->error);
	}
}

/* ------------------------------------------------------------ workers */

enum role { ROLE_IOCTL, ROLE_READ, ROLE_POLL, ROLE_FCNTL, ROLE_OPEN, ROLE_RACER };
static const char *const role_name[] = { "ioctl", "read", "poll", "fcntl",
					 "open", "racer" };

struct phase {
	const char *name;
	bool pinned;			/* one shared descriptor */
	int fd;				/* it (pinned) */
	double start, deadline;		/* a backstop, should the speed lie */
	atomic_bool stop;
	uint64_t *loader_rounds;	/* racing: the loader's progress */
	uint64_t sysinfos;		/* pinned: in the one stream */
	struct stats st;
	pthread_mutex_t lock;		/* st */
	uint64_t items, blocks, events, losses, bytes, reads;
	char stream_bad[200];		/* first stream problem */
};

struct worker {
	pthread_t tid;
	struct phase *ph;
	enum role role;
	enum caps caps;
	uint64_t rng;
	uint64_t iters, done;
	struct bufs b;
	struct stats st;
	struct stream s;		/* racer: per open; else shared fd */
	uint8_t *rbuf;			/* scratch for read results */
	uint64_t last_packets, last_drops, last_emitted;
	int epfd;
	bool nonblock;			/* racer: its descriptor's O_NONBLOCK */
	bool writable, readable;	/* racer: its descriptor's access */
};

static bool stopping(const struct worker *w)
{
	return atomic_load(&w->ph->stop) || now_s() > w->ph->deadline;
}

/* What a successful "get" returned must make sense. */
static void check_output(struct worker *w, enum op op, const void *ptr,
			 const union arg *in)
{
	struct nsl_info got;
	struct nsl_count c;
	struct nsl_calib cal;
	uint32_t reps;

	switch (op) {
	case OP_GINFO:
		memcpy(&got, ptr, sizeof(got));
		if (got.abi_version != NSL_ABI_VERSION || got.block_size != SLOT ||
		    got.ncpus != info.ncpus || got.max_records != NSL_MAX_RECORDS ||
		    got.max_events != NSL_MAX_EVENTS || got.ring_max != info.ring_max ||
		    got.ring_bytes % K_RING_MIN || got.ring_bytes < K_RING_MIN ||
		    got.ring_bytes > got.ring_max || got.emitted < w->last_emitted) {
			w->st.bad[op]++;
			complain("NSIOCGINFO: abi %u block %u ncpus %u ring %llu of %llu emitted %llu after %llu",
				 got.abi_version, got.block_size, got.ncpus,
				 (unsigned long long)got.ring_bytes,
				 (unsigned long long)got.ring_max,
				 (unsigned long long)got.emitted,
				 (unsigned long long)w->last_emitted);
		}
		w->last_emitted = got.emitted;
		break;
	case OP_GPACKETS:
	case OP_GDROPS:
		/* counted from the open, never backwards */
		memcpy(&c, ptr, sizeof(c));
		if (c.count < (op == OP_GPACKETS ? w->last_packets : w->last_drops)) {
			w->st.bad[op]++;
			complain("%s went backwards: %llu after %llu", op_name[op],
				 (unsigned long long)c.count,
				 (unsigned long long)(op == OP_GPACKETS ?
					w->last_packets : w->last_drops));
		}
		*(op == OP_GPACKETS ? &w->last_packets : &w->last_drops) = c.count;
		break;
	case OP_GCALIB:
		memcpy(&cal, ptr, sizeof(cal));
		reps = in->calib.reps ? in->calib.reps : K_CALIB_DEFAULT;
		/* nsl_summarise() keeps all but the top percent */
		if (cal.reps != reps || cal.nevents > NSL_MAX_EVENTS ||
		    cal.cost[NSL_C_NSS].samples != reps - reps / 100 ||
		    cal.cost[NSL_C_NSA].samples != reps - reps / 100) {
			w->st.bad[op]++;
			complain("NSIOCGCALIB cpu %u reps %u: reps %u nevents %u samples %u",
				 in->calib.cpu, in->calib.reps, cal.reps,
				 cal.nevents, cal.cost[NSL_C_NSS].samples);
		}
		break;
	default:
		break;
	}
}

/* One ioctl with @a placed as @p; the answer checked. */
static long call_ioctl(struct worker *w, int fd, enum op op, unsigned long cmd,
		       enum ptr p, const union arg *a, const char *label)
{
	size_t size = op_size(op);
	void *ptr = place(&w->b, &w->rng, p, a, size);
	errset allowed = expect_ioctl(op, w->caps, p, a);
	char what[600], desc[400];
	uint64_t t0;
	long ret;
	int err;

	t0 = now_ns();
	ret = ioctl(fd, cmd, ptr);
	err = errno;
	t0 = now_ns() - t0;
	if (!(allowed & (ret < 0 ? (err < 128 ? E(err) : 0) : OK))) {
		describe_arg(op, a, desc, sizeof(desc));
		snprintf(what, sizeof(what), "%s, cmd %#lx, %s, arg %s %p: %s",
			 label, cmd, caps_name[w->caps], ptr_name[p], ptr, desc);
	} else {
		what[0] = 0;
	}
	answer(&w->st, op, ret, err, allowed, t0, what);
	if (ret == 0 && p == P_RW)
		check_output(w, op, ptr, a);
	return ret < 0 ? -err : ret;
}

static enum op pick_ioctl(uint64_t *r)
{
	/* weights: the setters that do work more often than the getters */
	static const uint8_t w[NIOCTLS] = { 12, 12, 16, 8, 6, 6, 8, 7, 8, 8, 4, 12 };
	unsigned int x = below(r, 107), op;

	for (op = 0; op < NIOCTLS - 1 && x >= w[op]; op++)
		x -= w[op];
	return op;
}

static void random_ioctl(struct worker *w, int fd)
{
	enum op op = pick_ioctl(&w->rng);
	union arg a;

	make_arg(&w->rng, op, &a);
	call_ioctl(w, fd, op, op == OP_UNKNOWN ? unknown_cmd(&w->rng) : op_cmd[op],
		   pick_ptr(&w->rng), &a, "random");
}

/* access_ok() on x86-64 with 4-level page tables */
static bool user_range(const void *buf, size_t count)
{
	uintptr_t a = (uintptr_t)buf, end = a + count;

	return end >= a && end <= (1ULL << 47) - 4096;
}

/*
 * A read of an odd size into a good or bad buffer.  @maybe_nonblock: the
 * descriptor may be non-blocking (EAGAIN allowed); signals (EINTR) come
 * only once the phase stops.
 */
static long random_read(struct worker *w, int fd, bool maybe_nonblock)
{
	static const size_t shorts[] = { 0, 1, 7, 8, 16, 39, 40, SLOT - 8, SLOT - 1 };
	size_t count, writable = 0, k;
	uint8_t *buf;
	errset allowed;
	char what[200];
	uint64_t t0;
	ssize_t ret;
	int err;

	switch (below(&w->rng, 12)) {
	case 0:			/* too short for a block */
		count = shorts[below(&w->rng, 9)];
		buf = chance(&w->rng, 50) ? w->b.rw : chance(&w->rng, 50) ?
			w->b.hole : NULL;
		writable = buf == w->b.rw ? w->b.rw_len : 0;
		break;
	case 1:			/* exactly one slot */
		count = SLOT;
		buf = w->b.rw;
		writable = w->b.rw_len;
		break;
	case 2:
	case 3:			/* ends on the unmapped page */
		k = 1 + below(&w->rng, 3 * SLOT);
		buf = w->b.hole - k;
		count = SLOT + below(&w->rng, 2 * page);
		writable = k;
		break;
	case 4:			/* huge: clamped by the VFS, ends on the hole */
		buf = w->b.rw + below(&w->rng, 64);
		count = chance(&w->rng, 50) ? 64ULL << 20 : SIZE_MAX - below(&w->rng, 16);
		writable = w->b.rw + w->b.rw_len - buf;
		break;
	case 5:			/* nothing writable */
		count = SLOT + below(&w->rng, page - SLOT);
		switch (below(&w->rng, 3)) {
		case 0:
			buf = NULL;
			break;
		case 1:
			buf = w->b.hole;
			break;
		default:
			buf = w->b.ro;
		}
		break;
	case 6:			/* not user memory */
		count = 1 + below(&w->rng, 2 * SLOT);
		buf = place(&w->b, &w->rng, P_KERNEL + below(&w->rng, 3), NULL, 0);
		break;
	default:		/* a plausible buffer, of an odd size */
		buf = w->b.rw + below(&w->rng, 8);
		count = SLOT + below(&w->rng, READ_BYTES - SLOT);
		writable = w->b.rw + w->b.rw_len - buf;
	}

	if (!user_range(buf, count)) {
		allowed = E(EFAULT);
	} else if (count < SLOT) {
		allowed = E(EINVAL);
	} else {
		allowed = E(EINTR);
		if (maybe_nonblock)
			allowed |= E(EAGAIN);
		if (writable)
			allowed |= OK;
		if (writable < count)
			allowed |= E(EFAULT);
	}
	if (w->role == ROLE_RACER && !w->readable)
		allowed = E(EBADF);

	t0 = now_ns();
	ret = read(fd, buf, count);
	err = errno;
	t0 = now_ns() - t0;
	if (ret < 0 && err == EINTR && !atomic_load(&w->ph->stop))
		allowed &= ~E(EINTR);	/* nobody signalled */
	snprintf(what, sizeof(what), "buf %p count %zu, %zu writable", buf, count,
		 writable);
	if (!answer(&w->st, OP_READ, ret, err, allowed, t0, what) || ret < 0)
		return ret < 0 ? -err : ret;
	if (ret == 0 || (size_t)ret > count || (size_t)ret > writable) {
		w->st.bad[OP_READ]++;
		complain("read: %zd bytes from %s", ret, what);
		return ret;
	}
	/* a copy: the buffer may be the kernel's to write again */
	memcpy(w->rbuf, buf, ret);
	if (!take_items(&w->s, w->rbuf, ret)) {
		w->st.bad[OP_READ]++;
		complain("read: %s (%s)", w->s.bad, what);
		w->s.bad[0] = 0;
	}
	return ret;
}

/* A reader's poll() for something to read, a tenth of a second at most. */
static void wait_readable(struct worker *w, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	CHECKED(&w->st, OP_POLL, OK | (atomic_load(&w->ph->stop) ? E(EINTR) : 0),
		"a reader's poll", poll(&p, 1, 100));
}

/* poll or epoll: readable or not, never anything else. */
static void random_poll(struct worker *w, int fd)
{
	static const short evs[] = { POLLIN, POLLOUT, POLLPRI, POLLRDNORM,
				     POLLWRNORM, POLLRDHUP };
	struct pollfd p = { .fd = fd };
	struct epoll_event ev = { 0 }, out;
	int timeout = below(&w->rng, 20), n, err, i;
	uint32_t got;
	uint64_t t0;

	for (i = 0; i < 6; i++)
		if (chance(&w->rng, 50))
			p.events |= evs[i];
	t0 = now_ns();
	if (w->epfd >= 0 && chance(&w->rng, 40)) {
		ev.events = p.events | (chance(&w->rng, 30) ? EPOLLET : 0);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			err = errno;
			answer(&w->st, OP_POLL, -1, err, OK, 0, "epoll_ctl ADD");
			return;
		}
		n = epoll_wait(w->epfd, &out, 1, timeout);
		err = errno;
		got = n == 1 ? out.events : 0;
		CHECKED(&w->st, OP_POLL, OK, "epoll_ctl DEL",
			epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL));
	} else {
		n = poll(&p, 1, timeout);
		err = errno;
		got = n == 1 ? (uint16_t)p.revents : 0;
	}
	t0 = now_ns() - t0;
	if (!answer(&w->st, OP_POLL, n, err,
		    OK | (atomic_load(&w->ph->stop) ? E(EINTR) : 0), t0, "poll"))
		return;
	/* nslm_poll(): EPOLLIN | EPOLLRDNORM or nothing, whatever was asked */
	if (n > 1 || (got & ~(POLLIN | POLLRDNORM)) ||
	    (n == 1 && !(got & (POLLIN | POLLRDNORM)))) {
		w->st.bad[OP_POLL]++;
		complain("poll: %d, events %#x asked, %#x returned", n,
			 (unsigned int)p.events, got);
	}
}

/* O_NONBLOCK toggles, FIONBIO, a dup: all must just work. */
static void random_fcntl(struct worker *w, int fd)
{
	int flags, on, ret, err = 0, dup_fd;
	uint64_t t0 = now_ns();

	switch (below(&w->rng, 4)) {
	case 0:
		ret = flags = fcntl(fd, F_GETFL);
		err = errno;
		if (ret >= 0 && w->role == ROLE_RACER &&
		    !!(flags & O_NONBLOCK) != w->nonblock) {
			w->st.bad[OP_FCNTL]++;
			complain("fcntl: O_NONBLOCK %d, set %d", !!(flags & O_NONBLOCK),
				 w->nonblock);
		}
		break;
	case 1:
		flags = fcntl(fd, F_GETFL);
		ret = flags < 0 ? flags : fcntl(fd, F_SETFL, flags ^ O_NONBLOCK);
		err = errno;
		if (ret >= 0)
			w->nonblock = !(flags & O_NONBLOCK);
		break;
	case 2:
		on = chance(&w->rng, 50);
		ret = ioctl(fd, FIONBIO, &on);
		err = errno;
		if (ret >= 0)
			w->nonblock = on;
		break;
	default:
		ret = dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		err = errno;
		/* closing a duplicate does not release the device */
		if (dup_fd >= 0 && close(dup_fd)) {
			ret = -1;
			err = errno;
		}
	}
	answer(&w->st, OP_FCNTL, ret < 0 ? -1 : 0, err, OK, now_ns() - t0, "fcntl");
}

/*
 * A mapping of the rings, read-only: one page (the wrong length), or all
 * of them as NSIOCGINFO just said (EINVAL if a resize came in between,
 * EBUSY while another worker's mapping or a resize holds the rings).
 */
static void random_mmap(struct worker *w, int fd)
{
	const struct nsl_ring_ctl *ctl;
	struct nsl_info now;
	size_t len = page;
	void *m = MAP_FAILED;

	if (chance(&w->rng, 50) && !ioctl(fd, NSIOCGINFO, &now))
		len = now.ncpus * (page + now.ring_bytes);
	CHECKED(&w->st, OP_MMAP,
		!w->readable ? E(EACCES) :
		len == (size_t)page ? E(EINVAL) : OK | E(EINVAL) | E(EBUSY),
		"mmap", (m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0)) ==
		MAP_FAILED ? -1 : 0);
	if (m == MAP_FAILED)
		return;
	/* While it exists no resize can come: the size is the mapping's. */
	ctl = m;
	if (ctl->magic != NSL_RING_MAGIC || ctl->cpu ||
	    now.ncpus * (page + ctl->size) != len)
		complain("mapping: control page magic %#x cpu %u size %llu for %zu bytes",
			 ctl->magic, ctl->cpu, (unsigned long long)ctl->size,
			 len);
	munmap(m, len);
}

/* The entry points /dev/ns does not have, and mmap. */
static void random_other(struct worker *w, int fd)
{
	off_t off;
	int whence;

	switch (below(&w->rng, 3)) {
	case 0:
		CHECKED(&w->st, OP_WRITE, w->writable ? E(EINVAL) : E(EBADF),
			"write", write(fd, w->b.rw, below(&w->rng, 2 * SLOT)));
		break;
	case 1:
		random_mmap(w, fd);
		break;
	default:
		off = chance(&w->rng, 20) ? -1 - (off_t)below(&w->rng, 100) :
					    (off_t)below(&w->rng, 1 << 20);
		whence = below(&w->rng, 8);
		if (chance(&w->rng, 50))
			CHECKED(&w->st, OP_LSEEK,
				whence <= SEEK_HOLE ? E(ESPIPE) : E(EINVAL),
				"lseek", lseek(fd, off, whence) < 0 ? -1 : 0);
		else
			CHECKED(&w->st, OP_LSEEK, off < 0 ? E(EINVAL) : E(ESPIPE),
				"pread", pread(fd, w->b.rw, SLOT, off));
	}
}

/* A second open while the first is held: EBUSY, always. */
static void try_second_open(struct worker *w)
{
	static const int modes[] = { O_RDONLY, O_RDWR, O_WRONLY };
	int flags = modes[below(&w->rng, 3)] |
		    (chance(&w->rng, 50) ? O_NONBLOCK : 0) | O_CLOEXEC;
	uint64_t t0 = now_ns();
	int fd = open(DEV, flags);
	int err = errno;

	answer(&w->st, OP_OPEN, fd, err, E(EBUSY), now_ns() - t0,
	       "a second open while " DEV " is held");
	if (fd >= 0)
		close(fd);
}

static void reset_counters(struct worker *w)
{
	w->last_packets = w->last_drops = 0;
}

/*
 * Racing: open (the module may be gone, or someone else may hold it), use
 * the descriptor alone (so its stream must be continuous), close.  Whether
 * the open succeeded.
 */
static bool racer_round(struct worker *w)
{
	static const int modes[] = { O_RDONLY, O_RDONLY, O_RDWR, O_WRONLY };
	int mode = modes[below(&w->rng, 4)], fd, nops, i;
	struct nsl_count drops = { 0 }, packets = { 0 };
	struct nsl_info got;
	struct pollfd p;
	errset ok;

	w->nonblock = chance(&w->rng, 50);
	/*
	 * devtmpfs's handle_remove() sets the node's mode to 0 before it
	 * unlinks it: an opener without CAP_DAC_OVERRIDE, root or not,
	 * meets that node while the module goes.
	 */
	fd = CHECKED(&w->st, OP_OPEN, OK | E(EBUSY) | E(ENOENT) | E(ENODEV) |
		     (w->caps == CAPS_ALL ? 0 : E(EACCES)),
		     "open while others open and close and the module comes and goes",
		     open(DEV, mode | O_CLOEXEC | (w->nonblock ? O_NONBLOCK : 0)));
	if (fd < 0) {
		sched_yield();
		return false;
	}
	w->readable = mode != O_WRONLY;
	w->writable = mode != O_RDONLY;
	memset(&w->s, 0, sizeof(w->s));
	w->s.track = true;
	reset_counters(w);

	nops = 1 + below(&w->rng, 8);
	for (i = 0; i < nops; i++) {
		switch (below(&w->rng, 10)) {
		case 0:
		case 1:
		case 2:
		case 3:
			random_ioctl(w, fd);
			break;
		case 4:
		case 5:
			/* a blocking read only when something is there */
			p = (struct pollfd){ .fd = fd, .events = POLLIN };
			if (w->nonblock || poll(&p, 1, 0) == 1)
				random_read(w, fd, w->nonblock);
			break;
		case 6:
			random_poll(w, fd);
			break;
		case 7:
			random_fcntl(w, fd);
			break;
		default:
			random_other(w, fd);
		}
	}

	/* The module is pinned while we hold it: the descriptor still works. */
	ok = w->caps == CAPS_NONE ? E(EPERM) : OK;
	CHECKED(&w->st, OP_GINFO, ok, "NSIOCGINFO before close",
		ioctl(fd, NSIOCGINFO, &got));
	if (w->caps != CAPS_NONE) {
		CHECKED(&w->st, OP_GDROPS, OK, "NSIOCGDROPS before close",
			ioctl(fd, NSIOCGDROPS, &drops));
		CHECKED(&w->st, OP_GPACKETS, OK, "NSIOCGPACKETS before close",
			ioctl(fd, NSIOCGPACKETS, &packets));
		/* items read + drops + items queued == packets, drops first */
		if (w->s.items + drops.count > packets.count || w->s.lost > drops.count) {
			w->st.bad[OP_READ]++;
			complain("racing: %" PRIu64 " items read + %llu drops > %llu packets, or %" PRIu64 " lost in loss items > drops",
				 w->s.items, (unsigned long long)drops.count,
				 (unsigned long long)packets.count, w->s.lost);
		}
	}
	if (w->s.reads && w->s.sysinfos != 1) {
		w->st.bad[OP_READ]++;
		complain("racing: %" PRIu64 " sysinfo items in %" PRIu64 " reads of one open",
			 w->s.sysinfos, w->s.reads);
	}
	CHECKED(&w->st, OP_CLOSE, OK, "close", close(fd));
	/*
	 * Half the time, let the loader try once before opening again: with
	 * everybody opening at once the device is never free to unload.
	 */
	if (w->ph->loader_rounds && chance(&w->rng, 50)) {
		uint64_t seen = __atomic_load_n(w->ph->loader_rounds, __ATOMIC_RELAXED);

		while (__atomic_load_n(w->ph->loader_rounds, __ATOMIC_RELAXED) == seen &&
		       !stopping(w))
			sched_yield();
	}
	pthread_mutex_lock(&w->ph->lock);
	w->ph->items += w->s.items;
	w->ph->blocks += w->s.blocks;
	w->ph->events += w->s.events;
	w->ph->losses += w->s.losses;
	w->ph->bytes += w->s.bytes;
	w->ph->reads += w->s.reads;
	pthread_mutex_unlock(&w->ph->lock);
	return true;
}

static void on_signal(int sig)
{
	(void)sig;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int fd = w->ph->fd;

	if (drop_caps(w->caps)) {
		w->st.harness++;
		complain("capset for %s: %s", caps_name[w->caps], strerror(errno));
		return NULL;
	}
	for (w->done = 0; w->done < w->iters && !stopping(w); w->done++) {
		switch (w->role) {
		case ROLE_RACER:
			/* rounds that got the device count */
			while (!racer_round(w) && !stopping(w))
				;
			break;
		case ROLE_IOCTL:
			random_ioctl(w, fd);
			break;
		case ROLE_READ:
			/* nothing to read: wait, not spin */
			if (random_read(w, fd, true) == -EAGAIN)
				wait_readable(w, fd);
			break;
		case ROLE_POLL:
			random_poll(w, fd);
			break;
		case ROLE_FCNTL:
			random_fcntl(w, fd);
			break;
		case ROLE_OPEN:
			try_second_open(w);
			break;
		}
	}
	return NULL;
}

static int worker_init(struct worker *w, struct phase *ph, enum role role,
		       enum caps caps, uint64_t iters, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->ph = ph;
	w->role = role;
	w->caps = caps;
	w->iters = iters;
	w->rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->rbuf = malloc(RW_PAGES * page);
	return w->rbuf && w->epfd >= 0 ? bufs_init(&w->b) : -1;
}

static void worker_fini(struct worker *w)
{
	munmap(w->b.rw, w->b.rw_len);
	munmap(w->b.ro, page);
	close(w->epfd);
	free(w->rbuf);
}

/* ------------------------------------------------------------- loader */

/* Another process loading and unloading the module, for a phase. */
struct loader {
	atomic_int stop;
	bool pinned;			/* /dev/ns is held all along */
	uint64_t max_rounds;		/* each reads the whole module file */
	int kofd;
	uint64_t rounds, unloaded, loaded;
	struct stats st;
	pid_t pid;
};

/*
 * The cost ladder's stage (bench/sameboot.sh -L), set to one at random --
 * or to a name no stage has -- while blocks are made and freed: each
 * stage's tests in the hot path are a static key the write turns on or
 * off under the traffic.
 */
#define STAGE_PARAM	"/sys/module/" MODNAME "/parameters/cost_stage"
static long set_stage(const char *name)
{
	int fd = open(STAGE_PARAM, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (fd < 0)
		return -1;
	n = write(fd, name, strlen(name));
	err = errno;
	close(fd);
	errno = err;
	return n == (ssize_t)strlen(name) ? 0 : -1;
}

static void stage_poke(struct loader *l, uint64_t *r)
{
	static const char *const names[] = {
		"none", "carry", "clock", "records", "full", "stairs",
	};
	const char *name = names[below(r, sizeof(names) / sizeof(names[0]))];
	errset gone = l->pinned ? 0 : E(ENOENT) | E(ENODEV);

	CHECKED(&l->st, OP_STAGE,
		(strcmp(name, "stairs") ? OK : E(EINVAL)) | gone,
		"cost_stage", set_stage(name));
}

static void loader_main(struct loader *l)
{
	uint64_t r = now_ns() | 1;
	errset rm, in;
	long ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* it spins: the threads it races with come first */
	setpriority(PRIO_PROCESS, 0, 5);
	close_fds(l->kofd);
	if (l->pinned) {
		rm = E(EAGAIN);		/* in use */
		in = E(EEXIST);
	} else {
		rm = OK | E(EAGAIN) | E(ENOENT) | E(EBUSY);
		in = OK | E(EEXIST) | E(EBUSY) | E(ENOMEM);
	}
	while (!l->stop && l->rounds < l->max_rounds) {
		ret = CHECKED(&l->st, OP_RMMOD, rm,
			      l->pinned ? "rmmod while " DEV " is open" : "rmmod",
			      rmmod());
		l->unloaded += ret == 0;
		if (ret)
			sched_yield();
		ret = CHECKED(&l->st, OP_INSMOD, in,
			      l->pinned ? "insmod while loaded" : "insmod",
			      insmod(l->kofd, ""));
		l->loaded += ret == 0;
		stage_poke(l, &r);
		l->rounds++;
	}
	/* What follows the phase captures: every block whole. */
	if (module_loaded())
		CHECKED(&l->st, OP_STAGE, OK | E(ENOENT) | E(ENODEV),
			"cost_stage full", set_stage("full"));
	_exit(0);
}

static struct loader *loader_start(int kofd, bool pinned, uint64_t max_rounds)
{
	struct loader *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	if (l == MAP_FAILED)
		return NULL;
	memset(l, 0, sizeof(*l));
	l->kofd = kofd;
	l->pinned = pinned;
	l->max_rounds = max_rounds;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		loader_main(l);
	l->pid = pid;
	return l;
}

static void loader_stop(struct loader *l, struct stats *into)
{
	int status;

	l->stop = 1;
	waitpid(l->pid, &status, 0);
	stats_add(into, &l->st);
	note("loader: %" PRIu64 " rounds, module unloaded %" PRIu64 " and loaded %" PRIu64 " times",
	     l->rounds, l->unloaded, l->loaded);
}

/* ------------------------------------------------------------- phases */

static struct stats total;		/* every phase */
static uint64_t total_items, total_reads;

/* One TAP line per kind of call: every answer allowed. */
static void phase_report(const char *phase, const struct stats *st)
{
	char dist[600], set[300];

	for (int op = 0; op < OP_MAX; op++) {
		uint64_t n = calls(st, op);

		if (!n)
			continue;
		tap(st->bad[op] == 0,
		    "%s: %s: %" PRIu64 " answers, %s (allowed {%s}); mean %.0f us, longest %.0f us",
		    phase, op_name[op], n,
		    st->bad[op] ? "some the code does not allow" : "each one the code allows",
		    errset_str(st->allowed[op], set, sizeof(set)),
		    st->sum_ns[op] / 1e3 / n, st->max_ns[op] / 1e3);
		note("%s: %s answers: %s", phase, op_name[op],
		     answers_str(st, op, dist, sizeof(dist)));
	}
}

static void join_all(struct worker *ws, int nw, bool readers)
{
	struct timespec ts;

	for (int i = 0; i < nw; i++) {
		if ((ws[i].role == ROLE_READ) != readers)
			continue;
		/* a reader may sleep in read(): our signal gets it out */
		for (;;) {
			if (readers)
				pthread_kill(ws[i].tid, SIGUSR1);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (!pthread_timedjoin_np(ws[i].tid, NULL, &ts))
				break;
		}
	}
}

/* Deterministic rows: every boundary at least once, whatever the dice say. */
static void boundaries(struct worker *w, int fd)
{
	const uint64_t sizes[] = {
		0, 1, K_RING_MIN - 1, K_RING_MIN,
		K_RING_MIN + 1, 1 << 20, info.ring_max - 1,
		info.ring_max, info.ring_max + 1, info.ring_max + SLOT,
		1ULL << 32, 1ULL << 63, UINT64_MAX,
	};
	/*
	 * Not 2^16 itself: allowed, but seconds of one CPU under TCG, and
	 * many more on a debug kernel.
	 */
	const uint32_t reps[] = { 0, 1, 15, 16, 17, K_CALIB_MAX + 1,
				  UINT32_MAX };
	const uint64_t configs[] = { 0, 1, 9, 10, 11, 12, 0xff, 1ULL << 32,
				     (4ULL << 32) | 1, 0x010203, ~0ULL };
	static const struct {
		enum op op;
		size_t off, size;
		uint64_t value;
		const char *name;
	} fields[] = {
#define FIELD(op, type, field, value) \
	{ op, offsetof(type, field), sizeof(((type *)0)->field), value, #type "." #field }
		FIELD(OP_SRCVBUF, struct nsl_rcvbuf, flags, 1U << 31),
		FIELD(OP_SRCVBUF, struct nsl_rcvbuf, pad, 1),
		FIELD(OP_SSTATE, struct nsl_state, flags, 1),
		FIELD(OP_SEMODE, struct nsl_mode, flags, 1),
		FIELD(OP_SRECORDS, struct nsl_record_opts, pad, 1),
		/* TCP state without the records themselves */
		FIELD(OP_SRECORDS, struct nsl_record_opts, flags, NSL_REC_TCP),
		FIELD(OP_SEVENT, struct nsl_events, flags, 1),
		FIELD(OP_SEVENT, struct nsl_events, nevents, NSL_MAX_EVENTS + 1),
		FIELD(OP_SEVENT, struct nsl_events, ev[0].flags, 1),
		/* past nevents */
		FIELD(OP_SEVENT, struct nsl_events, ev[3].config1, 1),
		FIELD(OP_GCALIB, struct nsl_calib, flags, 1),
		FIELD(OP_GCALIB, struct nsl_calib, nevents, 1),
#undef FIELD
	};
	uint32_t types[16 + 64], ntypes = 0, t;
	union arg a, valid[NIOCTLS];
	size_t c;
	int op, p;

	/* every pointer class with a valid argument, for every ioctl */
	memset(valid, 0, sizeof(valid));
	valid[OP_SRCVBUF].rb.bytes = 1 << 20;
	valid[OP_SSTATE].st.state = NSL_STATE_ON;
	valid[OP_SEVENT].evs.nevents = 1;
	valid[OP_SEVENT].evs.ev[0].type = PERF_TYPE_SOFTWARE;
	valid[OP_SEMODE].mode.mode = NSL_MODE_COUNT;
	valid[OP_GCALIB].calib.reps = 16;
	valid[OP_SRECORDS].rec.flags = NSL_REC_ALL;
	valid[OP_SFILTER].filt.len = 1;
	valid[OP_SFILTER].filt.insns = (uintptr_t)accept_all;
	for (op = 0; op < NIOCTLS - 1; op++)
		for (p = 0; p < P_MAX; p++)
			call_ioctl(w, fd, op, op_cmd[op], p, &valid[op], "every pointer");
	for (p = 0; p < P_MAX; p++)
		call_ioctl(w, fd, OP_UNKNOWN, _IOW(NSL_IOC_MAGIC, 0x7f, struct nsl_state),
			   p, &valid[OP_SSTATE], "unknown command, every pointer");

	/* non-zero flags and padding, one field at a time (little-endian) */
	for (c = 0; c < sizeof(fields) / sizeof(fields[0]); c++) {
		a = valid[fields[c].op];
		memcpy(a.raw + fields[c].off, &fields[c].value, fields[c].size);
		call_ioctl(w, fd, fields[c].op, op_cmd[fields[c].op], P_RW, &a,
			   fields[c].name);
	}

	/* ring sizes */
	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		a = valid[OP_SRCVBUF];
		a.rb.bytes = sizes[c];
		call_ioctl(w, fd, OP_SRCVBUF, NSIOCSRCVBUF, P_RW, &a, "ring size");
	}
	call_ioctl(w, fd, OP_SRCVBUF, NSIOCSRCVBUF, P_RW, &valid[OP_SRCVBUF],
		   "ring size back to 1 MiB");

	/* calibration: CPUs and repetitions */
	for (c = 0; c < sizeof(reps) / sizeof(reps[0]); c++) {
		a = valid[OP_GCALIB];
		a.calib.reps = reps[c];
		a.calib.cpu = c % info.ncpus;
		call_ioctl(w, fd, OP_GCALIB, NSIOCGCALIB, P_RW, &a, "calib reps");
	}
	a = valid[OP_GCALIB];
	a.calib.cpu = info.ncpus;
	call_ioctl(w, fd, OP_GCALIB, NSIOCGCALIB, P_RW, &a, "calib cpu ncpus");
	a.calib.cpu = UINT32_MAX;
	call_ioctl(w, fd, OP_GCALIB, NSIOCGCALIB, P_RW, &a, "calib cpu ~0");

	/* every perf type, fixed and dynamic and none, with odd configs */
	for (t = 0; t <= K_TYPE_MAX; t++)
		types[ntypes++] = t;
	for (int i = 0; i < npmu_types; i++)
		types[ntypes++] = pmu_type[i];
	types[ntypes++] = 63;
	types[ntypes++] = 0x7fffffff;
	types[ntypes++] = UINT32_MAX;
	for (t = 0; t < ntypes; t++) {
		for (c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
			memset(&a, 0, sizeof(a));
			a.evs.nevents = 1;
			a.evs.ev[0].type = types[t];
			a.evs.ev[0].config = configs[c];
			call_ioctl(w, fd, OP_SEVENT, NSIOCSEVENT, P_RW, &a, "perf type and config");
		}
	}
	/* four events at once: the last one bad, then all good */
	memset(&a, 0, sizeof(a));
	a.evs.nevents = NSL_MAX_EVENTS;
	for (c = 0; c < NSL_MAX_EVENTS; c++) {
		a.evs.ev[c].type = PERF_TYPE_SOFTWARE;
		a.evs.ev[c].config = c;
	}
	a.evs.ev[3].type = PERF_TYPE_RAW;
	call_ioctl(w, fd, OP_SEVENT, NSIOCSEVENT, P_RW, &a, "four events, a raw one last");
	a.evs.ev[3].type = PERF_TYPE_SOFTWARE;
	call_ioctl(w, fd, OP_SEVENT, NSIOCSEVENT, P_RW, &a, "four software events");

	/* every number of our magic that is not ours, and ours turned */
	for (c = 0; c < 0x20; c++) {
		unsigned long cmd = _IOW(NSL_IOC_MAGIC, c, struct nsl_state);
		bool ours = false;

		for (op = 0; op < NIOCTLS - 1; op++)
			ours |= cmd == op_cmd[op];
		if (!ours)
			call_ioctl(w, fd, OP_UNKNOWN, cmd, P_RW, &valid[OP_SSTATE],
				   "unused number of our magic");
	}
	for (op = 0; op < NIOCTLS - 1; op++) {
		unsigned long cmd = op_cmd[op];

		call_ioctl(w, fd, OP_UNKNOWN,
			   _IOC(_IOC_DIR(cmd) ^ _IOC_READ, _IOC_TYPE(cmd),
				_IOC_NR(cmd), _IOC_SIZE(cmd)),
			   P_RW, &valid[op], "our command, another direction");
		call_ioctl(w, fd, OP_UNKNOWN,
			   _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
				_IOC_SIZE(cmd) + 8),
			   P_RW, &valid[op], "our command, another size");
	}
	/* leave collection on for the readers */
	call_ioctl(w, fd, OP_SSTATE, NSIOCSSTATE, P_RW, &valid[OP_SSTATE], "on");
}

struct speed {
	double ioctl_s, cheap_s, open_s;
};

static void phase_collect(struct phase *ph, struct worker *ws, int nw)
{
	for (int i = 0; i < nw; i++) {
		stats_add(&ph->st, &ws[i].st);
		if (ws[i].done < ws[i].iters && ws[i].iters != UINT64_MAX)
			note("%s: %s worker (%s) stopped at the deadline after %" PRIu64
			     " of %" PRIu64, ph->name, role_name[ws[i].role],
			     caps_name[ws[i].caps], ws[i].done, ws[i].iters);
		if (!hole_still_unmapped(&ws[i].b)) {
			ph->st.harness++;
			complain("%s: a worker's unmapped page got mapped: the test is void",
				 ph->name);
		}
		if (!ph->pinned)
			continue;
		ph->items += ws[i].s.items;
		ph->blocks += ws[i].s.blocks;
		ph->events += ws[i].s.events;
		ph->losses += ws[i].s.losses;
		ph->bytes += ws[i].s.bytes;
		ph->reads += ws[i].s.reads;
	}
}

static void phase_finish(struct phase *ph)
{
	note("%s: took %.0f s", ph->name, now_s() - ph->start);
	phase_report(ph->name, &ph->st);
	tap(ph->st.harness == 0, "%s: the workers ran as set up (capabilities, unmapped pages)",
	    ph->name);
	note("%s: %" PRIu64 " reads returned %" PRIu64 " bytes: %" PRIu64
	     " blocks, %" PRIu64 " event records, %" PRIu64 " loss items",
	     ph->name, ph->reads, ph->bytes, ph->blocks, ph->events, ph->losses);
	stats_add(&total, &ph->st);
	total_items += ph->items;
	total_reads += ph->reads;
}

static void phase_pinned(int fd, int kofd, const struct speed *sp)
{
	static const struct { enum role role; enum caps caps; } plan[] = {
		{ ROLE_IOCTL, CAPS_ALL }, { ROLE_IOCTL, CAPS_ALL },
		{ ROLE_IOCTL, CAPS_ALL }, { ROLE_IOCTL, CAPS_NETADMIN },
		{ ROLE_IOCTL, CAPS_NONE }, { ROLE_READ, CAPS_ALL },
		{ ROLE_READ, CAPS_ALL }, { ROLE_POLL, CAPS_ALL },
		{ ROLE_FCNTL, CAPS_ALL }, { ROLE_OPEN, CAPS_ALL },
	};
	enum { NW = sizeof(plan) / sizeof(plan[0]) };
	static struct phase ph = { .name = "pinned" };
	static struct worker ws[NW], main_w;
	/* the workers and the loader share two CPUs */
	double share = (NW + 2.0) / (ncpus_online ? ncpus_online : 1);
	uint64_t n_ioctl = PINNED_S / (sp->ioctl_s * share);
	uint64_t n_cheap = PINNED_S / (sp->cheap_s * share);
	struct nsl_state on = { .state = NSL_STATE_ON };
	struct loader *ld;
	int i;

	if (n_ioctl < 50)
		n_ioctl = 50;
	if (n_cheap < 200)
		n_cheap = 200;
	pthread_mutex_init(&ph.lock, NULL);
	ph.pinned = true;
	ph.fd = fd;
	ph.start = now_s();
	ph.deadline = ph.start + 1.5 * PINNED_S;
	for (i = 0; i < NW; i++)
		if (worker_init(&ws[i], &ph, plan[i].role, plan[i].caps,
				/* readers read till the others are done */
				plan[i].role == ROLE_IOCTL ? n_ioctl :
				plan[i].role == ROLE_READ ? UINT64_MAX : n_cheap, i + 1)) {
			tap(false, "pinned: worker set-up: %s", strerror(errno));
			return;
		}
	worker_init(&main_w, &ph, ROLE_IOCTL, CAPS_ALL, 0, 99);
	note("pinned: %d threads: %" PRIu64 " ioctls each (5 threads), %" PRIu64
	     " polls, fcntls or opens each (3 threads), 2 readers till they are done",
	     NW, n_ioctl, n_cheap);

	ld = loader_start(kofd, true, n_cheap / 20 + 20);
	for (i = 0; i < NW; i++)
		pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]);

	boundaries(&main_w, fd);

	join_all(ws, NW, false);
	atomic_store(&ph.stop, true);
	/* readers asleep in read() need blocks, or a signal */
	ioctl(fd, NSIOCSSTATE, &on);
	join_all(ws, NW, true);
	if (ld)
		loader_stop(ld, &ph.st);
	else
		tap(false, "pinned: loader process started");

	phase_collect(&ph, ws, NW);
	stats_add(&ph.st, &main_w.st);
	for (i = 0; i < NW; i++)
		ph.sysinfos += ws[i].s.sysinfos;
	tap(TAP_IS(ph.reads > 0) && TAP_IS(ph.sysinfos == 1),
	    "pinned: the one stream has exactly one sysinfo item, at the start of a read (%" PRIu64 " in %" PRIu64 " reads)",
	    ph.sysinfos, ph.reads);
	CHECKED(&ph.st, OP_CLOSE, OK, "close", close(fd));
	phase_finish(&ph);
	for (i = 0; i < NW; i++)
		worker_fini(&ws[i]);
	worker_fini(&main_w);
}

static void phase_racing(int kofd, const struct speed *sp)
{
	static const enum caps plan[] = { CAPS_ALL, CAPS_ALL, CAPS_ALL,
					  CAPS_NETADMIN, CAPS_NONE };
	enum { NW = sizeof(plan) / sizeof(plan[0]) };
	static struct phase ph = { .name = "racing", .fd = -1 };
	static struct worker ws[NW];
	/*
	 * A round: an open, up to 8 operations (about half ioctls), a close;
	 * one at a time, the device having one reader, while the others and
	 * the loader spin on the CPUs.
	 */
	double share = (NW + 1.0) / (ncpus_online ? ncpus_online : 1);
	uint64_t n = RACING_S / ((sp->open_s + 2 * sp->ioctl_s + 3 * sp->cheap_s) *
				 NW * share);
	struct loader *ld;
	int i;

	if (n < 10)
		n = 10;
	pthread_mutex_init(&ph.lock, NULL);
	ph.start = now_s();
	ph.deadline = ph.start + 1.5 * RACING_S;
	for (i = 0; i < NW; i++)
		if (worker_init(&ws[i], &ph, ROLE_RACER, plan[i], n, 100 + i)) {
			tap(false, "racing: worker set-up: %s", strerror(errno));
			return;
		}
	note("racing: %d threads, %" PRIu64 " rounds of open, use, close each", NW, n);
	ld = loader_start(kofd, false, UINT64_MAX);
	ph.loader_rounds = ld ? &ld->rounds : NULL;
	for (i = 0; i < NW; i++)
		pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]);
	join_all(ws, NW, false);
	atomic_store(&ph.stop, true);
	if (ld)
		loader_stop(ld, &ph.st);
	else
		tap(false, "racing: loader process started");
	phase_collect(&ph, ws, NW);
	phase_finish(&ph);
	for (i = 0; i < NW; i++)
		worker_fini(&ws[i]);
}

/* Nonblocking reads of everything there is into @s. */
static long read_all(int fd, struct stream *s, uint8_t *buf, bool *ok)
{
	long total = 0;
	ssize_t n;

	while ((n = read(fd, buf, READ_BYTES)) > 0) {
		*ok &= take_items(s, buf, n);
		total += n;
	}
	if (n == 0 || errno != EAGAIN) {
		stream_bad(s, "read: %s", n ? strerror(errno) : "0 bytes");
		*ok = false;
	}
	return total;
}

/*
 * At least CYCLES times under traffic: insmod (enable=0 every fourth time),
 * open, collection on, read until a block arrives, close, rmmod.  With one
 * reader the stream of each open must be continuous from seq 0.
 */
static void phase_cycles(int kofd)
{
	static struct stats st;
	struct nsl_state on = { .state = NSL_STATE_ON };
	struct nsl_count drops, packets;
	uint64_t blocks = 0, items = 0, reads = 0, waits_ok = 0, acct_ok = 0;
	uint64_t t0, wait_ns = 0;
	double start = now_s();
	uint8_t *buf = malloc(READ_BYTES);
	struct stream *s = calloc(1, sizeof(*s));
	int c, fd, n, waited;
	char what[80];
	bool ok;

	if (!buf || !s)
		return;
	for (c = 0; c < CYCLES; c++) {
		const char *params = c % 4 == 3 ? "enable=0" : "";

		snprintf(what, sizeof(what), "cycle %d, insmod %s", c, params);
		CHECKED(&st, OP_INSMOD, OK, what, insmod(kofd, params));
		fd = CHECKED(&st, OP_OPEN, OK, "open after insmod",
			     open(DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
		if (fd < 0)
			goto unload;
		CHECKED(&st, OP_SSTATE, OK, "collection on",
			ioctl(fd, NSIOCSSTATE, &on));

		memset(s, 0, sizeof(*s));
		s->track = true;
		ok = true;
		t0 = now_ns();
		/* traffic is flowing: a block must come (a minute at most) */
		for (waited = 0; waited < 600 && !s->blocks && ok; waited++) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			n = poll(&p, 1, 100);
			if (n == 1) {
				reads++;
				read_all(fd, s, buf, &ok);
			}
		}
		wait_ns += now_ns() - t0;
		if (!s->blocks || !ok)
			complain("cycle %d: %" PRIu64 " blocks after %d polls: %s", c,
				 s->blocks, waited, s->bad);
		waits_ok += s->blocks && ok && s->sysinfos == 1;
		blocks += s->blocks;
		items += s->items;

		CHECKED(&st, OP_GDROPS, OK, "NSIOCGDROPS",
			ioctl(fd, NSIOCGDROPS, &drops));
		CHECKED(&st, OP_GPACKETS, OK, "NSIOCGPACKETS",
			ioctl(fd, NSIOCGPACKETS, &packets));
		if (s->items + drops.count <= packets.count && s->lost <= drops.count)
			acct_ok++;
		else
			complain("cycle %d: %" PRIu64 " items + %llu drops > %llu packets or %" PRIu64 " lost > drops",
				 c, s->items, (unsigned long long)drops.count,
				 (unsigned long long)packets.count, s->lost);
		CHECKED(&st, OP_CLOSE, OK, "close", close(fd));
unload:
		/* close() has released the device: nothing holds the module */
		CHECKED(&st, OP_RMMOD, OK, "rmmod after close", rmmod());
	}
	note("cycles: took %.0f s, %.1f s of which waiting for blocks", now_s() - start,
	     wait_ns / 1e9);
	phase_report("cycles", &st);
	tap(waits_ok == CYCLES,
	    "cycles: %d of %d opens read a sysinfo and then blocks, seqs continuous (%" PRIu64
	    " blocks, %" PRIu64 " items in %" PRIu64 " reads)", (int)waits_ok, CYCLES,
	    blocks, items, reads);
	tap(acct_ok == CYCLES,
	    "cycles: items read + NSIOCGDROPS <= NSIOCGPACKETS, loss items <= drops, in %d of %d",
	    (int)acct_ok, CYCLES);
	stats_add(&total, &st);
	total_items += items;
	total_reads += reads;
	free(buf);
	free(s);
}

/* A quick measure of what calls cost here, traffic running. */
static void measure_speed(int *fd, struct speed *sp)
{
	static struct phase ph = { .name = "speed" };
	struct worker w;
	uint64_t t0;
	int i;

	ph.fd = *fd;
	ph.deadline = now_s() + 600;
	worker_init(&w, &ph, ROLE_IOCTL, CAPS_ALL, 0, 7);
	t0 = now_ns();
	for (i = 0; i < 60; i++)
		random_ioctl(&w, *fd);
	sp->ioctl_s = (now_ns() - t0) / 60e9;
	t0 = now_ns();
	for (i = 0; i < 200; i++) {
		random_poll(&w, *fd);
		random_fcntl(&w, *fd);
	}
	sp->cheap_s = (now_ns() - t0) / 400e9;
	t0 = now_ns();
	for (i = 0; i < 10; i++) {
		close(*fd);
		*fd = open(DEV, O_RDONLY | O_CLOEXEC);
	}
	sp->open_s = (now_ns() - t0) / 10e9;
	phase_report("speed", &w.st);
	stats_add(&total, &w.st);
	worker_fini(&w);
	note("speed: an ioctl %.0f us, a poll or fcntl %.0f us, open+close %.0f us%s",
	     sp->ioctl_s * 1e6, sp->cheap_s * 1e6, sp->open_s * 1e6,
	     access("/sys/kernel/debug/kmemleak", F_OK) ? "" : " (a debug kernel: kmemleak)");
}

static void figures(void)
{
	char dist[600];
	uint64_t ioctls = 0, longest = 0;
	int op, longest_op = 0;

	for (op = 0; op < NIOCTLS; op++) {
		ioctls += calls(&total, op);
		if (total.max_ns[op] > longest) {
			longest = total.max_ns[op];
			longest_op = op;
		}
	}
	note("figures: %" PRIu64 " ioctls, %" PRIu64 " reads (%" PRIu64 " of them returned %" PRIu64
	     " items), %" PRIu64 " polls, %" PRIu64 " fcntls, %" PRIu64 " opens (%" PRIu64
	     " succeeded), %" PRIu64 " closes",
	     ioctls, calls(&total, OP_READ), total_reads, total_items,
	     calls(&total, OP_POLL), calls(&total, OP_FCNTL), calls(&total, OP_OPEN),
	     total.n[OP_OPEN][0], calls(&total, OP_CLOSE));
	note("figures: module loaded %" PRIu64 " times and unloaded %" PRIu64
	     " times (%d load/capture/unload cycles; insmod tried %" PRIu64 ", rmmod %" PRIu64 ")",
	     total.n[OP_INSMOD][0], total.n[OP_RMMOD][0], CYCLES,
	     calls(&total, OP_INSMOD), calls(&total, OP_RMMOD));
	for (op = 0; op < OP_MAX; op++)
		if (calls(&total, op))
			note("figures: %s: %s; longest %.0f us", op_name[op],
			     answers_str(&total, op, dist, sizeof(dist)),
			     total.max_ns[op] / 1e3);
	note("figures: longest ioctl: %s, %.0f us", op_name[longest_op], longest / 1e3);
}

static int cmd_run(const char *ko)
{
	struct speed sp;
	struct traffic *t;
	int kofd, fd;
	long ret;

	kofd = open(ko, O_RDONLY | O_CLOEXEC);
	tap(kofd >= 0, "module %s readable", ko);
	if (kofd < 0)
		return 1;
	if (module_loaded())
		tap(rmmod() == 0, "an earlier " MODNAME " unloaded");
	ret = insmod(kofd, "");
	tap(ret == 0, "insmod %s%s%s", ko, ret ? ": " : "", ret ? strerror(errno) : "");
	fd = open(DEV, O_RDONLY | O_CLOEXEC);
	tap(fd >= 0, "open " DEV " right after insmod%s%s", fd < 0 ? ": " : "",
	    fd < 0 ? strerror(errno) : "");
	if (ret || fd < 0)
		return 1;
	ret = ioctl(fd, NSIOCGINFO, &info);
	tap(TAP_IS(!ret) && TAP_IS(info.abi_version == NSL_ABI_VERSION) &&
	    TAP_IS(info.block_size == SLOT) && TAP_IS(info.ncpus <= MAXCPUS) &&
	    TAP_IS(info.ring_max >= K_RING_MIN),
	    "NSIOCGINFO: abi %u, block %u bytes, %u CPUs, ring_max %llu",
	    info.abi_version, info.block_size, info.ncpus,
	    (unsigned long long)info.ring_max);
	if (ret || info.ncpus > MAXCPUS)
		return 1;
	note("%u CPUs online; core PMU: %s; %d dynamic PMU types", ncpus_online,
	     cpu_pmu ? "yes" : "no (hardware events: ENODEV)", npmu_types);

	t = traffic_start(0);
	tap(t != NULL, "traffic through the NIC and over loopback started");
	if (!t)
		return 1;
	measure_speed(&fd, &sp);
	phase_pinned(fd, kofd, &sp);
	phase_racing(kofd, &sp);
	if (module_loaded())
		tap(rmmod() == 0, "racing: the module unloads once nobody holds it");
	phase_cycles(kofd);
	traffic_finish(t, true);
	figures();
	close(kofd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}

/* ----------------------------------------------------- capture, emitted */

static uint64_t emitted_now(int fd)
{
	struct nsl_info i;

	return ioctl(fd, NSIOCGINFO, &i) ? UINT64_MAX : i.emitted;
}

/*
 * Collection is off: read until the core's emitted count has not moved
 * and nothing came for ten polls in a row (blocks of skbs instrumented
 * before the switch arrive as the skbs are freed).  A minute at most.
 */
static bool settle(int fd, struct stream *s, uint8_t *buf, bool *ok)
{
	uint64_t prev = emitted_now(fd), cur;
	int quiet = 0, rounds;

	for (rounds = 0; quiet < 10 && rounds < 1200; rounds++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long got = 0;

		if (poll(&p, 1, 50) == 1)
			got = read_all(fd, s, buf, ok);
		cur = emitted_now(fd);
		quiet = got || cur != prev ? 0 : quiet + 1;
		prev = cur;
	}
	return quiet >= 10;
}

static int open_quiet(uint8_t *buf)
{
	struct nsl_state off = { .state = NSL_STATE_OFF };
	struct stream *s = calloc(1, sizeof(*s));
	int fd = open(DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	bool ok = true;

	if (fd < 0 || !s || ioctl(fd, NSIOCSSTATE, &off) || !settle(fd, s, buf, &ok)) {
		fprintf(stderr, "stress: " DEV " did not go quiet: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(s);
	return fd;
}

static int cmd_emitted(void)
{
	uint8_t *buf = malloc(READ_BYTES);
	int fd = buf ? open_quiet(buf) : -1;

	if (fd < 0)
		return 1;
	printf("%" PRIu64 "\n", emitted_now(fd));
	close(fd);
	return 0;
}

/*
 * One reader, TCP and UDP through the NIC and over loopback with a byte
 * budget: every block the core emitted since the open was read or
 * counted as dropped, and the drops are exactly the loss items' sum.
 */
static int cmd_capture(void)
{
	struct nsl_state on = { .state = NSL_STATE_ON }, off = { .state = NSL_STATE_OFF };
	struct nsl_count drops = { 0 }, packets = { 0 };
	struct nsl_rcvbuf rb = { 0 };
	uint8_t *buf = malloc(READ_BYTES);
	struct stream *s = calloc(1, sizeof(*s));
	const char *ifname = getenv("NS_LOCAL_IF");
	uint64_t e0, e1;
	struct traffic *t;
	bool ok = true, quiet;
	char path[128];
	FILE *f;
	int fd, status;

	if (!buf || !s)
		return 1;
	/* nothing in flight, then a fresh open: its counters start at 0 */
	fd = open_quiet(buf);
	tap(fd >= 0, "capture: " DEV " quiet with collection off");
	if (fd < 0)
		return 1;
	close(fd);
	fd = open(DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	tap(fd >= 0, "capture: open " DEV);
	if (fd < 0)
		return 1;
	ioctl(fd, NSIOCGINFO, &info);
	e0 = emitted_now(fd);
	s->track = true;
	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", ifname ? ifname : "eth0");
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &s->nic_ifindex) != 1)
			s->nic_ifindex = 0;
		fclose(f);
	}
	/* a small ring, so that some blocks are dropped and marked */
	rb.bytes = 32 * SLOT;
	tap(!ioctl(fd, NSIOCSRCVBUF, &rb), "capture: a ring of 32 blocks per CPU");
	tap(!ioctl(fd, NSIOCSSTATE, &on), "capture: collection on");

	t = traffic_start(1 << 20);
	tap(t != NULL, "capture: traffic started, 1 MiB a flow");
	if (!t)
		return 1;
	/* read while the sources run: the last one done ends the loop */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int running = 0;

		if (poll(&p, 1, 100) == 1)
			read_all(fd, s, buf, &ok);
		for (int i = 0; i < NFLOWS; i++) {
			if (t->source[i] <= 0)
				continue;
			if (waitpid(t->source[i], &status, WNOHANG) == t->source[i]) {
				t->source_status[i] = status;
				t->source[i] = 0;
			} else {
				running++;
			}
		}
		if (!running)
			break;
	}
	traffic_finish(t, true);
	tap(!ioctl(fd, NSIOCSSTATE, &off), "capture: collection off");
	quiet = settle(fd, s, buf, &ok);
	tap(quiet, "capture: the stream went quiet");
	tap(TAP_IS(!ioctl(fd, NSIOCGDROPS, &drops)) &&
	    TAP_IS(!ioctl(fd, NSIOCGPACKETS, &packets)),
	    "capture: NSIOCGDROPS, NSIOCGPACKETS");
	e1 = emitted_now(fd);
	tap(TAP_IS(ok) && TAP_IS(s->sysinfos == 1),
	    "capture: %" PRIu64 " reads of whole items, one sysinfo first, seqs continuous per CPU%s%s",
	    s->reads, s->bad[0] ? ": " : "", s->bad);
	tap(packets.count == s->items + drops.count,
	    "capture: packets %llu == items read %" PRIu64 " (%" PRIu64 " blocks, %" PRIu64
	    " event records) + dropped %llu",
	    (unsigned long long)packets.count, s->items, s->blocks, s->events,
	    (unsigned long long)drops.count);
	tap(drops.count == s->lost,
	    "capture: dropped %llu == lost in %" PRIu64 " loss items %" PRIu64,
	    (unsigned long long)drops.count, s->losses, s->lost);
	tap(e1 - e0 == packets.count,
	    "capture: the core emitted %" PRIu64 " since the open == packets %llu",
	    e1 - e0, (unsigned long long)packets.count);
	tap(TAP_IS(s->nic_blocks > 0) && TAP_IS(s->lo_blocks > 0) &&
	    TAP_IS(s->rx_blocks > 0),
	    "capture: blocks through the NIC (%" PRIu64 "), over loopback (%" PRIu64
	    "), received (%" PRIu64 ")", s->nic_blocks, s->lo_blocks, s->rx_blocks);
	close(fd);
	printf("1..%d\n", ntests);
	return nfailed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	page = sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);
	/* no SA_RESTART: a reader asleep in read() returns EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	read_online_cpus();
	read_pmus();
	if (argc == 3 && !strcmp(argv[1], "run"))
		return cmd_run(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "capture"))
		return cmd_capture();
	if (argc == 2 && !strcmp(argv[1], "emitted"))
		return cmd_emitted();

	fprintf(stderr, "usage: %s run MODULE.ko | capture | emitted\n", argv[0]);
	return 2;
}
