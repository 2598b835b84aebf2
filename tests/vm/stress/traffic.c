// SPDX-License-Identifier: GPL-2.0
/* stress: traffic */
#include "stress.h"

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
void stress_close_fds(int keep)
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
	stress_close_fds(keep);
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
		len = 1 + stress_below(&r, d->max_msg);
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

struct traffic *stress_traffic_start(uint64_t budget)
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
			stress_note("traffic: %s: the sink did not start: %s",
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
void stress_traffic_finish(struct traffic *t, bool check)
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
			tap_ok(TAP_IS(exited) && TAP_IS(!f->error[0]) &&
				   TAP_IS(f->sent > 0) &&
				   TAP_IS(f->sent == f->received),
				   "traffic: %s went on undisturbed: %" PRIu64
				   " bytes sent, %" PRIu64 " received, every byte as sent (status %#x, %#x)%s%s",
				   d->name, (uint64_t)f->sent, (uint64_t)f->received,
				   t->source_status[i], t->sink_status[i],
				   f->error[0] ? "; " : "", f->error);
		else
			tap_ok(TAP_IS(exited) && TAP_IS(!f->error[0]) &&
				   TAP_IS(f->received > 0) &&
				   TAP_IS(f->received <= f->sent),
				   "traffic: %s: %" PRIu64 " datagrams sent, %" PRIu64
				   " received (status %#x, %#x)%s%s", d->name, (uint64_t)f->sent,
				   (uint64_t)f->received, t->source_status[i], t->sink_status[i],
				   f->error[0] ? "; " : "", f->error);
	}
}
