// SPDX-License-Identifier: GPL-2.0
/* stress: what the code allows */
#include "stress.h"

const char *const stress_caps_name[] = { "all caps", "CAP_NET_ADMIN only", "no caps" };

/* Only the calling thread's capabilities change (capset is per task). */
int stress_drop_caps(enum caps caps)
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

/*
 * Programs NSIOCSFILTER may get: each accepts every block (so readers
 * still see traffic), the kernel's checker takes them; and garbage.
 */
const struct sock_filter stress_accept_all[] = {
	{ BPF_RET | BPF_K, 0, 0, 0xffffffff },
};
const struct sock_filter stress_accept_udp[] = {
	{ BPF_LD | BPF_B | BPF_ABS, 0, 0, 9 },		/* IPv4 protocol */
	{ BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 17 },
	{ BPF_RET | BPF_K, 0, 0, 0xffff },
	{ BPF_RET | BPF_K, 0, 0, 0xffff },		/* and the rest too */
};

size_t stress_op_size(enum op op)
{
	return op == OP_UNKNOWN ? sizeof(union arg) : _IOC_SIZE(stress_op_cmd[op]);
}

static errset expect_rcvbuf(const struct nsl_rcvbuf *rb)
{
	if (rb->flags || rb->pad)
		return E(EINVAL);
	if (rb->bytes < K_RING_MIN)
		return E(EINVAL);
	if (rb->bytes > stress_info.ring_max)
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
	    c->cpu >= stress_info.ncpus)
		return E(EINVAL);
	if (c->reps > K_CALIB_MAX || (c->reps && c->reps < 16))
		return E(EINVAL);
	if (c->cpu >= MAXCPUS || !stress_cpu_online[c->cpu])
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
		return stress_cpu_pmu ? pmu_says : E(ENODEV);
	default:
		for (int i = 0; i < stress_nprobe_pmu_types; i++)
			if (e->type == stress_probe_pmu_type[i])
				return pmu_says | E(EFAULT);
		return stress_pmu_type_exists(e->type) ? pmu_says : E(ENODEV);
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
	if (insns == stress_accept_all || insns == stress_accept_udp)
		return OK | E(ENOMEM);
	return E(EFAULT) | E(EINVAL) | E(ENOMEM) | OK;
}

/* Everything an ioctl may answer, given who asks and with what. */
errset stress_expect_ioctl(enum op op, enum caps caps, enum ptr p,
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
	if (!stress_ptr_readable(p))
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
