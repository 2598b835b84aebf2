// SPDX-License-Identifier: GPL-2.0
/* stress: answers */
#include "stress.h"

const char *const stress_op_name[OP_MAX] = {
	"NSIOCSRCVBUF", "NSIOCSSTATE", "NSIOCSEVENT", "NSIOCSEMODE",
	"NSIOCGPACKETS", "NSIOCGDROPS", "NSIOCGINFO", "NSIOCGCALIB",
	"NSIOCSRECORDS", "NSIOCSFILTER", "NSIOCGFILTERED", "unknown ioctl",
	"read", "poll", "fcntl", "write", "mmap", "lseek/pread",
	"open", "close", "rmmod", "insmod", "cost_stage",
};

const unsigned long stress_op_cmd[NIOCTLS - 1] = {
	NSIOCSRCVBUF, NSIOCSSTATE, NSIOCSEVENT, NSIOCSEMODE, NSIOCGPACKETS,
	NSIOCGDROPS, NSIOCGINFO, NSIOCGCALIB, NSIOCSRECORDS, NSIOCSFILTER,
	NSIOCGFILTERED,
};

void stress_stats_add(struct stats *to, const struct stats *from)
{
	for (int op = 0; op < OP_MAX; op++) {
		for (int e = 0; e < NERR; e++)
			to->n[op][e] += from->n[op][e];
		to->bad[op] += from->bad[op];
		to->sum_ns[op] += from->sum_ns[op];
		to->allowed[op] |= from->allowed[op];
		if (from->max_ns[op] > to->max_ns[op])
			to->max_ns[op] = from->max_ns[op];
	}
	to->harness += from->harness;
}

uint64_t stress_calls(const struct stats *st, int op)
{
	uint64_t sum = 0;

	for (int e = 0; e < NERR; e++)
		sum += st->n[op][e];
	return sum;
}

static const char *err_name(int e)
{
	const char *s = e ? strerrorname_np(e) : "0";

	return s ? s : "E?";
}

char *stress_errset_str(errset s, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int e = 0; e < 128 && off < len; e++)
		if (s & E(e))
			off += snprintf(buf + off, len - off, "%s%s",
					off ? "," : "", err_name(e));
	return buf;
}

/* "0 x12, EINVAL x30, ..." */
char *stress_answers_str(const struct stats *st, int op, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (int e = 0; e < NERR && off < len; e++)
		if (st->n[op][e])
			off += snprintf(buf + off, len - off, "%s%s x%" PRIu64,
					off ? ", " : "", err_name(e),
					st->n[op][e]);
	return buf;
}

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint printed;

/* One whole line on stdout, whichever thread prints it. */
void stress_vline(const char *prefix, const char *fmt, va_list ap)
{
	pthread_mutex_lock(&out_lock);
	fputs(prefix, stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

__attribute__((format(printf, 1, 2)))
void stress_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	stress_vline("", fmt, ap);
	va_end(ap);
}

/* A TAP comment; only the first few are shown. */
void stress_complain(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&printed, 1) >= 60)
		return;
	va_start(ap, fmt);
	stress_vline("# VIOLATION: ", fmt, ap);
	va_end(ap);
}

/*
 * Count one answer of @op; false (and a complaint naming @what) when it is
 * not in @allowed.  @ret < 0 means the call failed with @err.
 */
bool stress_answer(struct stats *st, enum op op, long ret, int err,
		   errset allowed, uint64_t ns, const char *what)
{
	int e = ret < 0 ? err : 0;
	bool ok = e < 128 && (allowed & E(e));
	char set[256];

	st->n[op][e < NERR ? e : NERR - 1]++;
	st->allowed[op] |= allowed;
	st->sum_ns[op] += ns;
	if (ns > st->max_ns[op])
		st->max_ns[op] = ns;
	if (!ok) {
		st->bad[op]++;
		stress_complain("%s: %s, allowed {%s}: %s", stress_op_name[op], err_name(e),
				stress_errset_str(allowed, set, sizeof(set)), what);
	}
	return ok;
}
