// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "source/decode.h"
#include "source/histograms.h"

const char *ns_agg_path(void)
{
	const char *p = getenv("NSDUMP_AGG");

	return p && *p ? p : NSL_AGG_DEV;
}

/* All of @fd until EOF (a snapshot is read to its end). */
static unsigned char *read_all(int fd, size_t *len)
{
	size_t cap = 1 << 16, got = 0;
	unsigned char *buf = malloc(cap), *more;
	ssize_t n;

	while (buf) {
		if (got == cap) {
			more = realloc(buf, cap * 2);
			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
		n = read(fd, buf + got, cap - got);
		if (n == 0) {
			*len = got;
			return buf;
		}
		if (n < 0 && errno != EINTR)
			break;
		got += n > 0 ? (size_t)n : 0;
	}
	free(buf);
	return NULL;
}

enum ns_agg_status ns_agg_read(const char *path, struct ns_agg_snap *s,
			       char *why, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	unsigned char *buf;
	size_t n = 0;

	if (fd < 0) {
		err = errno;
		snprintf(why, len, "%s: %s", path, strerror(err));
		return err == ENOENT || err == ENODEV ? NS_AGG_ABSENT :
							 NS_AGG_BAD;
	}
	buf = read_all(fd, &n);
	err = errno;
	close(fd);
	if (!buf) {
		snprintf(why, len, "%s: %s", path, strerror(err));
		return err == ENODEV ? NS_AGG_ABSENT : NS_AGG_BAD;
	}
	err = ns_agg_parse(buf, n, s, why, len);
	free(buf);
	return err ? NS_AGG_BAD : NS_AGG_OK;
}

static int bad(char *why, size_t len, const char *what, unsigned long long v)
{
	snprintf(why, len, "histograms: %s %llu", what, v);
	return -1;
}

/* The head alone: what it says of itself and of what follows. */
static int check_head(const struct nsl_agg_head *h, size_t len, char *why,
		      size_t wlen)
{
	if (h->magic != NSL_AGG_MAGIC)
		return bad(why, wlen, "bad magic", h->magic);
	if (h->abi_version < NS_AGG_ABI || h->abi_version > NSL_ABI_VERSION)
		return bad(why, wlen, "from a module of NetSlice ABI",
			   h->abi_version);
	if (!h->tsc_khz)
		return bad(why, wlen, "tsc_khz", 0);
	if (h->nhist > (len - sizeof(*h)) / sizeof(struct nsl_agg_hist))
		return bad(why, wlen, "truncated: histograms announced",
			   h->nhist);
	return 0;
}

int ns_agg_parse(const void *buf, size_t len, struct ns_agg_snap *s,
		 char *why, size_t wlen)
{
	memset(s, 0, sizeof(*s));
	if (len < sizeof(s->head))
		return bad(why, wlen, "truncated: bytes", len);
	memcpy(&s->head, buf, sizeof(s->head));
	if (check_head(&s->head, len, why, wlen))
		return -1;
	s->hist = calloc(s->head.nhist ? s->head.nhist : 1, sizeof(*s->hist));
	if (!s->hist) {
		snprintf(why, wlen, "histograms: out of memory");
		return -1;
	}
	memcpy(s->hist, (const unsigned char *)buf + sizeof(s->head),
	       s->head.nhist * sizeof(*s->hist));
	for (uint32_t i = 0; i < s->head.nhist; i++) {
		unsigned int region = s->hist[i].region;

		if (region >= NSL_R_MAX) {
			ns_agg_free(s);
			return bad(why, wlen, "region", region);
		}
	}
	return 0;
}

void ns_agg_free(struct ns_agg_snap *s)
{
	free(s->hist);
	s->hist = NULL;
}

uint64_t ns_agg_count(const struct nsl_agg_hist *h)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < NSL_AGG_BUCKETS; i++)
		n += h->bucket[i];
	return n;
}

const char *ns_agg_region_name(unsigned int region)
{
	return region == NSL_AGG_SPAN ? "span" : ns_region_name(region);
}

/* "queue" (up to @end) as a region, or -1. */
static int region_of(const char *name, size_t len)
{
	for (unsigned int r = 0; r < NSL_R_MAX; r++) {
		const char *n = ns_agg_region_name(r);

		if (n && strlen(n) == len && !strncmp(n, name, len))
			return (int)r;
	}
	return -1;
}

/* "50us", "1.5ms", "200": nanoseconds, or 0 if not a positive time. */
static uint64_t threshold_ns(const char *s)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	if (!(*s >= '0' && *s <= '9'))
		return 0;
	v = strtod(s, &end);
	for (unsigned int i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double ns = v * units[i].ns;

		if (!strcmp(end, units[i].unit) && isfinite(ns) && ns >= 1 &&
		    ns < 1.8e19)
			return (uint64_t)(ns + 0.5);
	}
	return 0;
}

int ns_agg_spec(const char *spec, struct nsl_agg *a)
{
	const char *gt = strchr(spec, '>');
	int region;

	memset(a, 0, sizeof(*a));
	if (!strcmp(spec, "all")) {
		a->flags = NSL_AGG_ALL;
		return 0;
	}
	if (!gt || (region = region_of(spec, gt - spec)) < 0)
		return -1;
	a->region = region;
	if (!strcmp(gt + 1, "p99")) {
		a->flags = NSL_AGG_P99;
		return 0;
	}
	a->threshold_ns = threshold_ns(gt + 1);
	return a->threshold_ns ? 0 : -1;
}
