// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "view/http.h"

int64_t ns_http_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int ns_http_split(const char *spec, char *host, size_t hlen, char *port,
		  size_t plen)
{
	const char *colon = strrchr(spec, ':'), *p = colon ? colon + 1 : spec;
	size_t n = colon ? (size_t)(colon - spec) : 0;
	char *end;
	long v;

	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']')
		spec++, n -= 2;		/* [::1] */
	else if (memchr(spec, ':', n))
		return -1;		/* a v6 address wants its brackets */
	if (!*p || strspn(p, "0123456789") != strlen(p) || n >= hlen ||
	    strlen(p) >= plen)
		return -1;
	v = strtol(p, &end, 10);
	if (v > 65535)
		return -1;
	snprintf(host, hlen, "%.*s", (int)n, spec);
	if (!colon)
		snprintf(host, hlen, "127.0.0.1");
	snprintf(port, plen, "%s", p);
	return 0;
}

/* "127.0.0.1:9464", "[::]:9464": where @fd is bound. */
static void bound_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage sa;
	socklen_t sl = sizeof(sa);
	char host[64], port[8];

	if (getsockname(fd, (struct sockaddr *)&sa, &sl) ||
	    getnameinfo((struct sockaddr *)&sa, sl, host, sizeof(host), port,
			sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
}

/* A listening socket at @ai: its fd, or -1 with errno set. */
static int listen_at(const struct addrinfo *ai)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
			SOCK_CLOEXEC, ai->ai_protocol), on = 1, off = 0, err;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (ai->ai_family == AF_INET6)	/* "[::]" takes IPv4 too */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 128))
		return fd;
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

/* @host ("": every address, IPv6's and IPv4's) and @port: fd or -1. */
static int open_listener(const char *host, const char *port, char *why,
			 size_t len)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res, *ai;
	int fd = -1, err, gai;

	gai = getaddrinfo(*host ? host : "::", port, &hints, &res);
	if (gai && !*host)
		gai = getaddrinfo("0.0.0.0", port, &hints, &res);
	if (gai) {
		snprintf(why, len, "%s: %s", *host ? host : "any address",
			 gai_strerror(gai));
		return -1;
	}
	for (ai = res, err = 0; ai && fd < 0; ai = ai->ai_next)
		if ((fd = listen_at(ai)) < 0)
			err = errno;
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(why, len, "%s port %s: %s", *host ? host : "any address",
			 port, strerror(err));
	return fd;
}

int ns_http_listen(struct ns_http *h, const char *spec, ns_http_answer_fn answer,
		   void *ctx, char *why, size_t len)
{
	char host[64], port[8], err[192];

	memset(h, 0, sizeof(*h));
	h->fd = -1;
	for (unsigned int i = 0; i < NS_HTTP_CONNS; i++)
		h->conn[i].fd = -1;
	h->answer = answer;
	h->ctx = ctx;
	if (ns_http_split(spec, host, sizeof(host), port, sizeof(port))) {
		snprintf(why, len, "--serve %s: expected [ADDR:]PORT", spec);
		return -1;
	}
	h->fd = open_listener(host, port, err, sizeof(err));
	if (h->fd < 0) {
		snprintf(why, len, "--serve %s: %s", spec, err);
		return -1;
	}
	bound_name(h->fd, h->where, sizeof(h->where));
	return 0;
}

unsigned int ns_http_pollfds(struct ns_http *h, struct pollfd *p)
{
	unsigned int n = 0, busy = 0;

	for (unsigned int i = 0; i < NS_HTTP_CONNS; i++) {
		struct ns_http_conn *c = &h->conn[i];

		if (c->fd < 0)
			continue;
		busy++;
		h->slot[n] = (int)i;
		p[n++] = (struct pollfd){
			.fd = c->fd, .events = c->out ? POLLOUT : POLLIN,
		};
	}
	/* full: new clients wait in the backlog until a slot frees */
	if (busy < NS_HTTP_CONNS) {
		h->slot[n] = -1;
		p[n++] = (struct pollfd){ .fd = h->fd, .events = POLLIN };
	}
	return n;
}

int ns_http_timeout(const struct ns_http *h)
{
	int64_t first = -1, now = ns_http_now();

	for (unsigned int i = 0; i < NS_HTTP_CONNS; i++)
		if (h->conn[i].fd >= 0 &&
		    (first < 0 || h->conn[i].deadline < first))
			first = h->conn[i].deadline;
	if (first < 0)
		return -1;
	return first > now ? (int)(first - now) : 0;
}

static void drop(struct ns_http_conn *c)
{
	if (c->out)
		shutdown(c->fd, SHUT_WR);
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
}

static void take_clients(struct ns_http *h)
{
	for (unsigned int i = 0; i < NS_HTTP_CONNS; i++) {
		struct ns_http_conn *c = &h->conn[i];

		if (c->fd >= 0)
			continue;
		c->fd = accept4(h->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c->fd < 0)
			return;		/* EAGAIN: none waiting */
		c->got = c->sent = c->out_len = 0;
		c->deadline = ns_http_now() + NS_HTTP_TIMEOUT_MS;
	}
}

static const char *status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

/* The answer, head and (but for HEAD) body, into c->out; frees the body. */
static void put_answer(struct ns_http_conn *c, struct ns_http_resp *r,
		       bool head_only)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
			 r->status, status_text(r->status), r->type, r->len,
			 r->status == 405 ? "Allow: GET, HEAD\r\n" : "");
	size_t body = head_only ? 0 : r->len;

	c->out = malloc(n + body + 1);
	if (c->out) {
		memcpy(c->out, head, n);
		if (body)
			memcpy(c->out + n, r->body, body);
		c->out_len = n + body;
	}
	free(r->body);
}

/* A short text answer of the server's own. */
static void say(struct ns_http_conn *c, int status)
{
	struct ns_http_resp r = { .status = status, .type = "text/plain; charset=utf-8" };

	if (asprintf(&r.body, "%d %s\n", status, status_text(status)) < 0)
		r.body = NULL;
	r.len = r.body ? strlen(r.body) : 0;
	put_answer(c, &r, false);
}

/* The Accept header among the head's lines after the request line. */
static const char *accept_of(char *lines)
{
	for (char *l = lines, *eol; l && *l; l = eol) {
		eol = strchr(l, '\n');
		if (eol)
			*eol++ = 0;
		l[strcspn(l, "\r")] = 0;
		if (!strncasecmp(l, "Accept:", 7))
			return l + 7 + strspn(l + 7, " \t");
	}
	return NULL;
}

/* A whole head in c->in: the request answered into c->out. */
static void answer(struct ns_http *h, struct ns_http_conn *c)
{
	char *line = c->in, *rest = strchr(line, '\n'), *sp, *version;
	struct ns_http_req req = { 0 };
	struct ns_http_resp resp = { 0 };

	*rest++ = 0;
	line[strcspn(line, "\r")] = 0;
	req.method = line;
	sp = strchr(line, ' ');
	version = sp ? strchr(sp + 1, ' ') : NULL;
	if (!version || strncmp(version + 1, "HTTP/1.", 7)) {
		say(c, 400);
		return;
	}
	*sp = *version = 0;
	req.path = sp + 1;
	sp[1 + strcspn(sp + 1, "?")] = 0;
	req.accept = accept_of(rest);
	if (strcmp(req.method, "GET") && strcmp(req.method, "HEAD")) {
		say(c, 405);
		return;
	}
	h->answer(h->ctx, &req, &resp);
	if (resp.type)
		put_answer(c, &resp, !strcmp(req.method, "HEAD"));
	else
		say(c, 500);
}

/* Read what came; once the head is whole, answer. */
static void take_request(struct ns_http *h, struct ns_http_conn *c)
{
	ssize_t n = recv(c->fd, c->in + c->got, NS_HTTP_HEAD_MAX - c->got, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->got += n;
	c->in[c->got] = 0;
	if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n"))
		answer(h, c);
	else if (c->got == NS_HTTP_HEAD_MAX)
		say(c, 431);
	if (c->out == NULL && c->got == NS_HTTP_HEAD_MAX)
		drop(c);	/* no memory for an answer */
}

static void send_answer(struct ns_http_conn *c)
{
	ssize_t n = send(c->fd, c->out + c->sent, c->out_len - c->sent,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0) {
		drop(c);
		return;
	}
	c->sent += n;
	if (c->sent == c->out_len)
		drop(c);
}

void ns_http_serve(struct ns_http *h, const struct pollfd *p, unsigned int n)
{
	int64_t now = ns_http_now();

	for (unsigned int i = 0; i < n; i++) {
		struct ns_http_conn *c;

		if (h->slot[i] < 0) {
			if (p[i].revents & POLLIN)
				take_clients(h);
			continue;
		}
		c = &h->conn[h->slot[i]];
		if (c->fd != p[i].fd || !p[i].revents)
			continue;
		if (!c->out)
			take_request(h, c);
		if (c->fd >= 0 && c->out)
			send_answer(c);
	}
	for (unsigned int i = 0; i < NS_HTTP_CONNS; i++)
		if (h->conn[i].fd >= 0 && h->conn[i].deadline <= now)
			drop(&h->conn[i]);
}

void ns_http_close(struct ns_http *h)
{
	for (unsigned int i = 0; i < NS_HTTP_CONNS; i++)
		if (h->conn[i].fd >= 0)
			drop(&h->conn[i]);
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}
