// SPDX-License-Identifier: GPL-2.0
/* stress: loader */
#include "stress.h"

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
	const char *name = names[stress_below(r, sizeof(names) / sizeof(names[0]))];
	errset gone = l->pinned ? 0 : E(ENOENT) | E(ENODEV);

	CHECKED(&l->st, OP_STAGE,
		(strcmp(name, "stairs") ? OK : E(EINVAL)) | gone,
		"cost_stage", set_stage(name));
}

static void loader_main(struct loader *l)
{
	uint64_t r = stress_now_ns() | 1;
	errset rm, in;
	long ret;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* it spins: the threads it races with come first */
	setpriority(PRIO_PROCESS, 0, 5);
	stress_close_fds(l->kofd);
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
			      stress_rmmod());
		l->unloaded += ret == 0;
		if (ret)
			sched_yield();
		ret = CHECKED(&l->st, OP_INSMOD, in,
			      l->pinned ? "insmod while loaded" : "insmod",
			      stress_insmod(l->kofd, ""));
		l->loaded += ret == 0;
		stage_poke(l, &r);
		l->rounds++;
	}
	/* What follows the phase captures: every block whole. */
	if (stress_module_loaded())
		CHECKED(&l->st, OP_STAGE, OK | E(ENOENT) | E(ENODEV),
			"cost_stage full", set_stage("full"));
	_exit(0);
}

struct loader *stress_loader_start(int kofd, bool pinned, uint64_t max_rounds)
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

void stress_loader_stop(struct loader *l, struct stats *into)
{
	int status;

	l->stop = 1;
	waitpid(l->pid, &status, 0);
	stress_stats_add(into, &l->st);
	stress_note("loader: %" PRIu64 " rounds, module unloaded %" PRIu64 " and loaded %" PRIu64 " times",
		    l->rounds, l->unloaded, l->loaded);
}
