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

/*
 * Listen on addr:port (addr NULL = every address; port 0 = ephemeral).
 * Stores the port actually bound in *bound_port. Returns the fd or -1.
 */
int tcp_listen(const char *addr, unsigned int port, unsigned int *bound_port)
{
	struct addrinfo *res, *ai;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1, zero = 0, err = 0;

	if (resolve(addr, port, 1, &res))
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* a wildcard IPv6 socket also takes IPv4 connections */
		if (ai->ai_family == AF_INET6 && !addr)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero,
				   sizeof(zero));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
		    listen(fd, 16) == 0)
			break;
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		bench_err("cannot listen on %s port %u: %s",
			  addr ? addr : "*", port, strerror(err));
		return -1;
	}
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
	struct addrinfo *res, *ai;
	int fd = -1, err = 0;

	if (resolve(host, port, 0, &res))
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
			    ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		while (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			if (errno == EINTR)
				continue;
			err = errno;
			close(fd);
			fd = -1;
			break;
		}
		if (fd >= 0)
			break;
	}
	freeaddrinfo(res);
	if (fd < 0)
		bench_err("connect to %s port %u: %s", host, port,
			  strerror(err));
	return fd;
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
