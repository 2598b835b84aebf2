/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel API for net/netslice/record.h (and the
 * linux/netslice.h and core.h it includes) to build in user space: one
 * thread, the CPU it runs on, the TSC read with the same instruction.
 */
#ifndef SHIM_H
#define SHIM_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sched.h>
#include <x86intrin.h>
#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;

#define likely(c)	__builtin_expect(!!(c), 1)
#define unlikely(c)	__builtin_expect(!!(c), 0)
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile __typeof__(x) *)&(x) = (v))
#define barrier()	__asm__ __volatile__("" : : : "memory")
#define noinline	__attribute__((__noinline__))
#define __maybe_unused	__attribute__((__unused__))
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define MIN(a, b)	((a) < (b) ? (a) : (b))
#define BIT(n)		(1UL << (n))
#define U16_MAX		((u16)~0U)
#define U32_MAX		((u32)~0U)
#define fallthrough	__attribute__((__fallthrough__))
#define container_of_const(p, t, m) \
	((const t *)((const char *)(p) - offsetof(t, m)))

struct static_key_false { int enabled; };
#define DECLARE_STATIC_KEY_FALSE(n)	extern struct static_key_false n
#define static_branch_unlikely(k)	unlikely((k)->enabled)
#define DECLARE_PER_CPU(t, n)		extern t n
#define DECLARE_PER_CPU_READ_MOSTLY(t, n)	extern t n
#define this_cpu_write(v, x)		((v) = (x))
/*
 * The one per-CPU value the hot path reads, a log entry's CPU part
 * (nsl_log_cpu, core.c), follows shim_cpu: the tests' expected entries
 * (nsl_log_entry()) check the two agree.
 */
#define this_cpu_read(v)		((void)&(v), (u32)shim_cpu << 16)

/* linux/skbuff.h: what linux/netslice.h's inline hooks read. */
enum skb_ext_id { SKB_EXT_NETSLICE };
struct skb_ext { u8 offset[1]; };
struct sk_buff {
	u8 active_extensions;
	u8 nsl_passed:1;
	struct skb_ext *extensions;
};
static inline bool skb_ext_exist(const struct sk_buff *skb, enum skb_ext_id id)
{
	return skb->active_extensions & (1 << id);
}
/* core.h's nsl_block_of(); hotpath.c mimics the lookup (fake_find()). */
void *skb_ext_find(const struct sk_buff *skb, enum skb_ext_id id);

/* linux/sock_diag.h: what core.h's nsl_conn() reads (no test calls it). */
typedef struct { long long counter; } atomic64_t;
struct sock { atomic64_t sk_cookie; };
static inline long long atomic64_read(const atomic64_t *v)
{
	return v->counter;
}
u64 sock_gen_cookie(struct sock *sk);

/* The CPU at START and STOP; the harness pins itself to one. */
extern int shim_cpu;
#define raw_smp_processor_id()		shim_cpu

/*
 * The kernel's rdtsc(), not serialising.  The semantic tests (built with
 * SHIM_ORDERED_TSC) compare times read in program order, which a plain
 * rdtsc may execute out of: there it is fenced, as rdtsc_ordered() is,
 * or it is shim_tsc, when a test sets the time a hook reads.
 */
extern u64 shim_tsc;
static inline u64 rdtsc(void)
{
#ifdef SHIM_ORDERED_TSC
	u64 t;

	/* a time the test chose, where it set one */
	if (shim_tsc)
		return shim_tsc;
	_mm_lfence();
	t = __rdtsc();
	_mm_lfence();
	return t;
#else
	return __rdtsc();
#endif
}

/*
 * linux/timex.h: the TSC where the kernel's x86 code is not built (the
 * semantic tests), so that the time a hook reads is the test's.
 */
static inline u64 get_cycles(void)
{
	return rdtsc();
}
#endif
