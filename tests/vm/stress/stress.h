/* SPDX-License-Identifier: GPL-2.0 */
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
 *  cycles  100 times (NS_STRESS_CYCLES): insmod, open, NSIOCSSTATE on, read until a
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
#ifndef _NS_STRESS_H
#define _NS_STRESS_H

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
#include "../itemstream.h"

/* A failed term's name is one whole line among the other threads' */
#define TAP_SAY(fmt, ...) stress_say(fmt, __VA_ARGS__)
#include "../../tap.h"

#define DEV		"/dev/ns"
#define MODNAME		"netslice"
#define SLOT		sizeof(struct nsl_block)	/* largest item */
#define MAXCPUS		256
/*
 * Load/capture/unload cycles: NS_STRESS_CYCLES (1..1000), else 100.  On
 * the debug kernel t_stress.sh asks for fewer: KASAN and kmemleak make a
 * cycle take five seconds there, most of them in rmmod.
 */
#define CYCLES_DEFAULT	100
extern int stress_cycles;
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

struct stats {
	uint64_t n[OP_MAX][NERR];	/* answers: [op][0 or errno] */
	uint64_t bad[OP_MAX];		/* answers the code does not allow */
	uint64_t max_ns[OP_MAX];	/* longest call */
	uint64_t sum_ns[OP_MAX];	/* all calls */
	errset allowed[OP_MAX];		/* every answer that was allowed */
	uint64_t harness;		/* the test itself went wrong */
};

/*
 * Time @call, count its answer (errno taken right after it, not in an
 * argument list, whose order of evaluation C leaves open); its value.
 */
#define CHECKED(st, op, allowed, what, call) ({				\
		uint64_t t0_ = stress_now_ns();				\
		long r_ = (call);					\
		int e_ = errno;						\
									\
		stress_answer((st), (op), r_, e_, (allowed), stress_now_ns() - t0_, (what)); \
		r_;							\
	})

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

/* Where an argument pointer points. */
enum ptr {
	P_RW, P_RO, P_EDGE, P_NULL, P_LOW, P_HOLE, P_KERNEL, P_NONCANON,
	P_TOP, P_MAX
};

enum caps { CAPS_ALL, CAPS_NETADMIN, CAPS_NONE };

union arg {
	struct nsl_rcvbuf rb;
	struct nsl_state st;
	struct nsl_events evs;
	struct nsl_mode mode;
	struct nsl_count cnt;
	struct nsl_info stress_info;
	struct nsl_calib calib;
	struct nsl_record_opts rec;
	struct nsl_filter filt;
	uint8_t raw[512];
};

enum flow {
	F_NIC_TX, F_NIC_RX, F_LO_TCP, F_NIC_UDP, F_LO_UDP, NFLOWS
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

enum role { ROLE_IOCTL, ROLE_READ, ROLE_POLL, ROLE_FCNTL, ROLE_OPEN, ROLE_RACER };

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
	struct ns_stream s;		/* racer: per open; else shared fd */
	uint8_t *rbuf;			/* scratch for read results */
	uint64_t last_packets, last_drops, last_emitted;
	int epfd;
	bool nonblock;			/* racer: its descriptor's O_NONBLOCK */
	bool writable, readable;	/* racer: its descriptor's access */
};

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

struct speed {
	double ioctl_s, cheap_s, open_s;
};


/* answers.c */
extern const char *const stress_op_name[OP_MAX];
extern const unsigned long stress_op_cmd[NIOCTLS - 1];
void stress_stats_add(struct stats *to, const struct stats *from);
uint64_t stress_calls(const struct stats *st, int op);
char *stress_errset_str(errset s, char *buf, size_t len);
char *stress_answers_str(const struct stats *st, int op, char *buf, size_t len);
void stress_vline(const char *prefix, const char *fmt, va_list ap);
__attribute__((format(printf, 1, 2)))
void stress_say(const char *fmt, ...);
void stress_complain(const char *fmt, ...);
bool stress_answer(struct stats *st, enum op op, long ret, int err,
		   errset allowed, uint64_t ns, const char *what);

/* basics.c */
extern long stress_page;
extern struct nsl_info stress_info;
extern bool stress_cpu_online[MAXCPUS];
extern unsigned int stress_ncpus_online;
extern bool stress_cpu_pmu;
extern uint32_t stress_pmu_type[64];
extern int stress_npmu_types;
extern uint32_t stress_probe_pmu_type[2];
extern int stress_nprobe_pmu_types;
uint64_t stress_now_ns(void);
double stress_now_s(void);
int stress_cycles_from_env(void);
uint64_t stress_rnd(uint64_t *s);
uint64_t stress_below(uint64_t *s, uint64_t n);
bool stress_chance(uint64_t *s, unsigned int pct);
void stress_note(const char *fmt, ...);
void stress_read_online_cpus(void);
void stress_read_pmus(void);
bool stress_pmu_type_exists(uint32_t type);
bool stress_module_loaded(void);
long stress_insmod(int kofd, const char *params);
long stress_rmmod(void);

/* memory.c */
int stress_bufs_init(struct bufs *b);
bool stress_hole_still_unmapped(const struct bufs *b);
extern const char *const stress_ptr_name[P_MAX];
enum ptr stress_pick_ptr(uint64_t *r);
void *stress_place(struct bufs *b, uint64_t *r, enum ptr p,
		   const void *content, size_t size);
bool stress_ptr_readable(enum ptr p);

/* allows.c */
extern const char *const stress_caps_name[];
int stress_drop_caps(enum caps caps);
extern const struct sock_filter stress_accept_all[];
extern const struct sock_filter stress_accept_udp[];
size_t stress_op_size(enum op op);
errset stress_expect_ioctl(enum op op, enum caps caps, enum ptr p,
			   const union arg *a);

/* args.c */
void stress_make_arg(uint64_t *r, enum op op, union arg *a);
unsigned long stress_unknown_cmd(uint64_t *r);
void stress_describe_arg(enum op op, const union arg *a, char *buf, size_t len);


/* traffic.c */
void stress_close_fds(int keep);
struct traffic *stress_traffic_start(uint64_t budget);
void stress_traffic_finish(struct traffic *t, bool check);

/* workers.c */
extern const char *const stress_role_name[];
long stress_call_ioctl(struct worker *w, int fd, enum op op, unsigned long cmd,
		       enum ptr p, const union arg *a, const char *label);
void stress_random_ioctl(struct worker *w, int fd);
void stress_random_poll(struct worker *w, int fd);
void stress_random_fcntl(struct worker *w, int fd);
void stress_on_signal(int sig);
void *stress_worker_main(void *arg);
int stress_worker_init(struct worker *w, struct phase *ph, enum role role,
		       enum caps caps, uint64_t iters, uint64_t seed);
void stress_worker_fini(struct worker *w);

/* loader.c */
struct loader *stress_loader_start(int kofd, bool pinned, uint64_t max_rounds);
void stress_loader_stop(struct loader *l, struct stats *into);

/* phases.c */
long stress_read_all(int fd, struct ns_stream *s, uint8_t *buf, bool *ok);
int stress_cmd_run(const char *ko);

#endif /* _NS_STRESS_H */
