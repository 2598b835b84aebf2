// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD stand-in for /dev/ns, to run nsdump's live path on the host:
 * point NSDUMP_DEV at a raw item stream (mkblocks -R) and preload this.
 * ioctls on that file answer as the module would; read() hands out whole
 * items only; at the end of the stream the process gets SIGINT, as if
 * the user pressed ^C (with NSFAKE_HOLD, only once collection is off:
 * until then the device is idle, for a test to signal the process).
 * NSFAKE_DROPS: what NSIOCGDROPS says (default 0);
 * NSFAKE_ABI: abi_version to report; NSFAKE_NOMEM: the nomem count
 * NSIOCGINFO reports after the first call (0 before); NSFAKE_LOG: file where NSIOCSRCVBUF,
 * NSIOCSSTATE, NSIOCSEVENT, NSIOCSEMODE and NSIOCGCALIB calls are logged.
 * NSIOCGCALIB answers gen_calib()'s table for each CPU, or fails with
 * the errno in NSFAKE_CALIB_ERR; NSFAKE_EVENT_ERR makes NSIOCSEVENT fail.
 * NSIOCSRECORDS is logged ("records <flags>") and refused as the kernel
 * does (unknown flags, pad, state without NSL_REC_ON: EINVAL), or with
 * the errno in NSFAKE_RECORDS_ERR; the stream's event items (mkblocks
 * -F) are what it would then produce.
 * NSIOCSFILTER is logged ("filter <len> <flags>"): refused with ENOTTY
 * (a module without filters) unless NSFAKE_FILTER is set, then taken
 * (nothing is filtered, NSIOCGFILTERED says 0); NSFAKE_FILTER=5 is an
 * ABI-5 module, which refuses NSL_FILTER_FLOW with EINVAL.
 * NSIOCSSAMPLE is logged ("sample <rate> <flags>") and checked as the
 * kernel does, or fails with the errno in NSFAKE_SAMPLE_ERR;
 * NSIOCGSAMPLE gives back the setting with NSFAKE_TAKEN and
 * NSFAKE_SKIPPED as its counts (default 0).
 * NSIOCSAGG is logged ("agg <flags> <region> <threshold_ns>"), or fails
 * with the errno in NSFAKE_AGG_ERR.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gen.h"

static bool is_fake(int fd)
{
	const char *path = getenv("NSDUMP_DEV");
	struct stat a, b;

	return path && !fstat(fd, &a) && !stat(path, &b) &&
	       a.st_ino == b.st_ino && a.st_dev == b.st_dev && S_ISREG(a.st_mode);
}

static void log_call(const char *fmt, unsigned long long v)
{
	const char *path = getenv("NSFAKE_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, fmt, v);
		fclose(f);
	}
}

static unsigned int fake_nevents;	/* as NSIOCSEVENT set it */
static bool fake_on;			/* as NSIOCSSTATE set it */
static unsigned int fake_info_calls;	/* NSIOCGINFO calls so far */
static struct nsl_sample fake_sample;	/* as NSIOCSSAMPLE set it */

static unsigned long long env_u64(const char *name)
{
	return getenv(name) ? strtoull(getenv(name), NULL, 0) : 0;
}

/* Refuse with the errno in @name, if set. */
static bool env_fails(const char *name)
{
	if (!getenv(name))
		return false;
	errno = atoi(getenv(name));
	return true;
}

static int fake_filter(const struct nsl_filter *f)
{
	const char *mode = getenv("NSFAKE_FILTER");

	log_call("filter %llu", f->len);
	log_call(" %llu\n", f->flags);
	if (!mode) {
		errno = ENOTTY;
		return -1;
	}
	if (f->flags & ~(atoi(mode) == 5 ? 0u : NSL_FILTER_FLOW)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

static int fake_sample_set(const struct nsl_sample *s)
{
	log_call("sample %llu", s->rate);
	log_call(" %llu\n", s->flags);
	if (env_fails("NSFAKE_SAMPLE_ERR"))
		return -1;
	if (s->rate > NSL_SAMPLE_RATE_MAX || (s->flags & ~NSL_SAMPLE_FLOWS) ||
	    s->taken || s->skipped) {
		errno = EINVAL;
		return -1;
	}
	fake_sample = *s;
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, void *);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
	if (!is_fake(fd))
		return real(fd, req, arg);

	switch (req) {
	case NSIOCGINFO: {
		struct nsl_info *info = arg;

		gen_info(info);
		if (getenv("NSFAKE_ABI"))
			info->abi_version = atoi(getenv("NSFAKE_ABI"));
		/* Blocks not made: none at open, NSFAKE_NOMEM on later calls. */
		if (getenv("NSFAKE_NOMEM") && fake_info_calls++)
			info->nomem = atoll(getenv("NSFAKE_NOMEM"));
		return 0;
	}
	case NSIOCSRCVBUF:
		log_call("rcvbuf %llu\n", ((struct nsl_rcvbuf *)arg)->bytes);
		return 0;
	case NSIOCSSTATE:
		log_call("state %llu\n", ((struct nsl_state *)arg)->state);
		fake_on = ((struct nsl_state *)arg)->state == NSL_STATE_ON;
		return 0;
	case NSIOCSEVENT: {
		const struct nsl_events *ev = arg;

		log_call("events %llu", ev->nevents);
		for (unsigned int i = 0; i < ev->nevents && i < NSL_MAX_EVENTS; i++)
			log_call(" %llu", (unsigned long long)ev->ev[i].type << 32 |
				 ev->ev[i].config);
		log_call("\n", 0);
		fake_nevents = ev->nevents;
		if (getenv("NSFAKE_EVENT_ERR")) {
			errno = atoi(getenv("NSFAKE_EVENT_ERR"));
			return -1;
		}
		return 0;
	}
	case NSIOCSRECORDS: {
		const struct nsl_record_opts *o = arg;

		log_call("records %llu\n", o->flags);
		if (getenv("NSFAKE_RECORDS_ERR")) {
			errno = atoi(getenv("NSFAKE_RECORDS_ERR"));
			return -1;
		}
		if (o->pad || (o->flags & ~NSL_REC_ALL) ||
		    ((o->flags & ~NSL_REC_FLOWADDR) && !(o->flags & NSL_REC_ON))) {
			errno = EINVAL;
			return -1;
		}
		return 0;
	}
	case NSIOCSEMODE:
		log_call("mode %llu\n", ((struct nsl_mode *)arg)->mode);
		return 0;
	case NSIOCGCALIB: {
		struct nsl_calib *c = arg;

		log_call("calib %llu\n", c->cpu);
		if (getenv("NSFAKE_CALIB_ERR")) {
			errno = atoi(getenv("NSFAKE_CALIB_ERR"));
			return -1;
		}
		if (c->cpu >= 2 || c->reps || c->flags) {
			errno = EINVAL;
			return -1;
		}
		gen_calib(c->cpu, fake_nevents, c);
		return 0;
	}
	case NSIOCSFILTER:
		return fake_filter(arg);
	case NSIOCGFILTERED:
		if (!getenv("NSFAKE_FILTER")) {
			errno = ENOTTY;
			return -1;
		}
		((struct nsl_count *)arg)->count = 0;
		return 0;
	case NSIOCSSAMPLE:
		return fake_sample_set(arg);
	case NSIOCGSAMPLE: {
		struct nsl_sample *s = arg;

		*s = fake_sample;
		s->taken = env_u64("NSFAKE_TAKEN");
		s->skipped = env_u64("NSFAKE_SKIPPED");
		return 0;
	}
	case NSIOCSAGG: {
		const struct nsl_agg *a = arg;

		log_call("agg %llu", a->flags);
		log_call(" %llu", a->region);
		log_call(" %llu\n", a->threshold_ns);
		return env_fails("NSFAKE_AGG_ERR") ? -1 : 0;
	}
	case NSIOCGDROPS:
		((struct nsl_count *)arg)->count =
			getenv("NSFAKE_DROPS") ? atoll(getenv("NSFAKE_DROPS")) : 0;
		return 0;
	default:
		errno = ENOTTY;
		return -1;
	}
}

ssize_t read(int fd, void *buf, size_t len)
{
	static ssize_t (*real)(int, void *, size_t);
	off_t at;
	size_t got = 0;
	unsigned char *p = buf;

	if (!real)
		real = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	if (!is_fake(fd))
		return real(fd, buf, len);

	/* whole items only, at most 3 per read to exercise several reads */
	at = lseek(fd, 0, SEEK_CUR);
	for (int n = 0; n < 3; n++) {
		struct nsl_item_hdr h;

		if (pread(fd, &h, sizeof(h), at + got) != sizeof(h) ||
		    h.size < 8 || got + h.size > len ||
		    pread(fd, p + got, h.size, at + got) != h.size)
			break;
		got += h.size;
	}
	if (!got && getenv("NSFAKE_HOLD") && fake_on) {
		usleep(10000);
		errno = EAGAIN;
		return -1;
	}
	if (!got) {
		raise(SIGINT);
		errno = EINTR;
		return -1;
	}
	lseek(fd, at + got, SEEK_SET);
	return got;
}
