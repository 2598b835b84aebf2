/* SPDX-License-Identifier: GPL-2.0 */
/*
 * common.h - helpers shared by the NetSlice benchmark workloads
 *
 * Strict argument parsing, EINTR-safe full-length socket I/O, TCP
 * listen/connect by name, a monotonic clock and a JSON string writer.
 * Everything here reports failures as one line on stderr, prefixed with
 * the program name, and returns -1; callers decide whether to exit.
 */
#ifndef NETSLICE_BENCH_COMMON_H
#define NETSLICE_BENCH_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* exit status: runtime failure / usage or argument error */
#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

/* the largest message either benchmark accepts (16 MiB) */
#define BENCH_MAX_MSG	(16UL << 20)

/* connected sockets give up after this long without progress */
#define BENCH_IO_TIMEOUT_S	30

extern const char *bench_prog;

void bench_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

void bad_option(int c, char **argv) __attribute__((noreturn));
int parse_ulong(const char *s, unsigned long min, unsigned long max,
		unsigned long *out);
int parse_size(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out);
int parse_duration_ns(const char *s, uint64_t *out);

uint64_t now_ns(void);

ssize_t read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);
const char *io_strerror(int err);

int tcp_listen(const char *addr, unsigned int port, unsigned int *bound_port);
int tcp_connect(const char *host, unsigned int port);
int tcp_accept(int lfd, char *peer, size_t peerlen);
int sock_setup(int fd, int nodelay);
int write_port_file(const char *path, unsigned int port);

void json_str(FILE *f, const char *s);

static inline void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void put_be64(unsigned char *p, uint64_t v)
{
	put_be32(p, v >> 32);
	put_be32(p + 4, (uint32_t)v);
}

static inline uint64_t get_be64(const unsigned char *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + 4);
}

#endif /* NETSLICE_BENCH_COMMON_H */
