// SPDX-License-Identifier: GPL-2.0
/*
 * common.c - helpers shared by the NetSlice benchmark workloads
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "common.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

const char *bench_prog = "bench";

static void vmsg(const char *fmt, va_list ap)
{
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "%s: %s\n", bench_prog, line);
}

void bench_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

void bench_die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	exit(status);
}

/*
 * Report getopt_long()'s ':' (missing argument) or '?' (unknown option)
 * and exit. Call right after getopt_long() returned c, with opterr = 0 and
 * an optstring that starts with ':'.
 */
void bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];
	char name[64];

	if (strncmp(arg, "--", 2))
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%s", arg);
	if (c == ':')
		bench_die(EXIT_USAGE, "option '%s' needs an argument", name);
	bench_die(EXIT_USAGE, "bad option '%s' (try -h)", name);
}

void bad_arg(const char *what, const char *val, const char *range)
{
	bench_die(EXIT_USAGE, "bad %s '%s': must be %s", what, val, range);
}

/*
 * Parse a decimal unsigned integer in [min, max]. The whole string must be
 * digits: no sign, no leading blanks, no trailing garbage, no overflow.
 */
int parse_ulong(const char *s, unsigned long min, unsigned long max,
		unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * Like parse_ulong, but accepts one binary suffix: k/K (KiB), m/M (MiB).
 * "4", "1000", "128K", "1M".
 */
int parse_size(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out)
{
	unsigned long v, mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno)
		return -1;
	if (*end == 'k' || *end == 'K')
		mult = 1UL << 10;
	else if (*end == 'm' || *end == 'M')
		mult = 1UL << 20;
	if (mult != 1)
		end++;
	if (*end != '\0' || v > ULONG_MAX / mult)
		return -1;
	v *= mult;
	if (v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * Parse seconds as "S" or "S.F" (at most 9 fractional digits) into
 * nanoseconds; 0 < value <= 1 day.
 */
int parse_duration_ns(const char *s, uint64_t *out)
{
	unsigned long sec;
	uint64_t frac = 0, scale = 1000000000ULL;
	char ipart[32];
	const char *dot;
	size_t ilen;

	if (!s)
		return -1;
	dot = strchr(s, '.');
	ilen = dot ? (size_t)(dot - s) : strlen(s);
	if (ilen == 0 || ilen >= sizeof(ipart))
		return -1;
	memcpy(ipart, s, ilen);
	ipart[ilen] = '\0';
	if (parse_ulong(ipart, 0, 86400, &sec))
		return -1;
	if (dot) {
		const char *p = dot + 1;

		if (*p == '\0' || strlen(p) > 9)
			return -1;
		for (; *p; p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	*out = (uint64_t)sec * 1000000000ULL + frac;
	if (*out == 0 || *out > 86400ULL * 1000000000ULL)
		return -1;
	return 0;
}

#define SHARED_SHORTOPTS	":sc:p:b:nm:t:jh"

static const struct option shared_longopts[] = {
	{ "server",	no_argument,		NULL, 's' },
	{ "client",	required_argument,	NULL, 'c' },
	{ "port",	required_argument,	NULL, 'p' },
	{ "bind",	required_argument,	NULL, 'b' },
	{ "once",	no_argument,		NULL, 'n' },
	{ "size",	required_argument,	NULL, 'm' },
	{ "time",	required_argument,	NULL, 't' },
	{ "json",	no_argument,		NULL, 'j' },
	{ "help",	no_argument,		NULL, 'h' },
	{ "port-file",	required_argument,	NULL, BENCH_OPT_PORT_FILE },
};

/* room for a program's own long options next to the shared ones */
#define MAX_OWN_LONGOPTS	16

/*
 * Parse the command line into *o, which holds the program's defaults, and
 * exit on -h or on any usage error. The program's own options go to
 * cl->parse_opt() with priv.
 */
void bench_parse_args(int argc, char **argv, const struct bench_cmdline *cl,
		      struct bench_opts *o, void *priv)
{
	struct option lopts[ARRAY_SIZE(shared_longopts) + MAX_OWN_LONGOPTS + 1];
	bool port_set = false, client_only = false, server_only = false;
	size_t i, nlopts = ARRAY_SIZE(shared_longopts);
	enum bench_mode mode;
	char sopts[64];
	unsigned long v;
	int c;

	memcpy(lopts, shared_longopts, sizeof(shared_longopts));
	for (i = 0; cl->longopts && cl->longopts[i].name; i++) {
		if (nlopts == ARRAY_SIZE(lopts) - 1)
			bench_die(EXIT_RUNTIME, "too many options");
		lopts[nlopts++] = cl->longopts[i];
	}
	memset(&lopts[nlopts], 0, sizeof(lopts[nlopts]));
	if (snprintf(sopts, sizeof(sopts), "%s%s", SHARED_SHORTOPTS,
		     cl->shortopts ? cl->shortopts : "") >= (int)sizeof(sopts))
		bench_die(EXIT_RUNTIME, "too many options");

	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		mode = BENCH_EITHER;
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
			mode = BENCH_SERVER;
			break;
		case 'n':
			o->once = true;
			mode = BENCH_SERVER;
			break;
		case BENCH_OPT_PORT_FILE:
			o->port_file = optarg;
			mode = BENCH_SERVER;
			break;
		case 'm':
			if (parse_size(optarg, 1, BENCH_MAX_MSG, &o->size))
				bad_arg("message size", optarg,
					"1..16777216 bytes (K/M suffix allowed)");
			mode = BENCH_CLIENT;
			break;
		case 't':
			if (parse_duration_ns(optarg, &o->duration_ns))
				bench_die(EXIT_USAGE,
					  "bad duration '%s': must be seconds, > 0 and <= 86400, e.g. %s or 0.5",
					  optarg, cl->time_example);
			mode = BENCH_CLIENT;
			break;
		case 'j':
			o->json = true;
			mode = cl->json_mode;
			break;
		case 'h':
			fputs(cl->usage, stdout);
			exit(0);
		case ':':
		case '?':
			bad_option(c, argv);
		default:
			mode = cl->parse_opt(c, optarg, priv);
		}
		client_only |= mode == BENCH_CLIENT;
		server_only |= mode == BENCH_SERVER;
	}
	if (optind < argc)
		bench_die(EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
	if (o->server == !!o->host)
		bench_die(EXIT_USAGE, "give exactly one of -s and -c host");
	if (o->server && client_only)
		bench_die(EXIT_USAGE, "%s are client options", cl->client_opts);
	if (!o->server && server_only)
		bench_die(EXIT_USAGE, "%s are server options", cl->server_opts);
	if (cl->check)
		cl->check(o, priv);
	if (!o->server && port_set && o->port == 0)
		bench_die(EXIT_USAGE, "bad port '0': a client needs a real port");
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Read exactly len bytes, retrying on EINTR and short reads.
 * Returns len on success, the number of bytes read before EOF if the peer
 * closed early (0 = clean EOF at a message boundary), -1 with errno set on
 * error (EAGAIN means the I/O timeout expired).
 */
ssize_t read_full(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = recv(fd, p + done, len - done, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * Write exactly len bytes, retrying on EINTR and short writes. Never raises
 * SIGPIPE (MSG_NOSIGNAL); a closed peer gives -1 with errno EPIPE.
 */
int write_full(int fd, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t done = 0;

	while (done < len) {
		ssize_t n = send(fd, p + done, len - done, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return 0;
}

const char *io_strerror(int err)
{
	static char buf[64];

	if (err == EAGAIN || err == EWOULDBLOCK) {
		snprintf(buf, sizeof(buf), "timed out (no progress for %d s)",
			 BENCH_IO_TIMEOUT_S);
		return buf;
	}
	return strerror(err);
}

static int resolve(const char *host, unsigned int port, int passive,
		   struct addrinfo **res)
{
	struct addrinfo hints;
	char serv[16];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(serv, sizeof(serv), "%u", port);
	rc = getaddrinfo(host, serv, &hints, res);
	if (rc) {
		bench_err("bad host '%s': %s", host ? host : "*",
			  rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	return 0;
}

static int bind_listen(int fd, const struct addrinfo *ai, bool wildcard)
{
	int one = 1, zero = 0;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* a wildcard IPv6 socket also takes IPv4 connections */
	if (ai->ai_family == AF_INET6 && wildcard)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16))
		return -1;
	return 0;
}

static int connect_retry(int fd, const struct addrinfo *ai)
{
	while (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		if (errno != EINTR)
			return -1;
	}
	return 0;
}

/*
 * A TCP socket for host:port, trying every address until one works:
 * listening there if passive (host NULL = every address), else connected
 * there. Returns the fd or -1.
 */
static int tcp_socket(const char *host, unsigned int port, int passive)
{
	struct addrinfo *res, *ai;
	int fd = -1, err = 0, rc;

	if (resolve(host, port, passive, &res))
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		rc = passive ? bind_listen(fd, ai, !host) : connect_retry(fd, ai);
		if (rc == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		bench_err("%s %s port %u: %s",
			  passive ? "cannot listen on" : "connect to",
			  host ? host : "*", port, strerror(err));
	return fd;
}

/*
 * Listen on addr:port (addr NULL = every address; port 0 = ephemeral).
 * Stores the port actually bound in *bound_port. Returns the fd or -1.
 */
int tcp_listen(const char *addr, unsigned int port, unsigned int *bound_port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd;

	fd = tcp_socket(addr, port, 1);
	if (fd < 0)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl)) {
		bench_err("getsockname: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (ss.ss_family == AF_INET6)
		*bound_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	else
		*bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

/* Connect to host:port, trying every address. Returns the fd or -1. */
int tcp_connect(const char *host, unsigned int port)
{
	return tcp_socket(host, port, 0);
}

/*
 * Accept one connection, retrying on EINTR and on errors that concern only
 * the aborted connection. Writes "addr:port" of the peer into peer.
 */
int tcp_accept(int lfd, char *peer, size_t peerlen)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN], serv[16];
	socklen_t sl;
	int fd;

	for (;;) {
		sl = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		bench_err("accept: %s", strerror(errno));
		return -1;
	}
	if (getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), serv,
			sizeof(serv), NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(peer, peerlen, "?");
	else if (ss.ss_family == AF_INET6)
		snprintf(peer, peerlen, "[%s]:%s", host, serv);
	else
		snprintf(peer, peerlen, "%s:%s", host, serv);
	return fd;
}

/* I/O timeouts on a connected socket, and TCP_NODELAY if asked. */
int sock_setup(int fd, int nodelay)
{
	struct timeval tv = { .tv_sec = BENCH_IO_TIMEOUT_S };
	int one = 1;

	if (nodelay &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		bench_err("setsockopt TCP_NODELAY: %s", strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		bench_err("setsockopt SO_RCVTIMEO/SO_SNDTIMEO: %s",
			  strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Write the bound port, one decimal line, to path; via a temporary file and
 * rename(), so a reader that sees the file sees the whole number.
 */
int write_port_file(const char *path, unsigned int port)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		bench_err("port file name too long");
		return -1;
	}
	f = fopen(tmp, "w");
	if (!f) {
		bench_err("cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "%u\n", port);
	if (fclose(f) || rename(tmp, path)) {
		bench_err("cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * Listen as o says and serve clients one at a time, each by serve() on a
 * socket with I/O timeouts (and TCP_NODELAY if nodelay); forever, or only
 * the first if o->once. Says on stderr where it listens if verbose.
 * Returns the exit status.
 */
int bench_run_server(const struct bench_opts *o, int nodelay, bool verbose,
		     bench_serve_fn serve, void *priv)
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
	if (verbose)
		fprintf(stderr, "%s: listening on port %u\n", bench_prog, port);
	for (;;) {
		fd = tcp_accept(lfd, peer, sizeof(peer));
		if (fd < 0) {
			close(lfd);
			return EXIT_RUNTIME;
		}
		rc = -1;
		if (sock_setup(fd, nodelay) == 0)
			rc = serve(fd, peer, port, priv);
		close(fd);
		if (o->once) {
			close(lfd);
			return rc ? EXIT_RUNTIME : 0;
		}
	}
}

/*
 * Connect to o->host, o->port and set the socket up as bench_run_server()
 * does. Returns the fd or -1.
 */
int bench_connect(const struct bench_opts *o, int nodelay)
{
	int fd;

	fd = tcp_connect(o->host, o->port);
	if (fd >= 0 && sock_setup(fd, nodelay)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Server side of the hello: read the client's and check that it speaks
 * magic, version. Returns the message size it asks for, or 0 after an
 * error line (and, to a client of another kind, an answer that refuses it
 * as what we are, so that it can tell).
 */
uint32_t bench_hello_recv(int fd, const char *peer, uint32_t magic,
			  uint32_t version)
{
	unsigned char hello[BENCH_HELLO_LEN];
	uint32_t size;
	ssize_t n;

	n = read_full(fd, hello, sizeof(hello));
	if (n != BENCH_HELLO_LEN) {
		bench_err("client %s: %s", peer, n < 0 ? io_strerror(errno) :
			  "closed before the hello");
		return 0;
	}
	size = get_be32(hello + 8);
	if (get_be32(hello) != magic || get_be32(hello + 4) != version ||
	    size == 0 || size > BENCH_MAX_MSG) {
		bench_err("client %s: bad hello (not %s %u, or size %u)",
			  peer, bench_prog, version, size);
		/* answer as what we are, so the client can tell */
		put_be32(hello, magic);
		put_be32(hello + 4, version);
		put_be32(hello + 12, 1);
		write_full(fd, hello, sizeof(hello));
		return 0;
	}
	return size;
}

/* A buffer for a client's size-byte messages; NULL after an error line. */
void *bench_msg_buf(const char *peer, uint32_t size)
{
	void *buf = malloc(size);

	if (!buf)
		bench_err("client %s: out of memory for %u-byte messages",
			  peer, size);
	return buf;
}

/* Accept the client's hello by sending it back. Returns 0 or -1. */
int bench_hello_accept(int fd, const char *peer, uint32_t magic,
		       uint32_t version, uint32_t size)
{
	unsigned char hello[BENCH_HELLO_LEN];

	put_be32(hello, magic);
	put_be32(hello + 4, version);
	put_be32(hello + 8, size);
	put_be32(hello + 12, 0);
	if (write_full(fd, hello, sizeof(hello))) {
		bench_err("client %s: %s", peer, io_strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Client side of the hello: offer o->size-byte messages to a server that
 * must speak magic, version. Dies unless it accepts.
 */
void bench_hello_client(int fd, const struct bench_opts *o, uint32_t magic,
			uint32_t version)
{
	unsigned char hello[BENCH_HELLO_LEN];
	ssize_t r;

	put_be32(hello, magic);
	put_be32(hello + 4, version);
	put_be32(hello + 8, (uint32_t)o->size);
	put_be32(hello + 12, 0);
	if (write_full(fd, hello, sizeof(hello)))
		bench_die(EXIT_RUNTIME, "send: %s", io_strerror(errno));
	r = read_full(fd, hello, sizeof(hello));
	if (r < 0)
		bench_die(EXIT_RUNTIME, "recv: %s", io_strerror(errno));
	if (r != BENCH_HELLO_LEN || get_be32(hello) != magic)
		bench_die(EXIT_RUNTIME, "%s port %u is not a %s server",
			  o->host, o->port, bench_prog);
	if (get_be32(hello + 12) != 0)
		bench_die(EXIT_RUNTIME, "server refused %lu-byte messages",
			  o->size);
}

/* Flush stdout; -1 after an error line if any output was lost. */
int bench_flush_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		bench_err("cannot write output: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Write s as a JSON string literal, quotes included. */
void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}
