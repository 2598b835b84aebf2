// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/ns, the misc device: one reader at a time (a second open() gets
 * EBUSY), which reads or maps the rings (ring.c), or both.  Opening resets
 * the rings and counters, so NSIOCGPACKETS and NSIOCGDROPS count from the
 * open, seqs restart at 0 on every CPU, and the first item read is a
 * struct nsl_sysinfo.  A resize (NSIOCSRCVBUF) before the reader's stream
 * begins -- before it reads or switches collection on -- resets them
 * again: what the rings held came before the stream, not out of it, and
 * is no drop of the reader's (nsdump -B resizes as it starts, on a host
 * whose traffic goes on).  Collection itself (NSIOCSSTATE) is left as it
 * was, on open and close.
 */

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/irqflags.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/netslice.h>
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/timex.h>
#include <linux/uaccess.h>
#ifdef CONFIG_X86
#include <asm/msr.h>
#endif

#include "agg.h"
#include "device.h"
#include "filter.h"
#include "receiver.h"
#include "ring.h"

struct nslm_reader {
	unsigned int cpu;	/* ring the next read starts at; nslm_ring_mutex */
	bool sysinfo_due;	/* not read yet; same lock, poll peeks */
};

static unsigned long device_busy;	/* bit 0: open; atomic bitops */

/*
 * The reader read, or switched collection on, since it opened: a resize
 * then turns what the rings hold into drops.  Cleared by open and read by
 * a resize under nslm_ring_mutex; set by read() there too, by NSIOCSSTATE
 * with WRITE_ONCE.  (A mapping needs no mark: no resize comes while the
 * rings are mapped.)
 */
static bool stream_begun;

bool nslm_device_is_open(void)
{
	return test_bit(0, &device_busy);
}

static int nslm_open(struct inode *inode, struct file *file)
{
	struct nslm_reader *reader;

	if (test_and_set_bit_lock(0, &device_busy))
		return -EBUSY;

	reader = kzalloc(sizeof(*reader), GFP_KERNEL);
	if (unlikely(!reader))
		goto err_reader;
	reader->cpu = cpumask_first(cpu_possible_mask);
	reader->sysinfo_due = true;

	mutex_lock(&nslm_ring_mutex);
	nslm_rings_reset();
	WRITE_ONCE(stream_begun, false);
	mutex_unlock(&nslm_ring_mutex);
	nslm_filter_reset();
	nsl_sample_set(0, 0);

	file->private_data = reader;
	return stream_open(inode, file);

err_reader:
	clear_bit_unlock(0, &device_busy);
	return -ENOMEM;
}

/* What a reader chose dies with it: filter, counters and event records. */
static void nslm_reader_choices_reset(void)
{
	static const struct nsl_record_opts no_records;
	static const struct nsl_events no_events;

	nslm_filter_reset();
	nsl_sample_set(0, 0);
	nsl_records_set(&no_records);
	nsl_counters_set_mode(NSL_MODE_DURATION);
	nsl_counters_set(&no_events);
}

static int nslm_release(struct inode *inode, struct file *file)
{
	struct nslm_reader *reader = file->private_data;

	nslm_reader_choices_reset();
	/* A capture that stopped turns the hooks off here, after its drain. */
	nslm_receiver_idle();
	kfree(reader);
	clear_bit_unlock(0, &device_busy);
	return 0;
}

static u64 read_tsc(void)
{
#ifdef CONFIG_X86
	return rdtsc_ordered();
#else
	return get_cycles();
#endif
}

/* The TSC and the wall clock at the same instant. */
static void read_clocks(u64 *tsc, u64 *realtime_ns)
{
	unsigned long flags;
	u64 before, after;

	/* The wall clock read is bracketed; take the TSC at its middle. */
	local_irq_save(flags);
	before = read_tsc();
	*realtime_ns = ktime_get_real_ns();
	after = read_tsc();
	local_irq_restore(flags);
	*tsc = before + (after - before) / 2;
}

/* The first item of every stream. */
static ssize_t put_sysinfo(char __user *buf)
{
	struct nsl_sysinfo si = {
		.hdr = {
			.kind = NSL_ITEM_SYSINFO,
			.size = sizeof(si),
		},
		.abi_version = NSL_ABI_VERSION,
		.byte_order = NSL_BYTE_ORDER_MARK,
		.tsc_khz = nsl_tsc_khz(),
		.ncpus = nr_cpu_ids,
	};

	read_clocks(&si.ref_tsc, &si.ref_realtime_ns);
	return copy_to_user(buf, &si, sizeof(si)) ? -EFAULT : sizeof(si);
}

static unsigned int next_ring(unsigned int cpu)
{
	cpu = cpumask_next(cpu, cpu_possible_mask);
	return cpu < nr_cpu_ids ? cpu : cpumask_first(cpu_possible_mask);
}

/*
 * Copy whole items to @buf, a batch from each ring in turn, until the
 * buffer is full or a whole round finds nothing that fits.
 */
static ssize_t drain(struct nslm_reader *reader, char __user *buf,
		     size_t count)
{
	unsigned int cpu = reader->cpu, idle = 0;
	size_t done = 0;
	ssize_t len;

	lockdep_assert_held(&nslm_ring_mutex);
	while (idle < num_possible_cpus()) {
		len = nslm_ring_read(cpu, buf + done, count - done);
		if (len < 0)
			return done ? done : len;
		if (len) {
			done += len;
			idle = 0;
		} else {
			idle++;
		}
		cpu = next_ring(cpu);
	}
	reader->cpu = cpu;
	return done;
}

/* Anything at all to read: what O_NONBLOCK takes. */
static bool readable(const struct nslm_reader *reader)
{
	return READ_ONCE(reader->sysinfo_due) || nslm_rings_have_items();
}

/* Worth waking for: a batch, or items that waited wakeup_us (ring.c). */
static bool batch_ready(const struct nslm_reader *reader)
{
	return READ_ONCE(reader->sysinfo_due) || nslm_rings_ready();
}

static ssize_t nslm_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	struct nslm_reader *reader = file->private_data;
	ssize_t ret, len;

	/* Never a partial item: the buffer must hold the largest one. */
	if (count < NSLM_ITEM_MAX)
		return -EINVAL;

	do {
		if (file->f_flags & O_NONBLOCK) {
			if (!readable(reader))
				return -EAGAIN;
		} else if (!batch_ready(reader)) {
			ret = wait_event_interruptible(nslm_ring_wait,
						       batch_ready(reader));
			if (ret)
				return ret;
		}
		if (mutex_lock_interruptible(&nslm_ring_mutex))
			return -ERESTARTSYS;
		WRITE_ONCE(stream_begun, true);
		ret = 0;
		if (reader->sysinfo_due) {
			ret = put_sysinfo(buf);
			if (ret > 0)
				WRITE_ONCE(reader->sysinfo_due, false);
		}
		if (ret >= 0) {
			len = drain(reader, buf + ret, count - ret);
			if (len >= 0 || !ret)
				ret += len;
		}
		mutex_unlock(&nslm_ring_mutex);
		/* Nothing but a PAD, or a mapper took them: wait again. */
		if (!ret && signal_pending(current))
			return -ERESTARTSYS;
	} while (!ret);	/* another thread of ours took the items */

	return ret;
}

/* A mapper polls when it has taken what there was: mark drops now. */
static __poll_t nslm_poll(struct file *file, poll_table *wait)
{
	poll_wait(file, &nslm_ring_wait, wait);
	nslm_rings_mark_losses();
	return batch_ready(file->private_data) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* A copy of the mapping (fork with MADV_DOFORK, mremap): one more. */
static void nslm_vm_open(struct vm_area_struct *vma)
{
	nslm_rings_mapped_again();
}

static void nslm_vm_close(struct vm_area_struct *vma)
{
	nslm_rings_unmapped();
}

/* The mapping stays whole and where it is: its close() ends it. */
static int nslm_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int nslm_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct nslm_vm_ops = {
	.open		= nslm_vm_open,
	.close		= nslm_vm_close,
	.fault		= nslm_rings_fault,
	.may_split	= nslm_vm_may_split,
	.mremap		= nslm_vm_mremap,
};

/* One mapping of every ring at once; see struct nsl_ring_ctl. */
static int nslm_mmap(struct file *file, struct vm_area_struct *vma)
{
	int ret;

	ret = nslm_rings_mmap(vma);
	if (!ret)
		vma->vm_ops = &nslm_vm_ops;
	return ret;
}

static int set_rcvbuf(void __user *argp)
{
	struct nsl_rcvbuf rb;
	int ret;

	if (copy_from_user(&rb, argp, sizeof(rb)))
		return -EFAULT;
	if (rb.flags || rb.pad)
		return -EINVAL;

	mutex_lock(&nslm_ring_mutex);
	ret = nslm_rings_resize(rb.bytes);
	if (!ret && !READ_ONCE(stream_begun))
		nslm_rings_reset();
	mutex_unlock(&nslm_ring_mutex);
	return ret;
}

static int set_state(void __user *argp)
{
	struct nsl_state st;

	if (copy_from_user(&st, argp, sizeof(st)))
		return -EFAULT;
	if (st.flags || (st.state != NSL_STATE_OFF && st.state != NSL_STATE_ON))
		return -EINVAL;

	if (st.state == NSL_STATE_ON)
		WRITE_ONCE(stream_begun, true);
	nslm_receiver_collect(st.state == NSL_STATE_ON);
	return 0;
}

/*
 * The caller may count these events (set_events() checked), but perf
 * hands out a CPU-wide counter only to a caller with CAP_PERFMON while
 * kernel.perf_event_paranoid > 0 (perf_allow_cpu()): software events,
 * which need CAP_NET_ADMIN alone, would fail with EACCES.  The counters
 * are asked for with the caller's credentials plus CAP_PERFMON.
 */
static int counters_set(const struct nsl_events *evs)
{
	const struct cred *old;
	struct cred *cred;
	int ret;

	cred = prepare_creds();
	if (unlikely(!cred))
		return -ENOMEM;
	cap_raise(cred->cap_effective, CAP_PERFMON);
	old = override_creds(cred);
	ret = nsl_counters_set(evs);
	revert_creds(old);
	put_cred(cred);
	return ret;
}

static int set_events(void __user *argp)
{
	struct nsl_events evs;
	const struct nsl_event *ev;
	u32 i;

	if (copy_from_user(&evs, argp, sizeof(evs)))
		return -EFAULT;
	if (evs.flags || evs.nevents > NSL_MAX_EVENTS)
		return -EINVAL;
	if (memchr_inv(&evs.ev[evs.nevents], 0,
		       (NSL_MAX_EVENTS - evs.nevents) * sizeof(*ev)))
		return -EINVAL;
	for (i = 0; i < evs.nevents; i++) {
		ev = &evs.ev[i];
		if (ev->flags)
			return -EINVAL;
		if (ev->type != PERF_TYPE_SOFTWARE && !perfmon_capable())
			return -EPERM;
	}

	return counters_set(&evs);
}

static int set_mode(void __user *argp)
{
	struct nsl_mode mode;

	if (copy_from_user(&mode, argp, sizeof(mode)))
		return -EFAULT;
	if (mode.flags ||
	    (mode.mode != NSL_MODE_DURATION && mode.mode != NSL_MODE_COUNT))
		return -EINVAL;

	return nsl_counters_set_mode(mode.mode);
}

static int get_calib(void __user *argp)
{
	struct nsl_calib *calib;
	int ret;

	calib = memdup_user(argp, sizeof(*calib));
	if (IS_ERR(calib))
		return PTR_ERR(calib);
	if ((calib->flags & ~NSL_CALIB_COLD) || calib->nevents ||
	    calib->cpu >= nr_cpu_ids)
		ret = -EINVAL;
	else
		ret = nsl_calibrate(calib);
	if (!ret && copy_to_user(argp, calib, sizeof(*calib)))
		ret = -EFAULT;
	kfree(calib);
	return ret;
}

static int set_records(void __user *argp)
{
	struct nsl_record_opts opts;

	if (copy_from_user(&opts, argp, sizeof(opts)))
		return -EFAULT;
	if ((opts.flags & ~NSL_REC_ALL) || opts.pad)
		return -EINVAL;

	return nsl_records_set(&opts);
}

static int get_count(void __user *argp, bool drops)
{
	struct nslm_totals totals;
	struct nsl_count c;

	nslm_rings_totals(&totals);
	c.count = drops ? totals.drops : totals.packets;
	return copy_to_user(argp, &c, sizeof(c)) ? -EFAULT : 0;
}

static int get_info(void __user *argp)
{
	struct nsl_info info = {
		.abi_version = NSL_ABI_VERSION,
		.tsc_khz = nsl_tsc_khz(),
		.block_size = sizeof(struct nsl_block),
		.ncpus = nr_cpu_ids,
		.max_records = NSL_MAX_RECORDS,
		.max_events = NSL_MAX_EVENTS,
		.ring_bytes = nslm_rings_bytes(),
		.ring_max = nslm_rings_max_bytes(),
		.emitted = nsl_emitted(),
		.nomem = nsl_nomem(),
	};

	read_clocks(&info.ref_tsc, &info.ref_realtime_ns);
	return copy_to_user(argp, &info, sizeof(info)) ? -EFAULT : 0;
}

static int set_filter(void __user *argp)
{
	struct nsl_filter f;

	if (copy_from_user(&f, argp, sizeof(f)))
		return -EFAULT;
	return nslm_filter_set(&f);
}

static int get_filtered(void __user *argp)
{
	struct nsl_count c = { .count = nslm_filter_rejected() };

	return copy_to_user(argp, &c, sizeof(c)) ? -EFAULT : 0;
}

static int set_sample(void __user *argp)
{
	struct nsl_sample s;

	if (copy_from_user(&s, argp, sizeof(s)))
		return -EFAULT;
	if (s.taken || s.skipped)
		return -EINVAL;
	return nsl_sample_set(s.rate, s.flags);
}

static int get_sample(void __user *argp)
{
	struct nsl_sample s;

	nsl_sample_get(&s);
	return copy_to_user(argp, &s, sizeof(s)) ? -EFAULT : 0;
}

static int set_agg(void __user *argp)
{
	struct nsl_agg conf;

	if (copy_from_user(&conf, argp, sizeof(conf)))
		return -EFAULT;
	return nslm_agg_set(&conf);
}

static int get_agg(void __user *argp)
{
	return nslm_agg_read(argp);
}

static int get_packets(void __user *argp)
{
	return get_count(argp, false);
}

static int get_drops(void __user *argp)
{
	return get_count(argp, true);
}

static long nslm_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	int (*handler)(void __user *argp);

	switch (cmd) {
	case NSIOCSRCVBUF:
		handler = set_rcvbuf;
		break;
	case NSIOCSSTATE:
		handler = set_state;
		break;
	case NSIOCSEVENT:
		handler = set_events;
		break;
	case NSIOCSEMODE:
		handler = set_mode;
		break;
	case NSIOCGPACKETS:
		handler = get_packets;
		break;
	case NSIOCGDROPS:
		handler = get_drops;
		break;
	case NSIOCGINFO:
		handler = get_info;
		break;
	case NSIOCGCALIB:
		handler = get_calib;
		break;
	case NSIOCSRECORDS:
		handler = set_records;
		break;
	case NSIOCSFILTER:
		handler = set_filter;
		break;
	case NSIOCGFILTERED:
		handler = get_filtered;
		break;
	case NSIOCSSAMPLE:
		handler = set_sample;
		break;
	case NSIOCGSAMPLE:
		handler = get_sample;
		break;
	case NSIOCSAGG:
		handler = set_agg;
		break;
	case NSIOCGAGG:
		handler = get_agg;
		break;
	default:
		/* Not ours, whoever asks. */
		return -ENOTTY;
	}
	/* Ours only for the network administrator. */
	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	return handler((void __user *)arg);
}

static const struct file_operations nslm_fops = {
	.owner		= THIS_MODULE,
	.open		= nslm_open,
	.release	= nslm_release,
	.read		= nslm_read,
	.poll		= nslm_poll,
	.mmap		= nslm_mmap,
	.unlocked_ioctl	= nslm_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice nslm_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "ns",
	.fops		= &nslm_fops,
	.mode		= 0600,
};

int nslm_device_init(void)
{
	return misc_register(&nslm_misc);
}

void nslm_device_uninit(void)
{
	misc_deregister(&nslm_misc);
}
