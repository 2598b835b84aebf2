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
#define REPORT_LEN	24
#define DEFAULT_PORT	31301
#define DEFAULT_SIZE	(128UL << 10)
#define DEFAULT_TIME_NS	(10ULL * 1000000000ULL)

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

static const struct bench_cmdline cmdline = {
	.usage =
		"usage: tcp_stream -s [-p port] [-b addr] [-n] [--json] [--port-file FILE]\n"
		"       tcp_stream -c host [-p port] [-m size] [-t seconds] [--json]\n",
	.json_mode	= BENCH_EITHER,
	.time_example	= "10",
	.client_opts	= "-m and -t",
	.server_opts	= "-b, -n, --port-file",
};

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

/* ---- server ---------------------------------------------------------- */

/* Sink one client until EOF, then report. Returns 0 if it went cleanly. */
static int serve_one(int fd, const char *peer, unsigned int port, void *priv)
{
	const struct bench_opts *o = priv;
	unsigned char report[REPORT_LEN];
	struct cpu_snap a, b;
	struct cpu_use u;
	uint64_t bytes = 0;
	unsigned char *buf;
	uint32_t size;
	ssize_t n;
	int rc = -1;

	size = bench_hello_recv(fd, peer, STREAM_MAGIC, STREAM_VERSION);
	if (!size)
		return -1;
	buf = bench_msg_buf(peer, size);
	if (!buf)
		return -1;
	cpu_snap(&a);
	if (bench_hello_accept(fd, peer, STREAM_MAGIC, STREAM_VERSION, size))
		goto out;
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
	rc = bench_flush_stdout();
out:
	free(buf);
	return rc;
}

/* ---- client ---------------------------------------------------------- */

static int run_client(const struct bench_opts *o)
{
	unsigned char report[REPORT_LEN];
	uint64_t bytes = 0, sends = 0, srv_bytes, deadline, send_end;
	struct cpu_snap a, b;
	struct cpu_use u;
	unsigned char *buf;
	ssize_t r;
	int fd;

	fd = bench_connect(o, 0);
	if (fd < 0)
		return EXIT_RUNTIME;

	buf = malloc(o->size);
	if (!buf)
		bench_die(EXIT_RUNTIME, "out of memory");
	memset(buf, 0xa5, o->size);

	bench_hello_client(fd, o, STREAM_MAGIC, STREAM_VERSION);

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
	return bench_flush_stdout() ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o = {
		.port = DEFAULT_PORT,
		.size = DEFAULT_SIZE,
		.duration_ns = DEFAULT_TIME_NS,
	};

	bench_prog = "tcp_stream";
	signal(SIGPIPE, SIG_IGN);
	bench_parse_args(argc, argv, &cmdline, &o, NULL);
	if (o.server)
		return bench_run_server(&o, 0, false, serve_one, &o);
	return run_client(&o);
}
