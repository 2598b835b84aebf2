// SPDX-License-Identifier: GPL-2.0
/*
 * lat_tcp - TCP ping-pong round-trip latency, in the manner of lmbench's
 * lat_tcp: the client sends a message, the server echoes it back, and each
 * round trip is timed with clock_gettime(CLOCK_MONOTONIC).
 *
 *   lat_tcp -s [-p port] [-b addr] [-n] [--port-file FILE] [-v]
 *   lat_tcp -c host [-p port] [-m size] [-W warmup]
 *           [-N iterations | -t seconds] [--json] [--samples FILE]
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

#define LAT_MAGIC	0x4e534c54u	/* "NSLT" */
#define LAT_VERSION	1u
#define HELLO_LEN	16
#define DEFAULT_PORT	31300
#define DEFAULT_SIZE	4
#define DEFAULT_WARMUP	1000
#define DEFAULT_ITERS	10000
#define MAX_ITERS	100000000UL

struct opts {
	bool server;
	const char *host;
	const char *bind_addr;
	const char *port_file;
	const char *samples_file;
	unsigned int port;
	unsigned long size;
	unsigned long warmup;
	unsigned long iters;
	uint64_t duration_ns;
	bool once;
	bool json;
	bool verbose;
};

struct stats {
	double mean, median, p99, min, max, stddev, cv;	/* microseconds */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: lat_tcp -s [-p port] [-b addr] [-n] [--port-file FILE] [-v]\n"
		"       lat_tcp -c host [-p port] [-m size] [-W warmup]\n"
		"               [-N iterations | -t seconds] [--json] [--samples FILE]\n");
}

static void bad_arg(const char *what, const char *val, const char *range)
{
	bench_die(EXIT_USAGE, "bad %s '%s': must be %s", what, val, range);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_PORT_FILE = 256, OPT_SAMPLES };
	static const struct option lopts[] = {
		{ "server",	no_argument,		NULL, 's' },
		{ "client",	required_argument,	NULL, 'c' },
		{ "port",	required_argument,	NULL, 'p' },
		{ "bind",	required_argument,	NULL, 'b' },
		{ "once",	no_argument,		NULL, 'n' },
		{ "size",	required_argument,	NULL, 'm' },
		{ "warmup",	required_argument,	NULL, 'W' },
		{ "iterations",	required_argument,	NULL, 'N' },
		{ "time",	required_argument,	NULL, 't' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "verbose",	no_argument,		NULL, 'v' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "port-file",	required_argument,	NULL, OPT_PORT_FILE },
		{ "samples",	required_argument,	NULL, OPT_SAMPLES },
		{ NULL, 0, NULL, 0 }
	};
	bool port_set = false, client_only = false, server_only = false;
	bool iters_set = false;
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->size = DEFAULT_SIZE;
	o->warmup = DEFAULT_WARMUP;
	o->iters = DEFAULT_ITERS;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sc:p:b:nm:W:N:t:jvh", lopts,
				NULL)) != -1) {
		switch (c) {
		case 's':
			o->server = true;
			break;
		case 'c':
			o->host = optarg;
			break;
		case 'p':
			if (parse_ulong(optarg, 0, 65535, &v))
				bad_arg("port", optarg, "0..65535");
			o->port = (unsigned int)v;
			port_set = true;
			break;
		case 'b':
			o->bind_addr = optarg;
			server_only = true;
			break;
		case 'n':
			o->once = true;
			server_only = true;
			break;
		case 'v':
			o->verbose = true;
			server_only = true;
			break;
		case OPT_PORT_FILE:
			o->port_file = optarg;
			server_only = true;
			break;
		case 'm':
			if (parse_size(optarg, 1, BENCH_MAX_MSG, &o->size))
				bad_arg("message size", optarg,
					"1..16777216 bytes (K/M suffix allowed)");
			client_only = true;
			break;
		case 'W':
			if (parse_ulong(optarg, 0, MAX_ITERS, &o->warmup))
				bad_arg("warm-up count", optarg, "0..100000000");
			client_only = true;
			break;
		case 'N':
			if (parse_ulong(optarg, 1, MAX_ITERS, &o->iters))
				bad_arg("iteration count", optarg,
					"1..100000000");
			iters_set = true;
			client_only = true;
			break;
		case 't':
			if (parse_duration_ns(optarg, &o->duration_ns))
				bad_arg("duration", optarg,
					"seconds, > 0 and <= 86400, e.g. 5 or 0.5");
			client_only = true;
			break;
		case 'j':
			o->json = true;
			client_only = true;
			break;
		case OPT_SAMPLES:
			o->samples_file = optarg;
			client_only = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			bad_option(c, argv);
		}
	}
	if (optind < argc)
		bench_die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (o->server == !!o->host)
		bench_die(EXIT_USAGE, "give exactly one of -s and -c host");
	if (o->server && client_only)
		bench_die(EXIT_USAGE,
			  "-m, -W, -N, -t, --json, --samples are client options");
	if (!o->server && server_only)
		bench_die(EXIT_USAGE,
			  "-b, -n, -v, --port-file are server options");
	if (iters_set && o->duration_ns)
		bench_die(EXIT_USAGE, "give -N or -t, not both");
	if (!o->server && port_set && o->port == 0)
		bench_die(EXIT_USAGE, "bad port '0': a client needs a real port");
}

/* ---- server ---------------------------------------------------------- */

/* Serve one client until it closes. Returns 0 if it went cleanly. */
static int serve_one(int fd, const struct opts *o, const char *peer)
{
	unsigned char hello[HELLO_LEN];
	unsigned long rounds = 0;
	unsigned char *buf;
	uint32_t size;
	ssize_t n;
	int rc = -1;

	n = read_full(fd, hello, sizeof(hello));
	if (n != HELLO_LEN) {
		bench_err("client %s: %s", peer, n < 0 ? io_strerror(errno) :
			  "closed before the hello");
		return -1;
	}
	size = get_be32(hello + 8);
	if (get_be32(hello) != LAT_MAGIC || get_be32(hello + 4) != LAT_VERSION ||
	    size == 0 || size > BENCH_MAX_MSG) {
		bench_err("client %s: bad hello (not lat_tcp %u, or size %u)",
			  peer, LAT_VERSION, size);
		/* answer as what we are, so the client can tell */
		put_be32(hello, LAT_MAGIC);
		put_be32(hello + 4, LAT_VERSION);
		put_be32(hello + 12, 1);
		write_full(fd, hello, sizeof(hello));
		return -1;
	}
	put_be32(hello + 12, 0);
	if (write_full(fd, hello, sizeof(hello))) {
		bench_err("client %s: %s", peer, io_strerror(errno));
		return -1;
	}
	buf = malloc(size);
	if (!buf) {
		bench_err("client %s: out of memory for %u-byte messages",
			  peer, size);
		return -1;
	}
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
	if (o->verbose)
		fprintf(stderr, "%s: client %s: %lu round trips of %u bytes%s\n",
			bench_prog, peer, rounds, size, rc ? " (error)" : "");
	return rc;
}

static int run_server(const struct opts *o)
{
	unsigned int port;
	char peer[80];
	int lfd, fd, rc;

	lfd = tcp_listen(o->bind_addr, o->port, &port);
	if (lfd < 0)
		return EXIT_RUNTIME;
	if (o->port_file && write_port_file(o->port_file, port)) {
		close(lfd);
		return EXIT_RUNTIME;
	}
	if (o->verbose)
		fprintf(stderr, "%s: listening on port %u\n", bench_prog, port);
	for (;;) {
		fd = tcp_accept(lfd, peer, sizeof(peer));
		if (fd < 0) {
			close(lfd);
			return EXIT_RUNTIME;
		}
		rc = -1;
		if (sock_setup(fd, 1) == 0)
			rc = serve_one(fd, o, peer);
		close(fd);
		if (o->once) {
			close(lfd);
			return rc ? EXIT_RUNTIME : 0;
		}
	}
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

static int run_client(const struct opts *o)
{
	unsigned char hello[HELLO_LEN];
	unsigned char *out, *in;
	uint64_t *samples, t0, t1, start, end, deadline = 0;
	size_t n = 0, cap;
	unsigned long i;
	struct stats st;
	ssize_t r;
	int fd;

	fd = tcp_connect(o->host, o->port);
	if (fd < 0)
		return EXIT_RUNTIME;
	if (sock_setup(fd, 1)) {
		close(fd);
		return EXIT_RUNTIME;
	}

	cap = o->duration_ns ? 4096 : o->iters;
	samples = malloc(cap * sizeof(*samples));
	out = malloc(o->size);
	in = malloc(o->size);
	if (!samples || !out || !in)
		bench_die(EXIT_RUNTIME, "out of memory");
	memset(out, 0x5a, o->size);

	put_be32(hello, LAT_MAGIC);
	put_be32(hello + 4, LAT_VERSION);
	put_be32(hello + 8, (uint32_t)o->size);
	put_be32(hello + 12, 0);
	if (write_full(fd, hello, sizeof(hello)))
		bench_die(EXIT_RUNTIME, "send: %s", io_strerror(errno));
	r = read_full(fd, hello, sizeof(hello));
	if (r < 0)
		bench_die(EXIT_RUNTIME, "recv: %s", io_strerror(errno));
	if (r != HELLO_LEN || get_be32(hello) != LAT_MAGIC)
		bench_die(EXIT_RUNTIME, "%s port %u is not a lat_tcp server",
			  o->host, o->port);
	if (get_be32(hello + 12) != 0)
		bench_die(EXIT_RUNTIME, "server refused %lu-byte messages",
			  o->size);

	for (i = 0; i < o->warmup; i++) {
		out[0] = out[o->size - 1] = (unsigned char)i;
		round_trip(fd, out, in, o->size);
		check_echo(out, in, o->size);
	}

	start = now_ns();
	if (o->duration_ns)
		deadline = start + o->duration_ns;
	for (i = 0;; i++) {
		if (!o->duration_ns && n == o->iters)
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
	if (o->samples_file && write_samples(o->samples_file, samples, n)) {
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
		       o->port, o->size, o->warmup, n, (end - start) / 1e9,
		       st.mean, st.median, st.p99, st.min, st.max, st.stddev,
		       st.cv);
	} else {
		printf("lat_tcp: %s port %u, %lu-byte messages, %zu round trips"
		       " (+%lu warm-up) in %.3f s\n",
		       o->host, o->port, o->size, n, o->warmup,
		       (end - start) / 1e9);
		printf("  mean %.3f us  median %.3f us  p99 %.3f us"
		       "  min %.3f us  max %.3f us  stddev %.3f us  CV %.4f\n",
		       st.mean, st.median, st.p99, st.min, st.max, st.stddev,
		       st.cv);
	}
	if (fflush(stdout) || ferror(stdout)) {
		bench_err("cannot write output: %s", strerror(errno));
		return EXIT_RUNTIME;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	bench_prog = "lat_tcp";
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	return o.server ? run_server(&o) : run_client(&o);
}
