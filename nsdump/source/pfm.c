// SPDX-License-Identifier: GPL-2.0
/*
 * Counter events by name through libpfm4 (a build with libpfm4-dev):
 * -e's names to encodings, close-name suggestions, -L's list.
 *
 * libpfm4 is opened when an event is first named, not linked: its event
 * tables are a megabyte of relocations that the loader wrote into every
 * nsdump, -e or not, and that its exit freed page by page.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "source/counters.h"

#define LIBPFM4	"libpfm.so.4"

static struct {
	__typeof__(pfm_initialize) *initialize;
	__typeof__(pfm_strerror) *strerror;
	__typeof__(pfm_get_os_event_encoding) *get_os_event_encoding;
	__typeof__(pfm_get_pmu_info) *get_pmu_info;
	__typeof__(pfm_get_event_info) *get_event_info;
	__typeof__(pfm_get_event_next) *get_event_next;
} pfm;

/* pfm.f from libpfm4's pfm_f, as POSIX's dlsym() says to */
#define PFM_SYM(lib, f)	(*(void **)&pfm.f = dlsym(lib, "pfm_" #f))

/* The functions of libpfm4 that this file calls: 0, or -1. */
static int pfm_load(char *err, size_t errlen)
{
	void *lib = dlopen(LIBPFM4, RTLD_NOW | RTLD_LOCAL);

	if (lib && PFM_SYM(lib, initialize) && PFM_SYM(lib, strerror) &&
	    PFM_SYM(lib, get_os_event_encoding) &&
	    PFM_SYM(lib, get_pmu_info) && PFM_SYM(lib, get_event_info) &&
	    PFM_SYM(lib, get_event_next))
		return 0;
	snprintf(err, errlen, "libpfm4, which names counter events, failed to load: %s",
		 dlerror());
	return -1;
}


/*
 * libpfm4 names perf's generic events after their perf_event.h constants:
 * the constant spelt once gives both its name and the encoding.
 */
#define SW(name, alt, id, desc) \
	{ name, alt, "perf::PERF_COUNT_SW_" #id, PERF_TYPE_SOFTWARE, \
	  PERF_COUNT_SW_##id, desc }
#define HW(name, alt, id, desc) \
	{ name, alt, "perf::PERF_COUNT_HW_" #id, PERF_TYPE_HARDWARE, \
	  PERF_COUNT_HW_##id, desc }
#define HW_CACHE(name, cache, op, result, desc) \
	{ name, NULL, \
	  "perf::PERF_COUNT_HW_CACHE_" #cache ":" #op ":" #result, \
	  PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_##cache | \
	  PERF_COUNT_HW_CACHE_OP_##op << 8 | \
	  PERF_COUNT_HW_CACHE_RESULT_##result << 16, desc }

/* perf(1)'s names: its spelling, libpfm4's, and the encoding itself. */
static const struct perf_alias {
	const char *name, *alt;	/* alt: perf's second spelling, or NULL */
	const char *pfm;	/* libpfm4's name of the same event */
	__u32 type;
	__u64 config;
	const char *desc;
} aliases[] = {
	SW("cpu-clock", NULL, CPU_CLOCK, "per-CPU high-resolution timer, ns"),
	SW("task-clock", NULL, TASK_CLOCK, "clock of the running task, ns"),
	SW("page-faults", "faults", PAGE_FAULTS, "page faults"),
	SW("context-switches", "cs", CONTEXT_SWITCHES, "context switches"),
	SW("cpu-migrations", "migrations", CPU_MIGRATIONS,
	   "task moved to another CPU"),
	SW("minor-faults", NULL, PAGE_FAULTS_MIN,
	   "page faults served without I/O"),
	SW("major-faults", NULL, PAGE_FAULTS_MAJ,
	   "page faults that needed I/O"),
	SW("alignment-faults", NULL, ALIGNMENT_FAULTS,
	   "unaligned accesses fixed up by the kernel"),
	SW("emulation-faults", NULL, EMULATION_FAULTS,
	   "instructions emulated by the kernel"),
	HW("cycles", "cpu-cycles", CPU_CYCLES, "core clock cycles"),
	HW("instructions", NULL, INSTRUCTIONS, "instructions retired"),
	HW("cache-references", NULL, CACHE_REFERENCES,
	   "last-level cache accesses"),
	HW("cache-misses", NULL, CACHE_MISSES, "last-level cache misses"),
	HW("branches", "branch-instructions", BRANCH_INSTRUCTIONS,
	   "branch instructions retired"),
	HW("branch-misses", NULL, BRANCH_MISSES, "mispredicted branches"),
	HW("bus-cycles", NULL, BUS_CYCLES, "bus cycles"),
	HW("ref-cycles", NULL, REF_CPU_CYCLES,
	   "reference cycles, not scaled by frequency changes"),
	HW("stalled-cycles-frontend", "idle-cycles-frontend",
	   STALLED_CYCLES_FRONTEND, "cycles the front end issued nothing"),
	HW("stalled-cycles-backend", "idle-cycles-backend",
	   STALLED_CYCLES_BACKEND, "cycles the back end retired nothing"),
	HW_CACHE("L1-dcache-loads", L1D, READ, ACCESS, "L1 data cache loads"),
	HW_CACHE("L1-dcache-load-misses", L1D, READ, MISS,
		 "L1 data cache load misses"),
	HW_CACHE("L1-dcache-stores", L1D, WRITE, ACCESS,
		 "L1 data cache stores"),
	HW_CACHE("L1-icache-load-misses", L1I, READ, MISS,
		 "L1 instruction cache misses"),
	HW_CACHE("LLC-loads", LL, READ, ACCESS, "last-level cache loads"),
	HW_CACHE("LLC-load-misses", LL, READ, MISS,
		 "last-level cache load misses"),
	HW_CACHE("LLC-stores", LL, WRITE, ACCESS, "last-level cache stores"),
	HW_CACHE("LLC-store-misses", LL, WRITE, MISS,
		 "last-level cache store misses"),
	HW_CACHE("dTLB-loads", DTLB, READ, ACCESS, "data TLB loads"),
	HW_CACHE("dTLB-load-misses", DTLB, READ, MISS, "data TLB load misses"),
	HW_CACHE("iTLB-load-misses", ITLB, READ, MISS,
		 "instruction TLB misses"),
	HW_CACHE("branch-load-misses", BPU, READ, MISS,
		 "branch predictor misses"),
};
#undef SW
#undef HW
#undef HW_CACHE
#define N_ALIASES	(sizeof(aliases) / sizeof(aliases[0]))

/* ---- names to encodings ---- */

int ns_counters_init(char *err, size_t errlen)
{
	static char why[256];	/* why libpfm4 did not load */
	static int ret = 1;

	if (ret == 1 && !why[0] && !pfm_load(why, sizeof(why)))
		ret = pfm.initialize();
	if (why[0]) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (ret != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 failed to initialise: %s",
			 pfm.strerror(ret));
		return -1;
	}
	return 0;
}


static const struct perf_alias *find_alias(const char *name)
{
	for (size_t i = 0; i < N_ALIASES; i++)
		if (!strcasecmp(name, aliases[i].name) ||
		    (aliases[i].alt && !strcasecmp(name, aliases[i].alt)))
			return &aliases[i];
	return NULL;
}

static int pfm_encode(const char *name, struct perf_event_attr *attr,
		      char *canon, size_t canonlen)
{
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = attr;
	arg.fstr = &fstr;
	ret = pfm.get_os_event_encoding(name, PFM_PLM0, PFM_OS_PERF_EVENT_EXT,
					&arg);
	if (ret == PFM_SUCCESS && canon)
		snprintf(canon, canonlen, "%s", fstr ? fstr : name);
	free(fstr);
	return ret;
}

/* Optimal string alignment distance, case-insensitive, capped. */
static unsigned int distance(const char *a, const char *b)
{
	enum { MAX = 64 };
	unsigned int d[MAX + 1][MAX + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > MAX || lb > MAX)
		return UINT_MAX;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned int cost = tolower((unsigned char)a[i - 1]) !=
					    tolower((unsigned char)b[j - 1]);
			unsigned int v = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

/* PMU @p's description, if this machine has that PMU. */
static bool pmu_present(pfm_pmu_t p, pfm_pmu_info_t *pinfo)
{
	memset(pinfo, 0, sizeof(*pinfo));
	pinfo->size = sizeof(*pinfo);
	return pfm.get_pmu_info(p, pinfo) == PFM_SUCCESS && pinfo->is_present;
}

static bool event_info(int i, pfm_event_info_t *ei)
{
	memset(ei, 0, sizeof(*ei));
	ei->size = sizeof(*ei);
	return pfm.get_event_info(i, PFM_OS_NONE, ei) == PFM_SUCCESS;
}

struct suggestions {
	const char *word;
	unsigned int best;
	char names[3][NS_COUNTER_NAME];
	unsigned int n;
};

static void consider(struct suggestions *s, const char *cand)
{
	unsigned int d = distance(s->word, cand);
	size_t len = strlen(s->word);
	unsigned int limit = len <= 3 ? 1 : len < 6 ? 2 : len / 3;

	if (d > limit || d > s->best)
		return;
	if (d < s->best) {
		s->best = d;
		s->n = 0;
	}
	for (unsigned int i = 0; i < s->n; i++)
		if (!strcasecmp(s->names[i], cand))
			return;
	if (s->n < 3)
		snprintf(s->names[s->n++], NS_COUNTER_NAME, "%s", cand);
}

void ns_counter_suggest(const char *name, char *buf, size_t len)
{
	struct suggestions s = { .best = UINT_MAX };
	const char *colons = strstr(name, "::");
	pfm_pmu_info_t pinfo;
	pfm_pmu_t p;
	size_t used;

	/* compare the event part: "perf::cyclse" or "cyclse:u" */
	char word[NS_COUNTER_NAME];

	snprintf(word, sizeof(word), "%s", colons ? colons + 2 : name);
	word[strcspn(word, ":")] = 0;
	s.word = word;
	buf[0] = 0;
	for (size_t i = 0; i < N_ALIASES; i++) {
		consider(&s, aliases[i].name);
		if (aliases[i].alt)
			consider(&s, aliases[i].alt);
	}
	pfm_for_all_pmus(p) {
		if (!pmu_present(p, &pinfo))
			continue;
		for (int i = pinfo.first_event; i != -1; i = pfm.get_event_next(i)) {
			pfm_event_info_t ei;

			if (event_info(i, &ei))
				consider(&s, ei.name);
		}
	}
	if (!s.n)
		return;
	used = snprintf(buf, len, "; did you mean ");
	for (unsigned int i = 0; i < s.n && used < len; i++)
		used += snprintf(buf + used, len - used, "%s%s",
				 i ? (i + 1 == s.n ? " or " : ", ") : "",
				 s.names[i]);
	if (used < len)
		snprintf(buf + used, len - used, "?");
}

int ns_counter_encode(const char *name, struct perf_event_attr *attr,
		      char *canon, size_t canonlen, char *err, size_t errlen)
{
	const struct perf_alias *a = find_alias(name);
	char prefixed[NS_COUNTER_NAME + 8];
	char hint[256];
	int ret;

	if (ns_counters_init(err, errlen))
		return -1;
	ret = pfm_encode(name, attr, canon, canonlen);
	if (ret == PFM_ERR_NOTFOUND && !strstr(name, "::")) {
		snprintf(prefixed, sizeof(prefixed), "perf::%s", name);
		ret = pfm_encode(prefixed, attr, canon, canonlen);
	}
	if (ret == PFM_ERR_NOTFOUND && a)
		ret = pfm_encode(a->pfm, attr, canon, canonlen);
	if (ret == PFM_ERR_NOTFOUND && a) {
		/* this libpfm4 does not know it: perf's own encoding */
		memset(attr, 0, sizeof(*attr));
		attr->type = a->type;
		attr->config = a->config;
		attr->exclude_user = 1;
		snprintf(canon, canonlen, "%s", a->name);
		ret = PFM_SUCCESS;
	}
	switch (ret) {
	case PFM_SUCCESS:
		break;
	case PFM_ERR_NOTFOUND:
		ns_counter_suggest(name, hint, sizeof(hint));
		snprintf(err, errlen, "%s: unknown event%s", name, hint);
		return -1;
	case PFM_ERR_UMASK:
	case PFM_ERR_ATTR:
	case PFM_ERR_ATTR_VAL:
	case PFM_ERR_ATTR_SET:
	case PFM_ERR_FEATCOMB:
		snprintf(err, errlen, "%s: %s (see nsdump -L for the events)",
			 name, pfm.strerror(ret));
		return -1;
	default:
		snprintf(err, errlen, "%s: libpfm4: %s", name, pfm.strerror(ret));
		return -1;
	}
	if (attr->exclude_kernel) {
		snprintf(err, errlen, "%s: counts user mode only, but the stack runs in the kernel: drop the :u modifier",
			 name);
		return -1;
	}
	return 0;
}


int ns_counters_parse(const char *spec, struct ns_counters *sel,
		      const struct ns_counter_host *host, char *err,
		      size_t errlen)
{
	char *copy = strdup(spec), *save = NULL, *tok;
	int ret = -1;

	unsigned int count = 0;

	memset(sel, 0, sizeof(*sel));
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (const char *p = spec; *p; p++)
		count += *p != ',' && (p == spec || p[-1] == ',');
	if (count > NSL_MAX_EVENTS) {
		snprintf(err, errlen, "-e %s: too many events (at most %d)", spec,
			 NSL_MAX_EVENTS);
		goto out;
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct perf_event_attr attr, probe;
		struct nsl_event *ev;
		int errnum;

		if (sel->n == NSL_MAX_EVENTS) {
			snprintf(err, errlen, "-e %s: too many events (at most %d)",
				 spec, NSL_MAX_EVENTS);
			goto out;
		}
		if (strlen(tok) >= NS_COUNTER_NAME) {
			snprintf(err, errlen, "%.40s...: event name too long", tok);
			goto out;
		}
		if (ns_counter_encode(tok, &attr, sel->canon[sel->n],
				      sizeof(sel->canon[0]), err, errlen))
			goto out;
		errnum = ns_counter_probe_kernel(&attr, host, &probe);
		if (errnum) {
			ns_counter_probe_reason(tok, &probe, errnum, host, err,
						errlen);
			goto out;
		}
		snprintf(sel->name[sel->n], NS_COUNTER_NAME, "%s", tok);
		ev = &sel->ev.ev[sel->n++];
		ev->type = attr.type;
		ev->config = attr.config;
		ev->config1 = attr.config1;
		ev->config2 = attr.config2;
	}
	if (!sel->n) {
		snprintf(err, errlen, "-e '%s': no event named", spec);
		goto out;
	}
	sel->ev.nevents = sel->n;
	ret = 0;
out:
	free(copy);
	return ret;
}


/* ---- -L ---- */

static bool usable(const char *name, const struct ns_counter_host *host)
{
	struct perf_event_attr attr, probe;
	char canon[128], err[256];

	return !ns_counter_encode(name, &attr, canon, sizeof(canon), err,
				  sizeof(err)) &&
	       !ns_counter_probe_kernel(&attr, host, &probe);
}

/* perf's names of software or else hardware events; how many listed. */
static unsigned int list_aliases(const struct ns_counter_lister *l,
				 const struct ns_counter_host *host,
				 bool software)
{
	unsigned int n = 0;

	for (size_t i = 0; i < N_ALIASES; i++) {
		if ((aliases[i].type == PERF_TYPE_SOFTWARE) != software ||
		    !usable(aliases[i].name, host))
			continue;
		l->counter(l->ctx, aliases[i].name, aliases[i].alt,
			   aliases[i].desc);
		n++;
	}
	return n;
}

/* The core PMUs' own events, as libpfm4 names them; how many. */
static unsigned int list_pmus(const struct ns_counter_lister *l)
{
	pfm_pmu_info_t pinfo;
	unsigned int n = 0;
	pfm_pmu_t p;

	pfm_for_all_pmus(p) {
		char title[256];

		if (!pmu_present(p, &pinfo) || pinfo.type != PFM_PMU_TYPE_CORE)
			continue;
		snprintf(title, sizeof(title), "Hardware events, %s (%s; NAME or NAME:UMASK)",
			 pinfo.desc, pinfo.name);
		l->section(l->ctx, "hardware", pinfo.name, title);
		for (int i = pinfo.first_event; i != -1; i = pfm.get_event_next(i)) {
			pfm_event_info_t ei;

			if (event_info(i, &ei))
				l->counter(l->ctx, ei.name, NULL, ei.desc);
			n++;
		}
	}
	return n;
}

int ns_counters_list(const struct ns_counter_lister *l,
		     const struct ns_counter_host *host, char *err,
		     size_t errlen)
{
	unsigned int hw;

	if (ns_counters_init(err, errlen))
		return -1;
	l->section(l->ctx, "software", "perf", "Software events (kernel perf)");
	list_aliases(l, host, true);
	if (!host->cpu_pmu(host->ctx)) {
		l->note(l->ctx, "No hardware PMU found (no /sys/bus/event_source/devices/cpu): hardware events need a PMU, or a VM with a virtual PMU.");
		return 0;
	}
	l->section(l->ctx, "hardware", "perf", "Hardware events, generic (kernel perf)");
	hw = list_aliases(l, host, false);
	hw += list_pmus(l);
	if (!hw)
		l->note(l->ctx, "(none this PMU can count)");
	return 0;
}

bool ns_counters_available(char *why, size_t len)
{
	(void)why;
	(void)len;
	return true;
}
