// SPDX-License-Identifier: GPL-2.0
/* stress: phases */
#include "stress.h"

static struct stats total;		/* every phase */
static uint64_t total_items, total_reads;

/* One TAP line per kind of call: every answer allowed. */
static void phase_report(const char *phase, const struct stats *st)
{
	char dist[600], set[300];

	for (int op = 0; op < OP_MAX; op++) {
		uint64_t n = stress_calls(st, op);

		if (!n)
			continue;
		tap_ok(st->bad[op] == 0,
			   "%s: %s: %" PRIu64 " answers, %s (allowed {%s}); mean %.0f us, longest %.0f us",
			   phase, stress_op_name[op], n,
			   st->bad[op] ? "some the code does not allow" : "each one the code allows",
			   stress_errset_str(st->allowed[op], set, sizeof(set)),
			   st->sum_ns[op] / 1e3 / n, st->max_ns[op] / 1e3);
		stress_note("%s: %s answers: %s", phase, stress_op_name[op],
			    stress_answers_str(st, op, dist, sizeof(dist)));
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
		K_RING_MIN + 1, 1 << 20, stress_info.ring_max - 1,
		stress_info.ring_max, stress_info.ring_max + 1, stress_info.ring_max + SLOT,
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
	valid[OP_SFILTER].filt.insns = (uintptr_t)stress_accept_all;
	for (op = 0; op < NIOCTLS - 1; op++)
		for (p = 0; p < P_MAX; p++)
			stress_call_ioctl(w, fd, op, stress_op_cmd[op], p, &valid[op], "every pointer");
	for (p = 0; p < P_MAX; p++)
		stress_call_ioctl(w, fd, OP_UNKNOWN, _IOW(NSL_IOC_MAGIC, 0x7f, struct nsl_state),
				  p, &valid[OP_SSTATE], "unknown command, every pointer");

	/* non-zero flags and padding, one field at a time (little-endian) */
	for (c = 0; c < sizeof(fields) / sizeof(fields[0]); c++) {
		a = valid[fields[c].op];
		memcpy(a.raw + fields[c].off, &fields[c].value, fields[c].size);
		stress_call_ioctl(w, fd, fields[c].op, stress_op_cmd[fields[c].op], P_RW, &a,
				  fields[c].name);
	}

	/* ring sizes */
	for (c = 0; c < sizeof(sizes) / sizeof(sizes[0]); c++) {
		a = valid[OP_SRCVBUF];
		a.rb.bytes = sizes[c];
		stress_call_ioctl(w, fd, OP_SRCVBUF, NSIOCSRCVBUF, P_RW, &a, "ring size");
	}
	stress_call_ioctl(w, fd, OP_SRCVBUF, NSIOCSRCVBUF, P_RW, &valid[OP_SRCVBUF],
			  "ring size back to 1 MiB");

	/* calibration: CPUs and repetitions */
	for (c = 0; c < sizeof(reps) / sizeof(reps[0]); c++) {
		a = valid[OP_GCALIB];
		a.calib.reps = reps[c];
		a.calib.cpu = c % stress_info.ncpus;
		stress_call_ioctl(w, fd, OP_GCALIB, NSIOCGCALIB, P_RW, &a, "calib reps");
	}
	a = valid[OP_GCALIB];
	a.calib.cpu = stress_info.ncpus;
	stress_call_ioctl(w, fd, OP_GCALIB, NSIOCGCALIB, P_RW, &a, "calib cpu ncpus");
	a.calib.cpu = UINT32_MAX;
	stress_call_ioctl(w, fd, OP_GCALIB, NSIOCGCALIB, P_RW, &a, "calib cpu ~0");

	/* every perf type, fixed and dynamic and none, with odd configs */
	for (t = 0; t <= K_TYPE_MAX; t++)
		types[ntypes++] = t;
	for (int i = 0; i < stress_npmu_types; i++)
		types[ntypes++] = stress_pmu_type[i];
	types[ntypes++] = 63;
	types[ntypes++] = 0x7fffffff;
	types[ntypes++] = UINT32_MAX;
	for (t = 0; t < ntypes; t++) {
		for (c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
			memset(&a, 0, sizeof(a));
			a.evs.nevents = 1;
			a.evs.ev[0].type = types[t];
			a.evs.ev[0].config = configs[c];
			stress_call_ioctl(w, fd, OP_SEVENT, NSIOCSEVENT, P_RW, &a, "perf type and config");
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
	stress_call_ioctl(w, fd, OP_SEVENT, NSIOCSEVENT, P_RW, &a, "four events, a raw one last");
	a.evs.ev[3].type = PERF_TYPE_SOFTWARE;
	stress_call_ioctl(w, fd, OP_SEVENT, NSIOCSEVENT, P_RW, &a, "four software events");

	/* every number of our magic that is not ours, and ours turned */
	for (c = 0; c < 0x20; c++) {
		unsigned long cmd = _IOW(NSL_IOC_MAGIC, c, struct nsl_state);
		bool ours = false;

		for (op = 0; op < NIOCTLS - 1; op++)
			ours |= cmd == stress_op_cmd[op];
		if (!ours)
			stress_call_ioctl(w, fd, OP_UNKNOWN, cmd, P_RW, &valid[OP_SSTATE],
					  "unused number of our magic");
	}
	for (op = 0; op < NIOCTLS - 1; op++) {
		unsigned long cmd = stress_op_cmd[op];

		stress_call_ioctl(w, fd, OP_UNKNOWN,
				  _IOC(_IOC_DIR(cmd) ^ _IOC_READ, _IOC_TYPE(cmd),
				       _IOC_NR(cmd), _IOC_SIZE(cmd)),
				  P_RW, &valid[op], "our command, another direction");
		stress_call_ioctl(w, fd, OP_UNKNOWN,
				  _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd),
				       _IOC_SIZE(cmd) + 8),
				  P_RW, &valid[op], "our command, another size");
	}
	/* leave collection on for the readers */
	stress_call_ioctl(w, fd, OP_SSTATE, NSIOCSSTATE, P_RW, &valid[OP_SSTATE], "on");
}

static void phase_collect(struct phase *ph, struct worker *ws, int nw)
{
	for (int i = 0; i < nw; i++) {
		stress_stats_add(&ph->st, &ws[i].st);
		if (ws[i].done < ws[i].iters && ws[i].iters != UINT64_MAX)
			stress_note("%s: %s worker (%s) stopped at the deadline after %" PRIu64
				    " of %" PRIu64, ph->name, stress_role_name[ws[i].role],
				    stress_caps_name[ws[i].caps], ws[i].done, ws[i].iters);
		if (!stress_hole_still_unmapped(&ws[i].b)) {
			ph->st.harness++;
			stress_complain("%s: a worker's unmapped page got mapped: the test is void",
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
	stress_note("%s: took %.0f s", ph->name, stress_now_s() - ph->start);
	phase_report(ph->name, &ph->st);
	tap_ok(ph->st.harness == 0, "%s: the workers ran as set up (capabilities, unmapped pages)",
		   ph->name);
	stress_note("%s: %" PRIu64 " reads returned %" PRIu64 " bytes: %" PRIu64
		    " blocks, %" PRIu64 " event records, %" PRIu64 " loss items",
		    ph->name, ph->reads, ph->bytes, ph->blocks, ph->events, ph->losses);
	stress_stats_add(&total, &ph->st);
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
	double share = (NW + 2.0) / (stress_ncpus_online ? stress_ncpus_online : 1);
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
	ph.start = stress_now_s();
	ph.deadline = ph.start + 1.5 * PINNED_S;
	for (i = 0; i < NW; i++)
		if (stress_worker_init(&ws[i], &ph, plan[i].role, plan[i].caps,
				       /* readers read till the others are done */
				       plan[i].role == ROLE_IOCTL ? n_ioctl :
				       plan[i].role == ROLE_READ ? UINT64_MAX : n_cheap, i + 1)) {
			tap_ok(false, "pinned: worker set-up: %s", strerror(errno));
			return;
		}
	stress_worker_init(&main_w, &ph, ROLE_IOCTL, CAPS_ALL, 0, 99);
	stress_note("pinned: %d threads: %" PRIu64 " ioctls each (5 threads), %" PRIu64
		    " polls, fcntls or opens each (3 threads), 2 readers till they are done",
		    NW, n_ioctl, n_cheap);

	ld = stress_loader_start(kofd, true, n_cheap / 20 + 20);
	for (i = 0; i < NW; i++)
		pthread_create(&ws[i].tid, NULL, stress_worker_main, &ws[i]);

	boundaries(&main_w, fd);

	join_all(ws, NW, false);
	atomic_store(&ph.stop, true);
	/* readers asleep in read() need blocks, or a signal */
	ioctl(fd, NSIOCSSTATE, &on);
	join_all(ws, NW, true);
	if (ld)
		stress_loader_stop(ld, &ph.st);
	else
		tap_ok(false, "pinned: loader process started");

	phase_collect(&ph, ws, NW);
	stress_stats_add(&ph.st, &main_w.st);
	for (i = 0; i < NW; i++)
		ph.sysinfos += ws[i].s.sysinfos;
	tap_ok(TAP_IS(ph.reads > 0) && TAP_IS(ph.sysinfos == 1),
		   "pinned: the one stream has exactly one sysinfo item, at the start of a read (%" PRIu64 " in %" PRIu64 " reads)",
		   ph.sysinfos, ph.reads);
	CHECKED(&ph.st, OP_CLOSE, OK, "close", close(fd));
	phase_finish(&ph);
	for (i = 0; i < NW; i++)
		stress_worker_fini(&ws[i]);
	stress_worker_fini(&main_w);
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
	double share = (NW + 1.0) / (stress_ncpus_online ? stress_ncpus_online : 1);
	uint64_t n = RACING_S / ((sp->open_s + 2 * sp->ioctl_s + 3 * sp->cheap_s) *
				 NW * share);
	struct loader *ld;
	int i;

	if (n < 10)
		n = 10;
	pthread_mutex_init(&ph.lock, NULL);
	ph.start = stress_now_s();
	ph.deadline = ph.start + 1.5 * RACING_S;
	for (i = 0; i < NW; i++)
		if (stress_worker_init(&ws[i], &ph, ROLE_RACER, plan[i], n, 100 + i)) {
			tap_ok(false, "racing: worker set-up: %s", strerror(errno));
			return;
		}
	stress_note("racing: %d threads, %" PRIu64 " rounds of open, use, close each", NW, n);
	ld = stress_loader_start(kofd, false, UINT64_MAX);
	ph.loader_rounds = ld ? &ld->rounds : NULL;
	for (i = 0; i < NW; i++)
		pthread_create(&ws[i].tid, NULL, stress_worker_main, &ws[i]);
	join_all(ws, NW, false);
	atomic_store(&ph.stop, true);
	if (ld)
		stress_loader_stop(ld, &ph.st);
	else
		tap_ok(false, "racing: loader process started");
	phase_collect(&ph, ws, NW);
	phase_finish(&ph);
	for (i = 0; i < NW; i++)
		stress_worker_fini(&ws[i]);
}

/* Nonblocking reads of everything there is into @s. */
long stress_read_all(int fd, struct ns_stream *s, uint8_t *buf, bool *ok)
{
	long total = 0;
	ssize_t n;

	while ((n = read(fd, buf, READ_BYTES)) > 0) {
		*ok &= ns_stream_take(s, buf, n);
		total += n;
	}
	if (n == 0 || errno != EAGAIN) {
		ns_stream_bad(s, "read: %s", n ? strerror(errno) : "0 bytes");
		*ok = false;
	}
	return total;
}

/*
 * stress_cycles times under traffic: insmod (enable=0 every fourth time),
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
	double start = stress_now_s();
	uint8_t *buf = malloc(READ_BYTES);
	struct ns_stream *s = calloc(1, sizeof(*s));
	int c, fd, n, waited;
	char what[80];
	bool ok;

	if (!buf || !s)
		return;
	for (c = 0; c < stress_cycles; c++) {
		const char *params = c % 4 == 3 ? "enable=0" : "";

		snprintf(what, sizeof(what), "cycle %d, insmod %s", c, params);
		CHECKED(&st, OP_INSMOD, OK, what, stress_insmod(kofd, params));
		fd = CHECKED(&st, OP_OPEN, OK, "open after insmod",
			     open(DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC));
		if (fd < 0)
			goto unload;
		CHECKED(&st, OP_SSTATE, OK, "collection on",
			ioctl(fd, NSIOCSSTATE, &on));

		memset(s, 0, sizeof(*s));
		s->ncpus = stress_info.ncpus;
		s->track = true;
		ok = true;
		t0 = stress_now_ns();
		/* traffic is flowing: a block must come (a minute at most) */
		for (waited = 0; waited < 600 && !s->blocks && ok; waited++) {
			struct pollfd p = { .fd = fd, .events = POLLIN };

			n = poll(&p, 1, 100);
			if (n == 1) {
				reads++;
				stress_read_all(fd, s, buf, &ok);
			}
		}
		wait_ns += stress_now_ns() - t0;
		if (!s->blocks || !ok)
			stress_complain("cycle %d: %" PRIu64 " blocks after %d polls: %s", c,
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
			stress_complain("cycle %d: %" PRIu64 " items + %llu drops > %llu packets or %" PRIu64 " lost > drops",
					c, s->items, (unsigned long long)drops.count,
					(unsigned long long)packets.count, s->lost);
		CHECKED(&st, OP_CLOSE, OK, "close", close(fd));
unload:
		/* close() has released the device: nothing holds the module */
		CHECKED(&st, OP_RMMOD, OK, "rmmod after close", stress_rmmod());
	}
	stress_note("cycles: took %.0f s, %.1f s of which waiting for blocks", stress_now_s() - start,
		    wait_ns / 1e9);
	phase_report("cycles", &st);
	tap_ok(waits_ok == (uint64_t)stress_cycles,
		   "cycles: %d of %d opens read a sysinfo and then blocks, seqs continuous (%" PRIu64
		   " blocks, %" PRIu64 " items in %" PRIu64 " reads)", (int)waits_ok, stress_cycles,
		   blocks, items, reads);
	tap_ok(acct_ok == (uint64_t)stress_cycles,
		   "cycles: items read + NSIOCGDROPS <= NSIOCGPACKETS, loss items <= drops, in %d of %d",
		   (int)acct_ok, stress_cycles);
	stress_stats_add(&total, &st);
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
	ph.deadline = stress_now_s() + 600;
	stress_worker_init(&w, &ph, ROLE_IOCTL, CAPS_ALL, 0, 7);
	t0 = stress_now_ns();
	for (i = 0; i < 60; i++)
		stress_random_ioctl(&w, *fd);
	sp->ioctl_s = (stress_now_ns() - t0) / 60e9;
	t0 = stress_now_ns();
	for (i = 0; i < 200; i++) {
		stress_random_poll(&w, *fd);
		stress_random_fcntl(&w, *fd);
	}
	sp->cheap_s = (stress_now_ns() - t0) / 400e9;
	t0 = stress_now_ns();
	for (i = 0; i < 10; i++) {
		close(*fd);
		*fd = open(DEV, O_RDONLY | O_CLOEXEC);
	}
	sp->open_s = (stress_now_ns() - t0) / 10e9;
	phase_report("speed", &w.st);
	stress_stats_add(&total, &w.st);
	stress_worker_fini(&w);
	stress_note("speed: an ioctl %.0f us, a poll or fcntl %.0f us, open+close %.0f us%s",
		    sp->ioctl_s * 1e6, sp->cheap_s * 1e6, sp->open_s * 1e6,
		    access("/sys/kernel/debug/kmemleak", F_OK) ? "" : " (a debug kernel: kmemleak)");
}

static void figures(void)
{
	char dist[600];
	uint64_t ioctls = 0, longest = 0;
	int op, longest_op = 0;

	for (op = 0; op < NIOCTLS; op++) {
		ioctls += stress_calls(&total, op);
		if (total.max_ns[op] > longest) {
			longest = total.max_ns[op];
			longest_op = op;
		}
	}
	stress_note("figures: %" PRIu64 " ioctls, %" PRIu64 " reads (%" PRIu64 " of them returned %" PRIu64
		    " items), %" PRIu64 " polls, %" PRIu64 " fcntls, %" PRIu64 " opens (%" PRIu64
		    " succeeded), %" PRIu64 " closes",
		    ioctls, stress_calls(&total, OP_READ), total_reads, total_items,
		    stress_calls(&total, OP_POLL), stress_calls(&total, OP_FCNTL), stress_calls(&total, OP_OPEN),
		    total.n[OP_OPEN][0], stress_calls(&total, OP_CLOSE));
	stress_note("figures: module loaded %" PRIu64 " times and unloaded %" PRIu64
		    " times (%d load/capture/unload cycles; insmod tried %" PRIu64 ", rmmod %" PRIu64 ")",
		    total.n[OP_INSMOD][0], total.n[OP_RMMOD][0], stress_cycles,
		    stress_calls(&total, OP_INSMOD), stress_calls(&total, OP_RMMOD));
	for (op = 0; op < OP_MAX; op++)
		if (stress_calls(&total, op))
			stress_note("figures: %s: %s; longest %.0f us", stress_op_name[op],
				    stress_answers_str(&total, op, dist, sizeof(dist)),
				    total.max_ns[op] / 1e3);
	stress_note("figures: longest ioctl: %s, %.0f us", stress_op_name[longest_op], longest / 1e3);
}

int stress_cmd_run(const char *ko)
{
	struct speed sp;
	struct traffic *t;
	int kofd, fd;
	long ret;

	kofd = open(ko, O_RDONLY | O_CLOEXEC);
	tap_ok(kofd >= 0, "module %s readable", ko);
	if (kofd < 0)
		return 1;
	if (stress_module_loaded())
		tap_ok(stress_rmmod() == 0, "an earlier " MODNAME " unloaded");
	ret = stress_insmod(kofd, "");
	tap_ok(ret == 0, "insmod %s%s%s", ko, ret ? ": " : "", ret ? strerror(errno) : "");
	fd = open(DEV, O_RDONLY | O_CLOEXEC);
	tap_ok(fd >= 0, "open " DEV " right after insmod%s%s", fd < 0 ? ": " : "",
		   fd < 0 ? strerror(errno) : "");
	if (ret || fd < 0)
		return 1;
	ret = ioctl(fd, NSIOCGINFO, &stress_info);
	tap_ok(TAP_IS(!ret) && TAP_IS(stress_info.abi_version == NSL_ABI_VERSION) &&
		   TAP_IS(stress_info.block_size == SLOT) && TAP_IS(stress_info.ncpus <= MAXCPUS) &&
		   TAP_IS(stress_info.ring_max >= K_RING_MIN),
		   "NSIOCGINFO: abi %u, block %u bytes, %u CPUs, ring_max %llu",
		   stress_info.abi_version, stress_info.block_size, stress_info.ncpus,
		   (unsigned long long)stress_info.ring_max);
	if (ret || stress_info.ncpus > MAXCPUS)
		return 1;
	stress_note("%u CPUs online; core PMU: %s; %d dynamic PMU types", stress_ncpus_online,
		    stress_cpu_pmu ? "yes" : "no (hardware events: ENODEV)", stress_npmu_types);

	t = stress_traffic_start(0);
	tap_ok(t != NULL, "traffic through the NIC and over loopback started");
	if (!t)
		return 1;
	measure_speed(&fd, &sp);
	phase_pinned(fd, kofd, &sp);
	phase_racing(kofd, &sp);
	if (stress_module_loaded())
		tap_ok(stress_rmmod() == 0, "racing: the module unloads once nobody holds it");
	phase_cycles(kofd);
	stress_traffic_finish(t, true);
	figures();
	close(kofd);
	return tap_finish();
}
