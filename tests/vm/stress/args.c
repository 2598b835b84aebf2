// SPDX-License-Identifier: GPL-2.0
/* stress: argument makers */
#include "stress.h"

static uint64_t pick_ring_bytes(uint64_t *r)
{
	switch (stress_below(r, 16)) {
	case 0:
		return stress_below(r, K_RING_MIN);	/* too small */
	case 1:
		return K_RING_MIN - 1 + stress_below(r, 3);
	case 2:
		/* the largest there is: rarely, it is a quarter of memory */
		return stress_chance(r, 5) ? stress_info.ring_max : stress_info.ring_max + 1 +
			stress_below(r, 2 * SLOT);
	case 3:
		return stress_chance(r, 50) ? UINT64_MAX : stress_rnd(r);
	case 4:
		return 1ULL << (32 + stress_below(r, 32));
	default:
		return K_RING_MIN + stress_below(r, 4 << 20);
	}
}

static uint64_t pick_config(uint64_t *r, uint64_t max)
{
	switch (stress_below(r, 8)) {
	case 0:
		return stress_rnd(r);
	case 1:
		return max + stress_below(r, 3);
	default:
		return stress_below(r, max);
	}
}

static void make_event(uint64_t *r, struct nsl_event *ev)
{
	uint64_t x = stress_below(r, 100);

	memset(ev, 0, sizeof(*ev));
	if (x < 35) {
		ev->type = PERF_TYPE_SOFTWARE;
		ev->config = pick_config(r, K_SW_MAX);
	} else if (x < 50) {
		ev->type = PERF_TYPE_HARDWARE;
		ev->config = pick_config(r, K_HW_MAX);
		if (stress_chance(r, 25))	/* an extended PMU type */
			ev->config |= (uint64_t)(stress_npmu_types && stress_chance(r, 50) ?
				stress_pmu_type[stress_below(r, stress_npmu_types)] :
				stress_below(r, 16)) << 32;
	} else if (x < 60) {
		ev->type = PERF_TYPE_HW_CACHE;
		ev->config = pick_config(r, K_CACHE_MAX) & 0xff;
		ev->config |= (pick_config(r, K_CACHE_OP_MAX) & 0xff) << 8;
		ev->config |= (pick_config(r, K_CACHE_RESULT_MAX) & 0xff) << 16;
		if (stress_chance(r, 10))
			ev->config |= stress_rnd(r) << 24;
	} else if (x < 68) {
		ev->type = PERF_TYPE_RAW;
		ev->config = stress_rnd(r);
	} else if (x < 76) {
		ev->type = stress_chance(r, 50) ? PERF_TYPE_TRACEPOINT :
					   PERF_TYPE_BREAKPOINT;
		ev->config = stress_below(r, 4);
	} else if (x < 86 && stress_npmu_types) {
		ev->type = stress_pmu_type[stress_below(r, stress_npmu_types)];
		ev->config = pick_config(r, 8);
	} else {
		static const uint32_t odd[] = { K_TYPE_MAX, 63, 0x7fffffff,
						0xffffffff };

		ev->type = stress_chance(r, 50) ? odd[stress_below(r, 4)] : stress_rnd(r);
		ev->config = stress_rnd(r);
	}
	if (stress_chance(r, 15))
		ev->config1 = stress_rnd(r);
	if (stress_chance(r, 15))
		ev->config2 = stress_chance(r, 50) ? 0xffffffff81000000ULL : stress_rnd(r);
	if (stress_chance(r, 5))
		ev->flags = 1U << stress_below(r, 32);
}

static void make_calib(uint64_t *r, struct nsl_calib *c)
{
	static const uint32_t big[] = { K_CALIB_MAX + 1, UINT32_MAX,
					0x80000000 };

	memset(c, 0, sizeof(*c));
	c->cpu = stress_chance(r, 85) ? stress_below(r, stress_info.ncpus) :
		 stress_chance(r, 50) ? stress_info.ncpus + stress_below(r, 3) : (uint32_t)stress_rnd(r);
	switch (stress_below(r, 20)) {
	case 0:
		c->reps = 0;		/* the default, 4096 */
		break;
	case 1:
	case 2:
		c->reps = 1 + stress_below(r, 15);
		break;
	case 3:
	case 4:
		c->reps = stress_chance(r, 50) ? big[stress_below(r, 3)] :
			  K_CALIB_MAX + 1 + stress_below(r, 1ULL << 31);
		break;
	case 5:
		c->reps = 16;
		break;
	default:
		c->reps = 16 + stress_below(r, 240);
	}
	if (stress_chance(r, 5))
		c->flags = 1U << stress_below(r, 32);
	if (stress_chance(r, 5))
		c->nevents = 1 + stress_below(r, 8);
	if (stress_chance(r, 10))	/* out fields: the kernel ignores them */
		c->cost[stress_below(r, NSL_C_MAX)].ticks = stress_rnd(r);
}

static void make_filter(uint64_t *r, struct nsl_filter *f)
{
	static uint8_t junk[4096 * 8];
	uint32_t i;

	switch (stress_below(r, 8)) {
	case 0:
		f->len = 0;
		break;
	case 1:
	case 2:
		f->insns = (uintptr_t)stress_accept_all;
		f->len = 1;
		break;
	case 3:
		f->insns = (uintptr_t)stress_accept_udp;
		f->len = 4;
		break;
	case 4:		/* garbage the checker must refuse (or take) */
		for (i = 0; i < 64; i++)
			((uint64_t *)junk)[stress_below(r, sizeof(junk) / 8)] = stress_rnd(r);
		f->insns = (uintptr_t)junk;
		f->len = 1 + stress_below(r, NSL_FILTER_MAX_INSNS);
		break;
	case 5:		/* too long, or no such memory */
		f->len = stress_chance(r, 50) ? NSL_FILTER_MAX_INSNS + 1 + stress_below(r, 1000) :
					 (uint32_t)stress_rnd(r);
		f->insns = (uintptr_t)stress_accept_all;
		break;
	default:
		f->insns = stress_chance(r, 50) ? stress_rnd(r) : 0xffffffff81000000ULL;
		f->len = 1 + stress_below(r, 16);
	}
	if (stress_chance(r, 5))
		f->flags = 1U << stress_below(r, 32);
}

/* Contents for an ioctl's argument: mostly plausible, sometimes not. */
void stress_make_arg(uint64_t *r, enum op op, union arg *a)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	if (stress_chance(r, 4) || op == OP_UNKNOWN || op == OP_GPACKETS ||
	    op == OP_GDROPS || op == OP_GINFO || op == OP_GFILTERED) {
		for (i = 0; i < sizeof(a->raw) / 8; i++)
			((uint64_t *)a->raw)[i] = stress_rnd(r);
		return;
	}
	switch (op) {
	case OP_SRCVBUF:
		a->rb.bytes = pick_ring_bytes(r);
		if (stress_chance(r, 5))
			a->rb.flags = 1U << stress_below(r, 32);
		if (stress_chance(r, 5))
			a->rb.pad = stress_rnd(r);
		break;
	case OP_SSTATE:
		/* mostly on: a reader should have something to read */
		a->st.state = stress_chance(r, 70) ? NSL_STATE_ON :
			      stress_chance(r, 40) ? NSL_STATE_OFF : 2 + stress_below(r, 0xffffffff);
		if (stress_chance(r, 8))
			a->st.flags = 1U << stress_below(r, 32);
		break;
	case OP_SEVENT:
		a->evs.nevents = stress_chance(r, 85) ? stress_below(r, NSL_MAX_EVENTS + 1) :
				 stress_chance(r, 50) ? NSL_MAX_EVENTS + 1 + stress_below(r, 4) :
						 (uint32_t)stress_rnd(r);
		for (i = 0; i < a->evs.nevents && i < NSL_MAX_EVENTS; i++)
			make_event(r, &a->evs.ev[i]);
		if (stress_chance(r, 5) && a->evs.nevents < NSL_MAX_EVENTS)
			a->evs.ev[NSL_MAX_EVENTS - 1].config2 = stress_rnd(r) | 1;
		if (stress_chance(r, 5))
			a->evs.flags = 1U << stress_below(r, 32);
		break;
	case OP_SEMODE:
		a->mode.mode = stress_chance(r, 85) ? stress_below(r, 2) : 2 + stress_below(r, 1000);
		if (stress_chance(r, 8))
			a->mode.flags = 1U << stress_below(r, 32);
		break;
	case OP_GCALIB:
		make_calib(r, &a->calib);
		break;
	case OP_SRECORDS:
		a->rec.flags = stress_chance(r, 85) ? stress_below(r, NSL_REC_ALL + 1) :
					       (uint32_t)stress_rnd(r);
		if (stress_chance(r, 5))
			a->rec.pad = 1U << stress_below(r, 32);
		break;
	case OP_SFILTER:
		make_filter(r, &a->filt);
		break;
	default:
		break;
	}
}

/* A command that is not ours: the VFS's own (FIONBIO, FIFREEZE...) excluded. */
unsigned long stress_unknown_cmd(uint64_t *r)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	unsigned int dir = dirs[stress_below(r, 4)], type, nr, size, i;
	unsigned long cmd;

	for (;;) {
		switch (stress_below(r, 4)) {
		case 0:		/* one of ours with another direction or size */
			i = stress_below(r, NIOCTLS - 1);
			type = NSL_IOC_MAGIC;
			nr = _IOC_NR(stress_op_cmd[i]);
			size = stress_chance(r, 50) ? _IOC_SIZE(stress_op_cmd[i]) ^ (8U << stress_below(r, 4)) :
					       _IOC_SIZE(stress_op_cmd[i]);
			break;
		case 1:		/* our magic, a number we do not use */
			type = NSL_IOC_MAGIC;
			nr = stress_chance(r, 30) ? 0 : 0x0a + stress_below(r, 0xf6);
			size = stress_below(r, 1 << 14);
			break;
		case 2:		/* another driver's */
			type = stress_below(r, 256);
			nr = stress_below(r, 256);
			size = stress_below(r, 1 << 14);
			break;
		default:	/* anything */
			cmd = (uint32_t)stress_rnd(r);
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
			if (cmd == stress_op_cmd[i])
				break;
		if (i == NIOCTLS - 1)
			return cmd;
	}
}

void stress_describe_arg(enum op op, const union arg *a, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	switch (op) {
	case OP_SRCVBUF:
		snprintf(buf, len, "bytes %" PRIu64 " flags %#x pad %#x (ring_max %llu)",
			 (uint64_t)a->rb.bytes, a->rb.flags, a->rb.pad,
			 (unsigned long long)stress_info.ring_max);
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
