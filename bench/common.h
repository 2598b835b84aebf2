/* SPDX-License-Identifier: GPL-2.0 */
/*
 * common.h - helpers shared by the NetSlice benchmark workloads
 *
 * The command line both programs share, strict argument parsing,
 * EINTR-safe full-length socket I/O, TCP listen/connect by name, the serve
 * loop and the hello exchange, a monotonic clock and a JSON string writer.
 * Everything here reports failures as one line on stderr, prefixed with
 * the program name, and returns -1; callers decide whether to exit.
 */
#ifndef NETSLICE_BENCH_COMMON_H
#define NETSLICE_BENCH_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
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

/* hello, both ways: magic, protocol version, message size, 0 = accepted */
#define BENCH_HELLO_LEN	16

extern const char *bench_prog;

struct option;

/* The options both programs take; see the comment atop either of them. */
struct bench_opts {
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

/* the mode an option belongs to; giving it in the other mode is an error */
enum bench_mode {
	BENCH_EITHER,
	BENCH_CLIENT,
	BENCH_SERVER,
};

/* getopt_long() values of long-only options; a program's own come after */
enum {
	BENCH_OPT_PORT_FILE = 256,
	BENCH_OPT_OWN,
};

/* What a program adds to the shared command line, and how it words it. */
struct bench_cmdline {
	const char *usage;		/* printed by -h */
	const char *shortopts;		/* its own option letters, getopt syntax */
	const struct option *longopts;	/* its own long options, NULL-ended */
	/* store one of its own options; returns the mode it belongs to */
	enum bench_mode (*parse_opt)(int c, const char *arg, void *priv);
	/* checks of its own, run before the client port check; may be NULL */
	void (*check)(const struct bench_opts *o, void *priv);
	enum bench_mode json_mode;	/* the mode -j belongs to */
	const char *time_example;	/* "5" in "... e.g. 5 or 0.5" */
	const char *client_opts;	/* "-m and -t" in "... are client options" */
	const char *server_opts;	/* likewise for the server options */
};

/* one client on a connected socket: returns 0 if it was served cleanly */
typedef int (*bench_serve_fn)(int fd, const char *peer, unsigned int port,
			      void *priv);

void bench_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

void bad_option(int c, char **argv) __attribute__((noreturn));
void bad_arg(const char *what, const char *val, const char *range)
	__attribute__((noreturn));
int parse_ulong(const char *s, unsigned long min, unsigned long max,
		unsigned long *out);
int parse_size(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out);
int parse_duration_ns(const char *s, uint64_t *out);
void bench_parse_args(int argc, char **argv, const struct bench_cmdline *cl,
		      struct bench_opts *o, void *priv);

uint64_t now_ns(void);

ssize_t read_full(int fd, void *buf, size_t len);
int write_full(int fd, const void *buf, size_t len);
const char *io_strerror(int err);

int tcp_listen(const char *addr, unsigned int port, unsigned int *bound_port);
int tcp_connect(const char *host, unsigned int port);
int tcp_accept(int lfd, char *peer, size_t peerlen);
int sock_setup(int fd, int nodelay);
int write_port_file(const char *path, unsigned int port);

int bench_run_server(const struct bench_opts *o, int nodelay, bool verbose,
		     bench_serve_fn serve, void *priv);
int bench_connect(const struct bench_opts *o, int nodelay);
uint32_t bench_hello_recv(int fd, const char *peer, uint32_t magic,
			  uint32_t version);
void *bench_msg_buf(const char *peer, uint32_t size);
int bench_hello_accept(int fd, const char *peer, uint32_t magic,
		       uint32_t version, uint32_t size);
void bench_hello_client(int fd, const struct bench_opts *o, uint32_t magic,
			uint32_t version);

int bench_flush_stdout(void);
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
