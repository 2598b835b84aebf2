/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --serve's HTTP side: a listening socket and its connections, each
 * non-blocking, for the caller's one poll() loop (serve.c) to wait on
 * with whatever else it waits for (the device).  A request is read
 * whole (its head: GET and HEAD have no body), answered by the caller's
 * function at once, and the answer, made whole before its first byte is
 * sent, goes out as fast as that client takes it; then the connection
 * is closed (HTTP/1.0 and 1.1, "Connection: close").  A slow client
 * holds its own buffer, never the loop; one that says nothing for
 * NS_HTTP_TIMEOUT_MS is dropped.
 */
#ifndef _NS_HTTP_H
#define _NS_HTTP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define NS_HTTP_CONNS		64	/* at once; more wait in the backlog */
#define NS_HTTP_HEAD_MAX	8192	/* a request's head */
#define NS_HTTP_TIMEOUT_MS	10000
#define NS_HTTP_POLLFDS		(NS_HTTP_CONNS + 1)

struct ns_http_req {
	const char *method, *path;	/* the query string cut off */
	const char *accept;		/* the Accept header, or NULL */
};

/* What the caller answers: @body malloc'd (the server frees it). */
struct ns_http_resp {
	int status;			/* 200, 404, ... */
	const char *type;		/* Content-Type */
	char *body;
	size_t len;
};

typedef void (*ns_http_answer_fn)(void *ctx, const struct ns_http_req *req,
				  struct ns_http_resp *resp);

struct ns_http_conn {
	int fd;			/* -1: a free slot */
	size_t got;		/* bytes of the request in @in */
	char *out;		/* the answer, once made */
	size_t out_len, sent;
	int64_t deadline;	/* ms, CLOCK_MONOTONIC */
	char in[NS_HTTP_HEAD_MAX + 1];
};

struct ns_http {
	int fd;			/* listening */
	char where[96];		/* "127.0.0.1:9464", as bound */
	ns_http_answer_fn answer;
	void *ctx;
	struct ns_http_conn conn[NS_HTTP_CONNS];
	int slot[NS_HTTP_POLLFDS];	/* pollfd i's connection, or -1 */
};

/*
 * "[ADDR:]PORT" into @host ("" for ":PORT": every address; no ADDR:
 * 127.0.0.1) and @port; ADDR may be "[v6]".  0, or -1 if malformed.
 */
int ns_http_split(const char *spec, char *host, size_t hlen, char *port,
		  size_t plen);
/* Listen at @spec, answering with @answer: 0, or -1 with @why set. */
int ns_http_listen(struct ns_http *h, const char *spec, ns_http_answer_fn answer,
		   void *ctx, char *why, size_t len);
/* The clock of the deadlines: milliseconds, CLOCK_MONOTONIC. */
int64_t ns_http_now(void);
/* The pollfds to wait on into @p (NS_HTTP_POLLFDS): how many. */
unsigned int ns_http_pollfds(struct ns_http *h, struct pollfd *p);
/* Milliseconds until a connection's deadline, or -1: none. */
int ns_http_timeout(const struct ns_http *h);
/* After poll(): what @p (as ns_http_pollfds() made it) says is ready. */
void ns_http_serve(struct ns_http *h, const struct pollfd *p, unsigned int n);
void ns_http_close(struct ns_http *h);

#endif /* _NS_HTTP_H */
