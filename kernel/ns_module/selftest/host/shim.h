/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel API for ring.c to run in user space, single
 * CPU, single thread: locks are no-ops, allocations are malloc().
 */
#ifndef SHIM_H
#define SHIM_H
#include <errno.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
typedef uint8_t __u8; typedef uint16_t __u16; typedef uint32_t __u32; typedef uint64_t __u64;
typedef uint8_t u8; typedef uint16_t u16; typedef uint32_t u32; typedef uint64_t u64;
#define U32_MAX UINT32_MAX
#define U64_MAX UINT64_MAX
#define INT_MAX 0x7fffffff
#include <stddef.h>
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#define container_of(p, t, m) ((t *)((char *)(p) - offsetof(t, m)))
#define PAGE_SIZE 4096
typedef int spinlock_t;
struct mutex { int x; };
struct wait_queue_head { int x; };
struct irq_work { int x; };
#define DEFINE_MUTEX(n) struct mutex n
#define DECLARE_WAIT_QUEUE_HEAD(n) struct wait_queue_head n
#define DEFINE_IRQ_WORK(n, f) struct irq_work n
#define IRQ_WORK_INIT_LAZY(f) { 0 }
#define DEFINE_PER_CPU(t, n) t n
#define raw_cpu_ptr(p) (p)
#define per_cpu_ptr(p, c) (p)
#define spin_lock_init(l) (*(l) = 0)
#define spin_lock_irqsave(l, f) ((f) = 0, *(l) = 1)
#define spin_unlock_irqrestore(l, f) (*(l) = 0)
#define lockdep_assert_held(l) do { } while (0)
#define WRITE_ONCE(x, v) ((x) = (v))
#define READ_ONCE(x) (x)
#define WARN_ON_ONCE(c) (c)
#define unlikely(c) (c)
#define get_cycles() 42
#define wake_up_interruptible(q) do { } while (0)
#define wq_has_sleeper(q) 0
#define irq_work_queue(w) do { } while (0)
#define irq_work_sync(w) do { } while (0)
#define GFP_KERNEL 0
#define __GFP_NOWARN 0
#define kvmalloc(s, g) malloc(s)
#define kvmalloc_node(s, g, n) malloc(s)
#define kvfree free
#define vmalloc(s) malloc(s)
static inline void *vmalloc_user(size_t s)
{
	void *p = aligned_alloc(4096, (s + 4095) / 4096 * 4096);

	return p ? memset(p, 0, s) : NULL;
}
#define vfree free
#define PAGE_MASK (~(unsigned long)(PAGE_SIZE - 1))
#define SZ_1G 0x40000000UL
typedef int64_t s64; typedef int64_t __s64;
typedef long ssize_t;
typedef struct { int v; } atomic_t;
#define ATOMIC_INIT(i) { i }
static inline int atomic_cmpxchg(atomic_t *a, int old, int new)
{
	int cur = a->v;

	if (cur == old)
		a->v = new;
	return cur;
}
#define atomic_set(a, i) ((a)->v = (i))
#define atomic_set_release(a, i) ((a)->v = (i))
#define atomic_inc(a) ((a)->v++)
#define atomic_dec(a) ((a)->v--)
#define barrier() __asm__ __volatile__("" ::: "memory")
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define need_resched() 0
#define irqs_disabled() 0
#define cond_resched() do { } while (0)
#define smp_load_acquire(p) __atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n(p, v, __ATOMIC_RELEASE)
#define rcu_read_lock() do { } while (0)
#define rcu_read_unlock() do { } while (0)
#define synchronize_rcu() do { } while (0)
#define cpus_read_lock() do { } while (0)
#define cpus_read_unlock() do { } while (0)
#define cpu_online(c) 0
typedef void (*smp_call_func_t)(void *info);
#define smp_call_function_single(c, f, a, w) (f)(a)
#define local_irq_save(f) ((f) = 0)
#define local_irq_restore(f) ((void)(f))
#define this_cpu_ptr(p) (p)
static inline uint64_t div_u64_rem(uint64_t a, uint32_t b, uint32_t *r)
{
	*r = a % b;
	return a / b;
}
struct vm_area_struct {
	unsigned long vm_start, vm_end, vm_pgoff, vm_flags;
};
#define VM_SHARED 0x8UL
#define VM_MAYSHARE 0x80UL
#define VM_DONTCOPY 0x20000UL
#define vm_flags_set(v, f) ((v)->vm_flags |= (f))
#define VM_DONTEXPAND 0x40000UL
#define VM_DONTDUMP 0x4000000UL
#define VM_MIXEDMAP 0x10000000UL
#define PAGE_SHIFT 12
#define SZ_64K 0x10000UL
typedef unsigned int vm_fault_t;
#define VM_FAULT_OOM 0x1
#define VM_FAULT_SIGBUS 0x2
#define VM_FAULT_NOPAGE 0x100
struct page;
struct vm_fault {
	struct vm_area_struct *vma;
	unsigned long pgoff, address;
	struct page *page;
};
#define vmalloc_to_page(a) ((struct page *)(a))
#define get_page(p) ((void)(p))
/* The fault handler is the kernel's to call: here it only compiles. */
static inline int vm_insert_pages(struct vm_area_struct *vma,
				  unsigned long addr, struct page **pages,
				  unsigned long *num)
{
	(void)vma; (void)addr; (void)pages;
	*num = 0;
	return 0;
}
#define vmf_error(e) ((e) == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS)
#define kfree free
#define kcalloc(n, s, g) calloc(n, s)
#define nr_cpu_ids 1
#define num_possible_cpus() 1
#define for_each_possible_cpu(c) for ((c) = 0; (c) < 1; (c)++)
#define cpu_to_node(c) 0
#define totalram_pages() 262144UL
#define div_u64(a, b) ((a) / (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define __user
static inline unsigned long copy_to_user(void *to, const void *from,
					 unsigned long n)
{
	memcpy(to, from, n);
	return 0;
}
#define ALIGN(x, a) (((x) + (a) - 1) / (a) * (a))
#define mutex_lock(m) do { } while (0)
#define mutex_unlock(m) do { } while (0)
#define __init
#define module_param(n, t, p)
#define MODULE_PARM_DESC(n, d)
/* A parameter's setter is never called here: it only has to compile. */
struct kernel_param { void *arg; };
struct kernel_param_ops {
	int (*set)(const char *val, const struct kernel_param *kp);
	int (*get)(char *buf, const struct kernel_param *kp);
};
static inline int param_set_uint(const char *val, const struct kernel_param *kp)
{
	return sscanf(val, "%u", (unsigned int *)kp->arg) == 1 ? 0 : -EINVAL;
}
static inline int param_get_uint(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%u\n", *(unsigned int *)kp->arg);
}
#define module_param_cb(n, ops, arg, p)
struct timer_list { int pending; };
#define DEFINE_TIMER(n, f) struct timer_list n
#define timer_pending(t) ((t)->pending)
#define mod_timer(t, e) ((t)->pending = 1)
#define timer_shutdown_sync(t) ((t)->pending = 0)
#define jiffies 0UL
#define usecs_to_jiffies(u) ((u) / 1000 + 1)
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define pr_err(...) printf(__VA_ARGS__)
#define pr_info(...) printf(__VA_ARGS__)
#endif
