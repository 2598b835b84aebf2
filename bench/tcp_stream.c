// SPDX-License-Identifier: GPL-2.0
/*
 * tcp_stream - bulk TCP throughput, in the manner of netperf's TCP_STREAM:
 * the client (source) writes fixed-size messages for a fixed time, the
 * server (sink) reads and discards them and reports what it received.
 *
 *   tcp_stream -s [-p port] [-b addr] [-n] [--json] [--port-file FILE]
 *   tcp_stream -c host [-p port] [-m size] [-t seconds] [--json]
 *
 * Options
 *   -s, --server          sink: serve clients one at a time, forever; one
 *                         report per client on stdout
 *   -c, --client HOST     source: send to HOST (name or address)
 *   -p, --port PORT       TCP port (default 31301; 0 = ephemeral, server only)
 *   -b, --bind ADDR       server: listen on ADDR only (default: every address)
 *   -n, --once            server: exit after the first client; the exit
 *                         status says whether that client was served cleanly
 *       --port-file FILE  server: write the bound port to FILE once listening
 *   -m, --size BYTES      bytes per send() call, 1..16M, suffix K/M = KiB/MiB
 *                         (default 128K; see below)
 *   -t, --time SECONDS    how long to send ("10", "0.5"; default 10, as
 *                         netperf's -l)
 *   -j, --json            one JSON object per report instead of text
 *
 * Message size: netperf sends with the socket's send buffer size, which
 * depends on the kernel's defaults and autotuning; a fixed 128 KiB keeps
 * runs comparable across kernel configurations, is large enough that the
 * per-call cost is small next to the copy, and spans many MSS-sized
 * segments (and a few GSO super-packets) per call. The sink reads with the
 * same size. Socket buffers are the kernel's defaults.
 *
 * Protocol: the client sends a 16-byte hello (magic "NSTS", protocol
 * version, message size, 0; big-endian 32-bit words), the server answers
 * with the same words (last word 0 = accepted); the client then sends for
 * the duration, shuts down its write side, and the server, at EOF, answers
 * with a 24-byte report (magic, 0, bytes received as 64 bits, its elapsed
 * ns as 64 bits). The client fails if the server's count differs from its
 * own.
 *
 * Timing: the client's elapsed time runs from the server's hello answer to
 * the arrival of its report, so every byte counted has been read by the
 * sink (netperf likewise waits for the remote close); throughput is
 * bytes * 8 / elapsed / 10^6 (Mbit/s, decimal as in netperf). The
 * server's elapsed time runs from its hello answer to EOF.
 *
 * CPU: cpu_proc_pct is this process's getrusage() user+system time over
 * the elapsed time, in percent of one CPU; cpu_system_pct is the busy
 * share of all CPUs from /proc/stat deltas over the same interval
 * (busy = everything but idle and iowait), 0..100, null if /proc/stat
 * cannot be read.
 *
 * JSON output (schema 1; one line per report; keys always present, in this
 * order). Client:
 *   "benchmark" "tcp_stream", "schema" 1, "role" "client",
 *   "host" string as given to -c, "port", "msg_size",
 *   "duration_s" requested, "elapsed_s" measured (see Timing),
 *   "send_s" time spent in the send loop, "sends" send calls completed,
 *   "bytes_sent", "bytes_received_by_server", "throughput_mbps",
 *   "cpu_proc_pct", "cpu_proc_user_s", "cpu_proc_sys_s",
 *   "cpu_system_pct", "ncpus"
 * Server:
 *   "benchmark" "tcp_stream", "schema" 1, "role" "server",
 *   "peer" "addr:port", "port" bound port, "msg_size",
 *   "bytes_received", "elapsed_s", "throughput_mbps",
 *   "cpu_proc_pct", "cpu_proc_user_s", "cpu_proc_sys_s",
 *   "cpu_system_pct", "ncpus"
 * Fields are only ever added, never renamed or removed, within a schema.
 *
 * Exit status: 0 success, 1 runtime error (connection refused, reset,
 * timeout after 30 s without progress, byte count mismatch, ...), 2 bad
 * usage or argument. Every error is one line on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "common.h"

#define STREAM_MAGIC	0x4e535453u	/* "NSTS" */
#define STREAM_VERSION	1u
#define HELLO_LEN	16
#define REPORT_LEN	24
#define DEFAULT_PORT	31301
#define DEFAULT_SIZE	(128UL << 10)
#define DEFAULT_TIME_NS	(10ULL * 1000000000ULL)

struct opts {
	bool server;
	const char *host;
	const char *bind_addr;
	const char *port_file;
	unsigned int port;
	unsigned long size;
	uint64_t duration_ns;
	bool once;
	bool json;
};

struct cpu_snap {
	uint64_t t_ns;
	double proc_user_s, proc_sys_s;
	unsigned long long sys_busy, sys_total;
	bool sys_ok;
};

struct cpu_use {
	double elapsed_s;
	double proc_pct, proc_user_s, proc_sys_s;
	double sys_pct;
	bool sys_ok;
	long ncpus;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tcp_stream -s [-p port] [-b addr] [-n] [--json] [--port-file FILE]\n"
		"       tcp_stream -c host [-p port] [-m size] [-t seconds] [--json]\n");
}

static void bad_arg(const char *what, const char *val, const char *range)
{
	bench_die(EXIT_USAGE, "bad %s '%s': must be %s", what, val, range);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	enum { OPT_PORT_FILE = 256 };
	static const struct option lopts[] = {
		{ "server",	no_argument,		NULL, 's' },
		{ "client",	required_argument,	NULL, 'c' },
		{ "port",	required_argument,	NULL, 'p' },
		{ "bind",	required_argument,	NULL, 'b' },
		{ "once",	no_argument,		NULL, 'n' },
		{ "size",	required_argument,	NULL, 'm' },
		{ "time",	required_argument,	NULL, 't' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "port-file",	required_argument,	NULL, OPT_PORT_FILE },
		{ NULL, 0, NULL, 0 }
	};
	bool port_set = false, client_only = false, server_only = false;
	unsigned long v;
	int c;

	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->size = DEFAULT_SIZE;
	o->duration_ns = DEFAULT_TIME_NS;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sc:p:b:nm:t:jh", lopts,
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
		case 't':
			if (parse_duration_ns(optarg, &o->duration_ns))
				bad_arg("duration", optarg,
					"seconds, > 0 and <= 86400, e.g. 10 or 0.5");
			client_only = true;
			break;
		case 'j':
			o->json = true;
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
		bench_die(EXIT_USAGE, "-m and -t are client options");
	if (!o->server && server_only)
		bench_die(EXIT_USAGE, "-b, -n, --port-file are server options");
	if (!o->server && port_set && o->port == 0)
		bench_die(EXIT_USAGE, "bad port '0': a client needs a real port");
}

/* ---- CPU accounting -------------------------------------------------- */

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Aggregate "cpu" line: user nice system idle iowait irq softirq steal. */
static bool read_proc_stat(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n, i;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 4)
		return false;
	*total = 0;
	for (i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];
	return true;
}

static void cpu_snap(struct cpu_snap *s)
{
	struct rusage ru;

	s->sys_ok = read_proc_stat(&s->sys_busy, &s->sys_total);
	getrusage(RUSAGE_SELF, &ru);
	s->proc_user_s = tv_s(&ru.ru_utime);
	s->proc_sys_s = tv_s(&ru.ru_stime);
	s->t_ns = now_ns();
}

static void cpu_diff(const struct cpu_snap *a, const struct cpu_snap *b,
		     struct cpu_use *u)
{
	u->elapsed_s = (double)(b->t_ns - a->t_ns) / 1e9;
	u->proc_user_s = b->proc_user_s - a->proc_user_s;
	u->proc_sys_s = b->proc_sys_s - a->proc_sys_s;
	u->proc_pct = u->elapsed_s > 0 ?
		100 * (u->proc_user_s + u->proc_sys_s) / u->elapsed_s : 0;
	u->sys_ok = a->sys_ok && b->sys_ok && b->sys_total > a->sys_total;
	u->sys_pct = u->sys_ok ? 100.0 * (double)(b->sys_busy - a->sys_busy) /
				 (double)(b->sys_total - a->sys_total) : 0;
	u->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
}

static void print_cpu_json(const struct cpu_use *u)
{
	printf(",\"cpu_proc_pct\":%.2f,\"cpu_proc_user_s\":%.6f,"
	       "\"cpu_proc_sys_s\":%.6f,\"cpu_system_pct\":",
	       u->proc_pct, u->proc_user_s, u->proc_sys_s);
	if (u->sys_ok)
		printf("%.2f", u->sys_pct);
	else
		printf("null");
	printf(",\"ncpus\":%ld}\n", u->ncpus);
}

static void print_cpu_text(const struct cpu_use *u)
{
	printf("  cpu: this process %.1f%% of one CPU (user %.3f s, sys %.3f s),"
	       " system ", u->proc_pct, u->proc_user_s, u->proc_sys_s);
	if (u->sys_ok)
		printf("%.1f%% of %ld CPUs\n", u->sys_pct, u->ncpus);
	else
		printf("n/a (/proc/stat unreadable)\n");
}

static double mbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes * 8 / secs / 1e6 : 0;
}

static int flush_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		bench_err("cannot write output: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- server ---------------------------------------------------------- */

/* Sink one client until EOF, then report. Returns 0 if it went cleanly. */
static int serve_one(int fd, const struct opts *o, const char *peer,
		     unsigned int port)
{
	unsigned char hello[HELLO_LEN], report[REPORT_LEN];
	struct cpu_snap a, b;
	struct cpu_use u;
	uint64_t bytes = 0;
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
	if (get_be32(hello) != STREAM_MAGIC ||
	    get_be32(hello + 4) != STREAM_VERSION ||
	    size == 0 || size > BENCH_MAX_MSG) {
		bench_err("client %s: bad hello (not tcp_stream %u, or size %u)",
			  peer, STREAM_VERSION, size);
		/* answer as what we are, so the client can tell */
		put_be32(hello, STREAM_MAGIC);
		put_be32(hello + 4, STREAM_VERSION);
		put_be32(hello + 12, 1);
		write_full(fd, hello, sizeof(hello));
		return -1;
	}
	buf = malloc(size);
	if (!buf) {
		bench_err("client %s: out of memory for %u-byte messages",
			  peer, size);
		return -1;
	}
	put_be32(hello + 12, 0);
	cpu_snap(&a);
	if (write_full(fd, hello, sizeof(hello))) {
		bench_err("client %s: %s", peer, io_strerror(errno));
		goto out;
	}
	for (;;) {
		n = recv(fd, buf, size, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			bench_err("client %s: recv: %s", peer,
				  io_strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		bytes += (uint64_t)n;
	}
	cpu_snap(&b);
	cpu_diff(&a, &b, &u);

	put_be32(report, STREAM_MAGIC);
	put_be32(report + 4, 0);
	put_be64(report + 8, bytes);
	put_be64(report + 16, b.t_ns - a.t_ns);
	if (write_full(fd, report, sizeof(report))) {
		bench_err("client %s: sending the report: %s", peer,
			  io_strerror(errno));
		goto out;
	}

	if (o->json) {
		printf("{\"benchmark\":\"tcp_stream\",\"schema\":1,"
		       "\"role\":\"server\",\"peer\":");
		json_str(stdout, peer);
		printf(",\"port\":%u,\"msg_size\":%u,\"bytes_received\":%llu,"
		       "\"elapsed_s\":%.6f,\"throughput_mbps\":%.2f",
		       port, size, (unsigned long long)bytes, u.elapsed_s,
		       mbps(bytes, u.elapsed_s));
		print_cpu_json(&u);
	} else {
		printf("tcp_stream: client %s: received %llu bytes in %.3f s,"
		       " %.2f Mbit/s (%u-byte reads)\n", peer,
		       (unsigned long long)bytes, u.elapsed_s,
		       mbps(bytes, u.elapsed_s), size);
		print_cpu_text(&u);
	}
	rc = flush_stdout();
out:
	free(buf);
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
	for (;;) {
		fd = tcp_accept(lfd, peer, sizeof(peer));
		if (fd < 0) {
			close(lfd);
			return EXIT_RUNTIME;
		}
		rc = -1;
		if (sock_setup(fd, 0) == 0)
			rc = serve_one(fd, o, peer, port);
		close(fd);
		if (o->once) {
			close(lfd);
			return rc ? EXIT_RUNTIME : 0;
		}
	}
}

/* ---- client ---------------------------------------------------------- */

static int run_client(const struct opts *o)
{
	unsigned char hello[HELLO_LEN], report[REPORT_LEN];
	uint64_t bytes = 0, sends = 0, srv_bytes, deadline, send_end;
	struct cpu_snap a, b;
	struct cpu_use u;
	unsigned char *buf;
	ssize_t r;
	int fd;

	fd = tcp_connect(o->host, o->port);
	if (fd < 0)
		return EXIT_RUNTIME;
	if (sock_setup(fd, 0)) {
		close(fd);
		return EXIT_RUNTIME;
	}

	buf = malloc(o->size);
	if (!buf)
		bench_die(EXIT_RUNTIME, "out of memory");
	memset(buf, 0xa5, o->size);

	put_be32(hello, STREAM_MAGIC);
	put_be32(hello + 4, STREAM_VERSION);
	put_be32(hello + 8, (uint32_t)o->size);
	put_be32(hello + 12, 0);
	if (write_full(fd, hello, sizeof(hello)))
		bench_die(EXIT_RUNTIME, "send: %s", io_strerror(errno));
	r = read_full(fd, hello, sizeof(hello));
	if (r < 0)
		bench_die(EXIT_RUNTIME, "recv: %s", io_strerror(errno));
	if (r != HELLO_LEN || get_be32(hello) != STREAM_MAGIC)
		bench_die(EXIT_RUNTIME, "%s port %u is not a tcp_stream server",
			  o->host, o->port);
	if (get_be32(hello + 12) != 0)
		bench_die(EXIT_RUNTIME, "server refused %lu-byte messages",
			  o->size);

	cpu_snap(&a);
	deadline = a.t_ns + o->duration_ns;
	do {
		if (write_full(fd, buf, o->size))
			bench_die(EXIT_RUNTIME, "send: %s", io_strerror(errno));
		bytes += o->size;
		sends++;
		send_end = now_ns();
	} while (send_end < deadline);

	while (shutdown(fd, SHUT_WR)) {
		if (errno != EINTR)
			bench_die(EXIT_RUNTIME, "shutdown: %s", strerror(errno));
	}
	r = read_full(fd, report, sizeof(report));
	if (r < 0)
		bench_die(EXIT_RUNTIME, "waiting for the server's report: %s",
			  io_strerror(errno));
	if (r != REPORT_LEN || get_be32(report) != STREAM_MAGIC)
		bench_die(EXIT_RUNTIME, "server closed without a report");
	cpu_snap(&b);
	close(fd);
	free(buf);
	cpu_diff(&a, &b, &u);

	srv_bytes = get_be64(report + 8);
	if (srv_bytes != bytes)
		bench_die(EXIT_RUNTIME, "server received %llu bytes, %llu sent",
			  (unsigned long long)srv_bytes,
			  (unsigned long long)bytes);

	if (o->json) {
		printf("{\"benchmark\":\"tcp_stream\",\"schema\":1,"
		       "\"role\":\"client\",\"host\":");
		json_str(stdout, o->host);
		printf(",\"port\":%u,\"msg_size\":%lu,\"duration_s\":%.6f,"
		       "\"elapsed_s\":%.6f,\"send_s\":%.6f,\"sends\":%llu,"
		       "\"bytes_sent\":%llu,\"bytes_received_by_server\":%llu,"
		       "\"throughput_mbps\":%.2f",
		       o->port, o->size, (double)o->duration_ns / 1e9,
		       u.elapsed_s, (double)(send_end - a.t_ns) / 1e9,
		       (unsigned long long)sends, (unsigned long long)bytes,
		       (unsigned long long)srv_bytes,
		       mbps(bytes, u.elapsed_s));
		print_cpu_json(&u);
	} else {
		printf("tcp_stream: %s port %u, %lu-byte sends: %llu bytes in"
		       " %.3f s, %.2f Mbit/s\n", o->host, o->port, o->size,
		       (unsigned long long)bytes, u.elapsed_s,
		       mbps(bytes, u.elapsed_s));
		print_cpu_text(&u);
	}
	return flush_stdout() ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	bench_prog = "tcp_stream";
	signal(SIGPIPE, SIG_IGN);
	parse_args(argc, argv, &o);
	return o.server ? run_server(&o) : run_client(&o);
}
