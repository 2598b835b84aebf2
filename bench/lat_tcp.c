// SPDX-License-Identifier: GPL-2.0
/*
 * lat_tcp - TCP ping-pong round-trip latency, in the manner of lmbench's
 * lat_tcp: the client sends a message, the server echoes it back, and each
 * round trip is timed with clock_gettime(CLOCK_MONOTONIC).
 *
 *   lat_tcp -s [-p port] [-b addr] [-n] [--port-file FILE] [-v]
 *   lat_tcp -c host [-p port] [-m size] [-W warmup]
 *           [-N iterations | -t seconds] [--json] [--samples FILE] [--insn-mark]
 *
 * Options
 *   -s, --server          serve clients one at a time, forever
 *   -c, --client HOST     run the measurement against HOST (name or address)
 *   -p, --port PORT       TCP port (default 31300; 0 = ephemeral, server only)
 *   -b, --bind ADDR       server: listen on ADDR only (default: every address)
 *   -n, --once            server: exit after the first client; the exit
 *                         status says whether that client was served cleanly
 *       --port-file FILE  server: write the bound port to FILE once listening
 *   -m, --size BYTES      message size each way, 1..16M, suffix K/M = KiB/MiB
 *                         (default 4, as in the NetSlice paper)
 *   -W, --warmup N        untimed round trips first (default 1000)
 *   -N, --iterations N    timed round trips (default 10000)
 *   -t, --time SECONDS    instead of -N, time round trips for this long
 *                         ("2", "0.5"); the run ends with the first round
 *                         trip that completes after the deadline (or at
 *                         100000000 round trips)
 *   -j, --json            one JSON object on stdout instead of text
 *       --samples FILE    also write every round trip, in ns, one per line
 *   -v, --verbose         server: one line per client on stderr
 *       --insn-mark       client: execute insn/mark.h's marker after the
 *                         warm-up, so that a VM counted by insncount.so
 *                         snapshots its counters there (a NOP otherwise)
 *
 * TCP_NODELAY is set on both ends. The server checks nothing but framing:
 * the client sends a 16-byte hello (magic "NSLT", protocol version, message
 * size, 0; big-endian 32-bit words), the server answers with the same words
 * (last word 0 = accepted), then echoes messages of that size until EOF.
 * The client checks that each echo carries its message's sequence byte.
 *
 * Statistics (all over the timed round trips only):
 *   mean, population standard deviation, CV = stddev / mean;
 *   median = middle sample (mean of the two middle ones for even n);
 *   p99 = nearest rank: the ceil(0.99 n)-th smallest sample.
 *
 * JSON output (schema 1; one line; keys always present, in this order;
 * times in microseconds as decimals with 3 digits):
 *   "benchmark"   "lat_tcp"
 *   "schema"      1
 *   "host"        string, as given to -c
 *   "port"        integer
 *   "msg_size"    integer, bytes each way
 *   "warmup"      integer, untimed round trips
 *   "n"           integer, timed round trips
 *   "elapsed_s"   timed phase, wall clock seconds
 *   "mean_us" "median_us" "p99_us" "min_us" "max_us" "stddev_us"
 *   "cv"          dimensionless, 4 digits
 * Fields are only ever added, never renamed or removed, within a schema.
 *
 * Exit status: 0 success, 1 runtime error (connection refused, reset,
 * timeout after 30 s without progress, ...), 2 bad usage or argument.
 * Every error is one line on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "insn/mark.h"

#define LAT_MAGIC	0x4e534c54u	/* "NSLT" */
#define LAT_VERSION	1u
#define DEFAULT_PORT	31300
#define DEFAULT_SIZE	4
#define DEFAULT_WARMUP	1000
#define DEFAULT_ITERS	10000
#define MAX_ITERS	100000000UL

/* lat_tcp's own options; the shared ones are in struct bench_opts */
struct lat_opts {
	const char *samples_file;
	unsigned long warmup;
	unsigned long iters;
	bool iters_set;
	bool verbose;
	bool insn_mark;
};

struct stats {
	double mean, median, p99, min, max, stddev, cv;	/* microseconds */
};

enum { OPT_SAMPLES = BENCH_OPT_OWN, OPT_INSN_MARK };

static const struct option lat_longopts[] = {
	{ "warmup",	required_argument,	NULL, 'W' },
	{ "iterations",	required_argument,	NULL, 'N' },
	{ "verbose",	no_argument,		NULL, 'v' },
	{ "samples",	required_argument,	NULL, OPT_SAMPLES },
	{ "insn-mark",	no_argument,		NULL, OPT_INSN_MARK },
	{ NULL, 0, NULL, 0 }
};

static enum bench_mode parse_opt(int c, const char *arg, void *priv)
{
	struct lat_opts *lo = priv;

	switch (c) {
	case 'W':
		if (parse_ulong(arg, 0, MAX_ITERS, &lo->warmup))
			bad_arg("warm-up count", arg, "0..100000000");
		return BENCH_CLIENT;
	case 'N':
		if (parse_ulong(arg, 1, MAX_ITERS, &lo->iters))
			bad_arg("iteration count", arg, "1..100000000");
		lo->iters_set = true;
		return BENCH_CLIENT;
	case OPT_SAMPLES:
		lo->samples_file = arg;
		return BENCH_CLIENT;
	case OPT_INSN_MARK:
		lo->insn_mark = true;
		return BENCH_CLIENT;
	case 'v':
		lo->verbose = true;
		return BENCH_SERVER;
	}
	return BENCH_EITHER;	/* not reached: getopt_long() knows no other */
}

static void check_args(const struct bench_opts *o, void *priv)
{
	const struct lat_opts *lo = priv;

	if (lo->iters_set && o->duration_ns)
		bench_die(EXIT_USAGE, "give -N or -t, not both");
}

static const struct bench_cmdline cmdline = {
	.usage =
		"usage: lat_tcp -s [-p port] [-b addr] [-n] [--port-file FILE] [-v]\n"
		"       lat_tcp -c host [-p port] [-m size] [-W warmup]\n"
		"               [-N iterations | -t seconds] [--json] [--samples FILE] [--insn-mark]\n",
	.shortopts	= "W:N:v",
	.longopts	= lat_longopts,
	.parse_opt	= parse_opt,
	.check		= check_args,
	.json_mode	= BENCH_CLIENT,
	.time_example	= "5",
	.client_opts	= "-m, -W, -N, -t, --json, --samples",
	.server_opts	= "-b, -n, -v, --port-file",
};

/* ---- server ---------------------------------------------------------- */

/* Serve one client until it closes. Returns 0 if it went cleanly. */
static int serve_one(int fd, const char *peer, unsigned int port, void *priv)
{
	const struct lat_opts *lo = priv;
	unsigned long rounds = 0;
	unsigned char *buf;
	uint32_t size;
	ssize_t n;
	int rc = -1;

	(void)port;
	size = bench_hello_recv(fd, peer, LAT_MAGIC, LAT_VERSION);
	if (!size || bench_hello_accept(fd, peer, LAT_MAGIC, LAT_VERSION, size))
		return -1;
	buf = bench_msg_buf(peer, size);
	if (!buf)
		return -1;
	for (;;) {
		n = read_full(fd, buf, size);
		if (n == 0) {
			rc = 0;
			break;
		}
		if (n < 0 || (size_t)n < size) {
			bench_err("client %s: %s", peer, n < 0 ?
				  io_strerror(errno) : "closed mid-message");
			break;
		}
		if (write_full(fd, buf, size)) {
			bench_err("client %s: %s", peer, io_strerror(errno));
			break;
		}
		rounds++;
	}
	free(buf);
	if (lo->verbose)
		fprintf(stderr, "%s: client %s: %lu round trips of %u bytes%s\n",
			bench_prog, peer, rounds, size, rc ? " (error)" : "");
	return rc;
}

/* ---- client ---------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sorts s in place. n >= 1. */
static void compute_stats(uint64_t *s, size_t n, struct stats *st)
{
	double sum = 0, var = 0;
	size_t i, rank;

	for (i = 0; i < n; i++)
		sum += (double)s[i];
	st->mean = sum / (double)n;
	for (i = 0; i < n; i++) {
		double d = (double)s[i] - st->mean;

		var += d * d;
	}
	st->stddev = sqrt(var / (double)n);
	st->cv = st->mean > 0 ? st->stddev / st->mean : 0;

	qsort(s, n, sizeof(*s), cmp_u64);
	st->min = (double)s[0];
	st->max = (double)s[n - 1];
	if (n % 2)
		st->median = (double)s[n / 2];
	else
		st->median = ((double)s[n / 2 - 1] + (double)s[n / 2]) / 2;
	rank = (99 * n + 99) / 100;		/* ceil(0.99 n), >= 1 */
	st->p99 = (double)s[rank - 1];

	/* ns -> us */
	st->mean /= 1e3;
	st->stddev /= 1e3;
	st->min /= 1e3;
	st->max /= 1e3;
	st->median /= 1e3;
	st->p99 /= 1e3;
}

/* One round trip: send out, read the echo into in; dies on failure. */
static void round_trip(int fd, const unsigned char *out, unsigned char *in,
		       size_t size)
{
	ssize_t n;

	if (write_full(fd, out, size))
		bench_die(EXIT_RUNTIME, "send: %s", io_strerror(errno));
	n = read_full(fd, in, size);
	if (n < 0)
		bench_die(EXIT_RUNTIME, "recv: %s", io_strerror(errno));
	if ((size_t)n < size)
		bench_die(EXIT_RUNTIME, "server closed the connection");
}

static void check_echo(const unsigned char *out, const unsigned char *in,
		       size_t size)
{
	if (in[0] != out[0] || in[size - 1] != out[size - 1])
		bench_die(EXIT_RUNTIME, "echo does not match the message sent");
}

static int write_samples(const char *path, const uint64_t *s, size_t n)
{
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		bench_err("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		fprintf(f, "%llu\n", (unsigned long long)s[i]);
	if (fclose(f)) {
		bench_err("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int run_client(const struct bench_opts *o, const struct lat_opts *lo)
{
	unsigned char *out, *in;
	uint64_t *samples, t0, t1, start, end, deadline = 0;
	size_t n = 0, cap;
	unsigned long i;
	struct stats st;
	int fd;

	fd = bench_connect(o, 1);
	if (fd < 0)
		return EXIT_RUNTIME;

	cap = o->duration_ns ? 4096 : lo->iters;
	samples = malloc(cap * sizeof(*samples));
	out = malloc(o->size);
	in = malloc(o->size);
	if (!samples || !out || !in)
		bench_die(EXIT_RUNTIME, "out of memory");
	memset(out, 0x5a, o->size);

	bench_hello_client(fd, o, LAT_MAGIC, LAT_VERSION);

	for (i = 0; i < lo->warmup; i++) {
		out[0] = out[o->size - 1] = (unsigned char)i;
		round_trip(fd, out, in, o->size);
		check_echo(out, in, o->size);
	}
	if (lo->insn_mark)
		nsl_insn_mark();

	start = now_ns();
	if (o->duration_ns)
		deadline = start + o->duration_ns;
	for (i = 0;; i++) {
		if (!o->duration_ns && n == lo->iters)
			break;
		if (n == cap) {
			uint64_t *p;

			if (cap >= MAX_ITERS)
				break;
			cap = cap * 2 < MAX_ITERS ? cap * 2 : MAX_ITERS;
			p = realloc(samples, cap * sizeof(*samples));
			if (!p)
				bench_die(EXIT_RUNTIME, "out of memory after %zu samples",
					  n);
			samples = p;
		}
		out[0] = out[o->size - 1] = (unsigned char)i;
		t0 = now_ns();
		round_trip(fd, out, in, o->size);
		t1 = now_ns();
		samples[n++] = t1 - t0;
		check_echo(out, in, o->size);
		if (deadline && t1 >= deadline)
			break;
	}
	end = now_ns();
	close(fd);

	free(out);
	free(in);
	if (lo->samples_file && write_samples(lo->samples_file, samples, n)) {
		free(samples);
		return EXIT_RUNTIME;
	}
	compute_stats(samples, n, &st);
	free(samples);

	if (o->json) {
		printf("{\"benchmark\":\"lat_tcp\",\"schema\":1,\"host\":");
		json_str(stdout, o->host);
		printf(",\"port\":%u,\"msg_size\":%lu,\"warmup\":%lu,\"n\":%zu,"
		       "\"elapsed_s\":%.6f,\"mean_us\":%.3f,\"median_us\":%.3f,"
		       "\"p99_us\":%.3f,\"min_us\":%.3f,\"max_us\":%.3f,"
		       "\"stddev_us\":%.3f,\"cv\":%.4f}\n",
		       o->port, o->size, lo->warmup, n, (end - start) / 1e9,
		       st.mean, st.median, st.p99, st.min, st.max, st.stddev,
		       st.cv);
	} else {
		printf("lat_tcp: %s port %u, %lu-byte messages, %zu round trips"
		       " (+%lu warm-up) in %.3f s\n",
		       o->host, o->port, o->size, n, lo->warmup,
		       (end - start) / 1e9);
		printf("  mean %.3f us  median %.3f us  p99 %.3f us"
		       "  min %.3f us  max %.3f us  stddev %.3f us  CV %.4f\n",
		       st.mean, st.median, st.p99, st.min, st.max, st.stddev,
		       st.cv);
	}
	return bench_flush_stdout() ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {
		.port = DEFAULT_PORT,
		.size = DEFAULT_SIZE,
	};
	struct lat_opts lo = {
		.warmup = DEFAULT_WARMUP,
		.iters = DEFAULT_ITERS,
	};

	bench_prog = "lat_tcp";
	signal(SIGPIPE, SIG_IGN);
	bench_parse_args(argc, argv, &cmdline, &o, &lo);
	if (o.server)
		return bench_run_server(&o, 1, lo.verbose, serve_one, &lo);
	return run_client(&o, &lo);
}
