// SPDX-License-Identifier: GPL-2.0
/* stress: capture, emitted */
#include "stress.h"

static uint64_t emitted_now(int fd)
{
	struct nsl_info i;

	return ioctl(fd, NSIOCGINFO, &i) ? UINT64_MAX : i.emitted;
}

/*
 * Collection is off: read until the core's emitted count has not moved
 * and nothing came for ten polls in a row (blocks of skbs instrumented
 * before the switch arrive as the skbs are freed).  A minute at most.
 */
static bool settle(int fd, struct ns_stream *s, uint8_t *buf, bool *ok)
{
	uint64_t prev = emitted_now(fd), cur;
	int quiet = 0, rounds;

	for (rounds = 0; quiet < 10 && rounds < 1200; rounds++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long got = 0;

		if (poll(&p, 1, 50) == 1)
			got = stress_read_all(fd, s, buf, ok);
		cur = emitted_now(fd);
		quiet = got || cur != prev ? 0 : quiet + 1;
		prev = cur;
	}
	return quiet >= 10;
}

static int open_quiet(uint8_t *buf)
{
	struct nsl_state off = { .state = NSL_STATE_OFF };
	struct ns_stream *s = calloc(1, sizeof(*s));
	int fd = open(DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	bool ok = true;

	if (s)
		s->ncpus = stress_info.ncpus;
	if (fd < 0 || !s || ioctl(fd, NSIOCSSTATE, &off) || !settle(fd, s, buf, &ok)) {
		fprintf(stderr, "stress: " DEV " did not go quiet: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	free(s);
	return fd;
}

static int cmd_emitted(void)
{
	uint8_t *buf = malloc(READ_BYTES);
	int fd = buf ? open_quiet(buf) : -1;

	if (fd < 0)
		return 1;
	printf("%" PRIu64 "\n", emitted_now(fd));
	close(fd);
	return 0;
}

/*
 * One reader, TCP and UDP through the NIC and over loopback with a byte
 * budget: every block the core emitted since the open was read or
 * counted as dropped, and the drops are exactly the loss items' sum.
 */
static int cmd_capture(void)
{
	struct nsl_state on = { .state = NSL_STATE_ON }, off = { .state = NSL_STATE_OFF };
	struct nsl_count drops = { 0 }, packets = { 0 };
	struct nsl_rcvbuf rb = { 0 };
	uint8_t *buf = malloc(READ_BYTES);
	struct ns_stream *s = calloc(1, sizeof(*s));
	const char *ifname = getenv("NS_LOCAL_IF");
	uint64_t e0, e1;
	struct traffic *t;
	bool ok = true, quiet;
	char path[128];
	FILE *f;
	int fd, status;

	if (!buf || !s)
		return 1;
	/* nothing in flight, then a fresh open: its counters start at 0 */
	fd = open_quiet(buf);
	tap_ok(fd >= 0, "capture: " DEV " quiet with collection off");
	if (fd < 0)
		return 1;
	close(fd);
	fd = open(DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	tap_ok(fd >= 0, "capture: open " DEV);
	if (fd < 0)
		return 1;
	ioctl(fd, NSIOCGINFO, &stress_info);
	e0 = emitted_now(fd);
	s->ncpus = stress_info.ncpus;
	s->track = true;
	snprintf(path, sizeof(path), "/sys/class/net/%s/ifindex", ifname ? ifname : "eth0");
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &s->nic_ifindex) != 1)
			s->nic_ifindex = 0;
		fclose(f);
	}
	/* a small ring, so that some blocks are dropped and marked */
	rb.bytes = 32 * SLOT;
	tap_ok(!ioctl(fd, NSIOCSRCVBUF, &rb), "capture: a ring of 32 blocks per CPU");
	tap_ok(!ioctl(fd, NSIOCSSTATE, &on), "capture: collection on");

	t = stress_traffic_start(1 << 20);
	tap_ok(t != NULL, "capture: traffic started, 1 MiB a flow");
	if (!t)
		return 1;
	/* read while the sources run: the last one done ends the loop */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int running = 0;

		if (poll(&p, 1, 100) == 1)
			stress_read_all(fd, s, buf, &ok);
		for (int i = 0; i < NFLOWS; i++) {
			if (t->source[i] <= 0)
				continue;
			if (waitpid(t->source[i], &status, WNOHANG) == t->source[i]) {
				t->source_status[i] = status;
				t->source[i] = 0;
			} else {
				running++;
			}
		}
		if (!running)
			break;
	}
	stress_traffic_finish(t, true);
	tap_ok(!ioctl(fd, NSIOCSSTATE, &off), "capture: collection off");
	quiet = settle(fd, s, buf, &ok);
	tap_ok(quiet, "capture: the stream went quiet");
	tap_ok(TAP_IS(!ioctl(fd, NSIOCGDROPS, &drops)) &&
		   TAP_IS(!ioctl(fd, NSIOCGPACKETS, &packets)),
		   "capture: NSIOCGDROPS, NSIOCGPACKETS");
	e1 = emitted_now(fd);
	tap_ok(TAP_IS(ok) && TAP_IS(s->sysinfos == 1),
		   "capture: %" PRIu64 " reads of whole items, one sysinfo first, seqs continuous per CPU%s%s",
		   s->reads, s->bad[0] ? ": " : "", s->bad);
	tap_ok(packets.count == s->items + drops.count,
		   "capture: packets %llu == items read %" PRIu64 " (%" PRIu64 " blocks, %" PRIu64
		   " event records) + dropped %llu",
		   (unsigned long long)packets.count, s->items, s->blocks, s->events,
		   (unsigned long long)drops.count);
	tap_ok(drops.count == s->lost,
		   "capture: dropped %llu == lost in %" PRIu64 " loss items %" PRIu64,
		   (unsigned long long)drops.count, s->losses, s->lost);
	tap_ok(e1 - e0 == packets.count,
		   "capture: the core emitted %" PRIu64 " since the open == packets %llu",
		   e1 - e0, (unsigned long long)packets.count);
	tap_ok(TAP_IS(s->nic_blocks > 0) && TAP_IS(s->lo_blocks > 0) &&
		   TAP_IS(s->rx_blocks > 0),
		   "capture: blocks through the NIC (%" PRIu64 "), over loopback (%" PRIu64
		   "), received (%" PRIu64 ")", s->nic_blocks, s->lo_blocks, s->rx_blocks);
	close(fd);
	return tap_finish();
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = stress_on_signal };

	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	tap_vline = stress_vline;	/* whole lines, whatever thread says one */
	stress_page = sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);
	/* no SA_RESTART: a reader asleep in read() returns EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	stress_read_online_cpus();
	stress_read_pmus();
	if (stress_cycles_from_env())
		return 2;
	if (argc == 3 && !strcmp(argv[1], "run"))
		return stress_cmd_run(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "capture"))
		return cmd_capture();
	if (argc == 2 && !strcmp(argv[1], "emitted"))
		return cmd_emitted();

	fprintf(stderr, "usage: %s run MODULE.ko | capture | emitted\n", argv[0]);
	return 2;
}
