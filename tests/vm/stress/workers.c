// SPDX-License-Identifier: GPL-2.0
/* stress: workers */
#include "stress.h"

const char *const stress_role_name[] = { "ioctl", "read", "poll", "fcntl",
					 "open", "racer" };

static bool stopping(const struct worker *w)
{
	return atomic_load(&w->ph->stop) || stress_now_s() > w->ph->deadline;
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
		    got.ncpus != stress_info.ncpus || got.max_records != NSL_MAX_RECORDS ||
		    got.max_events != NSL_MAX_EVENTS || got.ring_max != stress_info.ring_max ||
		    got.ring_bytes % K_RING_MIN || got.ring_bytes < K_RING_MIN ||
		    got.ring_bytes > got.ring_max || got.emitted < w->last_emitted) {
			w->st.bad[op]++;
			stress_complain("NSIOCGINFO: abi %u block %u ncpus %u ring %llu of %llu emitted %llu after %llu",
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
			stress_complain("%s went backwards: %llu after %llu", stress_op_name[op],
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
			stress_complain("NSIOCGCALIB cpu %u reps %u: reps %u nevents %u samples %u",
					in->calib.cpu, in->calib.reps, cal.reps,
					cal.nevents, cal.cost[NSL_C_NSS].samples);
		}
		break;
	default:
		break;
	}
}

/* Counted from the open: NSIOCGPACKETS and NSIOCGDROPS compare with 0. */
static void reset_counters(struct worker *w)
{
	w->last_packets = w->last_drops = 0;
}

/* One ioctl with @a placed as @p; the answer checked. */
long stress_call_ioctl(struct worker *w, int fd, enum op op, unsigned long cmd,
		       enum ptr p, const union arg *a, const char *label)
{
	size_t size = stress_op_size(op);
	void *ptr = stress_place(&w->b, &w->rng, p, a, size);
	errset allowed = stress_expect_ioctl(op, w->caps, p, a);
	char what[600], desc[400];
	uint64_t t0;
	long ret;
	int err;

	t0 = stress_now_ns();
	ret = ioctl(fd, cmd, ptr);
	err = errno;
	t0 = stress_now_ns() - t0;
	if (!(allowed & (ret < 0 ? (err < 128 ? E(err) : 0) : OK))) {
		stress_describe_arg(op, a, desc, sizeof(desc));
		snprintf(what, sizeof(what), "%s, cmd %#lx, %s, arg %s %p: %s",
			 label, cmd, stress_caps_name[w->caps], stress_ptr_name[p], ptr, desc);
	} else {
		what[0] = 0;
	}
	stress_answer(&w->st, op, ret, err, allowed, t0, what);
	if (ret == 0 && p == P_RW)
		check_output(w, op, ptr, a);
	/*
	 * A resize before the descriptor's stream begins counts the packets
	 * and drops from 0 again (device.c): whether it began is the
	 * kernel's to know, so the next count is compared with none.
	 */
	if (ret == 0 && op == OP_SRCVBUF)
		reset_counters(w);
	return ret < 0 ? -err : ret;
}

static enum op pick_ioctl(uint64_t *r)
{
	/* weights: the setters that do work more often than the getters */
	static const uint8_t w[NIOCTLS] = { 12, 12, 16, 8, 6, 6, 8, 7, 8, 8, 4, 12 };
	unsigned int x = stress_below(r, 107), op;

	for (op = 0; op < NIOCTLS - 1 && x >= w[op]; op++)
		x -= w[op];
	return op;
}

void stress_random_ioctl(struct worker *w, int fd)
{
	enum op op = pick_ioctl(&w->rng);
	union arg a;

	stress_make_arg(&w->rng, op, &a);
	stress_call_ioctl(w, fd, op, op == OP_UNKNOWN ? stress_unknown_cmd(&w->rng) : stress_op_cmd[op],
			  stress_pick_ptr(&w->rng), &a, "random");
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

	switch (stress_below(&w->rng, 12)) {
	case 0:			/* too short for a block */
		count = shorts[stress_below(&w->rng, 9)];
		buf = stress_chance(&w->rng, 50) ? w->b.rw : stress_chance(&w->rng, 50) ?
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
		k = 1 + stress_below(&w->rng, 3 * SLOT);
		buf = w->b.hole - k;
		count = SLOT + stress_below(&w->rng, 2 * stress_page);
		writable = k;
		break;
	case 4:			/* huge: clamped by the VFS, ends on the hole */
		buf = w->b.rw + stress_below(&w->rng, 64);
		count = stress_chance(&w->rng, 50) ? 64ULL << 20 : SIZE_MAX - stress_below(&w->rng, 16);
		writable = w->b.rw + w->b.rw_len - buf;
		break;
	case 5:			/* nothing writable */
		count = SLOT + stress_below(&w->rng, stress_page - SLOT);
		switch (stress_below(&w->rng, 3)) {
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
		count = 1 + stress_below(&w->rng, 2 * SLOT);
		buf = stress_place(&w->b, &w->rng, P_KERNEL + stress_below(&w->rng, 3), NULL, 0);
		break;
	default:		/* a plausible buffer, of an odd size */
		buf = w->b.rw + stress_below(&w->rng, 8);
		count = SLOT + stress_below(&w->rng, READ_BYTES - SLOT);
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

	t0 = stress_now_ns();
	ret = read(fd, buf, count);
	err = errno;
	t0 = stress_now_ns() - t0;
	if (ret < 0 && err == EINTR && !atomic_load(&w->ph->stop))
		allowed &= ~E(EINTR);	/* nobody signalled */
	snprintf(what, sizeof(what), "buf %p count %zu, %zu writable", buf, count,
		 writable);
	if (!stress_answer(&w->st, OP_READ, ret, err, allowed, t0, what) || ret < 0)
		return ret < 0 ? -err : ret;
	if (ret == 0 || (size_t)ret > count || (size_t)ret > writable) {
		w->st.bad[OP_READ]++;
		stress_complain("read: %zd bytes from %s", ret, what);
		return ret;
	}
	/* a copy: the buffer may be the kernel's to write again */
	memcpy(w->rbuf, buf, ret);
	if (!ns_stream_take(&w->s, w->rbuf, ret)) {
		w->st.bad[OP_READ]++;
		stress_complain("read: %s (%s)", w->s.bad, what);
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
void stress_random_poll(struct worker *w, int fd)
{
	static const short evs[] = { POLLIN, POLLOUT, POLLPRI, POLLRDNORM,
				     POLLWRNORM, POLLRDHUP };
	struct pollfd p = { .fd = fd };
	struct epoll_event ev = { 0 }, out;
	int timeout = stress_below(&w->rng, 20), n, err, i;
	uint32_t got;
	uint64_t t0;

	for (i = 0; i < 6; i++)
		if (stress_chance(&w->rng, 50))
			p.events |= evs[i];
	t0 = stress_now_ns();
	if (w->epfd >= 0 && stress_chance(&w->rng, 40)) {
		ev.events = p.events | (stress_chance(&w->rng, 30) ? EPOLLET : 0);
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			err = errno;
			stress_answer(&w->st, OP_POLL, -1, err, OK, 0, "epoll_ctl ADD");
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
	t0 = stress_now_ns() - t0;
	if (!stress_answer(&w->st, OP_POLL, n, err,
			   OK | (atomic_load(&w->ph->stop) ? E(EINTR) : 0), t0, "poll"))
		return;
	/* nslm_poll(): EPOLLIN | EPOLLRDNORM or nothing, whatever was asked */
	if (n > 1 || (got & ~(POLLIN | POLLRDNORM)) ||
	    (n == 1 && !(got & (POLLIN | POLLRDNORM)))) {
		w->st.bad[OP_POLL]++;
		stress_complain("poll: %d, events %#x asked, %#x returned", n,
				(unsigned int)p.events, got);
	}
}

/* O_NONBLOCK toggles, FIONBIO, a dup: all must just work. */
void stress_random_fcntl(struct worker *w, int fd)
{
	int flags, on, ret, err = 0, dup_fd;
	uint64_t t0 = stress_now_ns();

	switch (stress_below(&w->rng, 4)) {
	case 0:
		ret = flags = fcntl(fd, F_GETFL);
		err = errno;
		if (ret >= 0 && w->role == ROLE_RACER &&
		    !!(flags & O_NONBLOCK) != w->nonblock) {
			w->st.bad[OP_FCNTL]++;
			stress_complain("fcntl: O_NONBLOCK %d, set %d", !!(flags & O_NONBLOCK),
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
		on = stress_chance(&w->rng, 50);
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
	stress_answer(&w->st, OP_FCNTL, ret < 0 ? -1 : 0, err, OK, stress_now_ns() - t0, "fcntl");
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
	size_t len = stress_page;
	void *m = MAP_FAILED;

	if (stress_chance(&w->rng, 50) && !ioctl(fd, NSIOCGINFO, &now))
		len = now.ncpus * (stress_page + now.ring_bytes);
	CHECKED(&w->st, OP_MMAP,
		!w->readable ? E(EACCES) :
		len == (size_t)stress_page ? E(EINVAL) : OK | E(EINVAL) | E(EBUSY),
		"mmap", (m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0)) ==
		MAP_FAILED ? -1 : 0);
	if (m == MAP_FAILED)
		return;
	/* While it exists no resize can come: the size is the mapping's. */
	ctl = m;
	if (ctl->magic != NSL_RING_MAGIC || ctl->cpu ||
	    now.ncpus * (stress_page + ctl->size) != len)
		stress_complain("mapping: control page magic %#x cpu %u size %llu for %zu bytes",
				ctl->magic, ctl->cpu, (unsigned long long)ctl->size,
				len);
	munmap(m, len);
}

/* The entry points /dev/ns does not have, and mmap. */
static void random_other(struct worker *w, int fd)
{
	off_t off;
	int whence;

	switch (stress_below(&w->rng, 3)) {
	case 0:
		CHECKED(&w->st, OP_WRITE, w->writable ? E(EINVAL) : E(EBADF),
			"write", write(fd, w->b.rw, stress_below(&w->rng, 2 * SLOT)));
		break;
	case 1:
		random_mmap(w, fd);
		break;
	default:
		off = stress_chance(&w->rng, 20) ? -1 - (off_t)stress_below(&w->rng, 100) :
					    (off_t)stress_below(&w->rng, 1 << 20);
		whence = stress_below(&w->rng, 8);
		if (stress_chance(&w->rng, 50))
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
	int flags = modes[stress_below(&w->rng, 3)] |
		    (stress_chance(&w->rng, 50) ? O_NONBLOCK : 0) | O_CLOEXEC;
	uint64_t t0 = stress_now_ns();
	int fd = open(DEV, flags);
	int err = errno;

	stress_answer(&w->st, OP_OPEN, fd, err, E(EBUSY), stress_now_ns() - t0,
		      "a second open while " DEV " is held");
	if (fd >= 0)
		close(fd);
}

/*
 * Racing: open (the module may be gone, or someone else may hold it), use
 * the descriptor alone (so its stream must be continuous), close.  Whether
 * the open succeeded.
 */
static bool racer_round(struct worker *w)
{
	static const int modes[] = { O_RDONLY, O_RDONLY, O_RDWR, O_WRONLY };
	int mode = modes[stress_below(&w->rng, 4)], fd, nops, i;
	struct nsl_count drops = { 0 }, packets = { 0 };
	struct nsl_info got;
	struct pollfd p;
	errset ok;

	w->nonblock = stress_chance(&w->rng, 50);
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
	w->s.ncpus = stress_info.ncpus;
	w->s.track = true;
	reset_counters(w);

	nops = 1 + stress_below(&w->rng, 8);
	for (i = 0; i < nops; i++) {
		switch (stress_below(&w->rng, 10)) {
		case 0:
		case 1:
		case 2:
		case 3:
			stress_random_ioctl(w, fd);
			break;
		case 4:
		case 5:
			/* a blocking read only when something is there */
			p = (struct pollfd){ .fd = fd, .events = POLLIN };
			if (w->nonblock || poll(&p, 1, 0) == 1)
				random_read(w, fd, w->nonblock);
			break;
		case 6:
			stress_random_poll(w, fd);
			break;
		case 7:
			stress_random_fcntl(w, fd);
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
			stress_complain("racing: %" PRIu64 " items read + %llu drops > %llu packets, or %" PRIu64 " lost in loss items > drops",
					w->s.items, (unsigned long long)drops.count,
					(unsigned long long)packets.count, w->s.lost);
		}
	}
	if (w->s.reads && w->s.sysinfos != 1) {
		w->st.bad[OP_READ]++;
		stress_complain("racing: %" PRIu64 " sysinfo items in %" PRIu64 " reads of one open",
				w->s.sysinfos, w->s.reads);
	}
	CHECKED(&w->st, OP_CLOSE, OK, "close", close(fd));
	/*
	 * Half the time, let the loader try once before opening again: with
	 * everybody opening at once the device is never free to unload.
	 */
	if (w->ph->loader_rounds && stress_chance(&w->rng, 50)) {
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

void stress_on_signal(int sig)
{
	(void)sig;
}

void *stress_worker_main(void *arg)
{
	struct worker *w = arg;
	int fd = w->ph->fd;

	if (stress_drop_caps(w->caps)) {
		w->st.harness++;
		stress_complain("capset for %s: %s", stress_caps_name[w->caps], strerror(errno));
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
			stress_random_ioctl(w, fd);
			break;
		case ROLE_READ:
			/* nothing to read: wait, not spin */
			if (random_read(w, fd, true) == -EAGAIN)
				wait_readable(w, fd);
			break;
		case ROLE_POLL:
			stress_random_poll(w, fd);
			break;
		case ROLE_FCNTL:
			stress_random_fcntl(w, fd);
			break;
		case ROLE_OPEN:
			try_second_open(w);
			break;
		}
	}
	return NULL;
}

int stress_worker_init(struct worker *w, struct phase *ph, enum role role,
		       enum caps caps, uint64_t iters, uint64_t seed)
{
	memset(w, 0, sizeof(*w));
	w->s.ncpus = stress_info.ncpus;
	w->ph = ph;
	w->role = role;
	w->caps = caps;
	w->iters = iters;
	w->rng = seed * 0x9e3779b97f4a7c15ULL + 1;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->rbuf = malloc(RW_PAGES * stress_page);
	return w->rbuf && w->epfd >= 0 ? stress_bufs_init(&w->b) : -1;
}

void stress_worker_fini(struct worker *w)
{
	munmap(w->b.rw, w->b.rw_len);
	munmap(w->b.ro, stress_page);
	close(w->epfd);
	free(w->rbuf);
}
