// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "events.h"

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

/* ---- the machine ---- */

/* The number @path starts with, or @unknown. */
static int read_number(const char *path, int unknown)
{
	FILE *f = fopen(path, "r");
	int v = unknown;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = unknown;
		fclose(f);
	}
	return v;
}

static int real_probe(const struct perf_event_attr *attr, void *ctx)
{
	struct perf_event_attr a = *attr;
	/* the first online CPU: "0-3,5" or "2" */
	int cpu = read_number("/sys/devices/system/cpu/online", 0);
	long fd;

	(void)ctx;
	a.disabled = 1;
	fd = syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static bool real_cpu_pmu(void *ctx)
{
	/* hybrid Intel parts name their core PMUs cpu_core and cpu_atom */
	static const char *const dirs[] = {
		"/sys/bus/event_source/devices/cpu",
		"/sys/bus/event_source/devices/cpu_core",
		"/sys/bus/event_source/devices/cpu_atom",
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!access(dirs[i], F_OK))
			return true;
	return false;
}

static int real_paranoid(void *ctx)
{
	(void)ctx;
	return read_number("/proc/sys/kernel/perf_event_paranoid", INT_MIN);
}

const struct ns_event_host ns_event_host_real = {
	.probe = real_probe,
	.cpu_pmu = real_cpu_pmu,
	.paranoid = real_paranoid,
};

/* ---- names to encodings ---- */

int ns_events_init(char *err, size_t errlen)
{
	static int ret = 1;

	if (ret == 1)
		ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 failed to initialise: %s",
			 pfm_strerror(ret));
		return -1;
	}
	return 0;
}

bool ns_event_is_hw(const struct perf_event_attr *attr)
{
	return attr->type != PERF_TYPE_SOFTWARE &&
	       attr->type != PERF_TYPE_TRACEPOINT &&
	       attr->type != PERF_TYPE_BREAKPOINT;
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
	ret = pfm_get_os_event_encoding(name, PFM_PLM0, PFM_OS_PERF_EVENT_EXT,
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
	return pfm_get_pmu_info(p, pinfo) == PFM_SUCCESS && pinfo->is_present;
}

static bool event_info(int i, pfm_event_info_t *ei)
{
	memset(ei, 0, sizeof(*ei));
	ei->size = sizeof(*ei);
	return pfm_get_event_info(i, PFM_OS_NONE, ei) == PFM_SUCCESS;
}

struct suggestions {
	const char *word;
	unsigned int best;
	char names[3][NS_EVENT_NAME];
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
		snprintf(s->names[s->n++], NS_EVENT_NAME, "%s", cand);
}

void ns_event_suggest(const char *name, char *buf, size_t len)
{
	struct suggestions s = { .best = UINT_MAX };
	const char *colons = strstr(name, "::");
	pfm_pmu_info_t pinfo;
	pfm_pmu_t p;
	size_t used;

	/* compare the event part: "perf::cyclse" or "cyclse:u" */
	char word[NS_EVENT_NAME];

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
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
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

int ns_event_encode(const char *name, struct perf_event_attr *attr,
		    char *canon, size_t canonlen, char *err, size_t errlen)
{
	const struct perf_alias *a = find_alias(name);
	char prefixed[NS_EVENT_NAME + 8];
	char hint[256];
	int ret;

	if (ns_events_init(err, errlen))
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
		ns_event_suggest(name, hint, sizeof(hint));
		snprintf(err, errlen, "%s: unknown event%s", name, hint);
		return -1;
	case PFM_ERR_UMASK:
	case PFM_ERR_ATTR:
	case PFM_ERR_ATTR_VAL:
	case PFM_ERR_ATTR_SET:
	case PFM_ERR_FEATCOMB:
		snprintf(err, errlen, "%s: %s (see nsdump -L for the events)",
			 name, pfm_strerror(ret));
		return -1;
	default:
		snprintf(err, errlen, "%s: libpfm4: %s", name, pfm_strerror(ret));
		return -1;
	}
	if (attr->exclude_kernel) {
		snprintf(err, errlen, "%s: counts user mode only, but the stack runs in the kernel: drop the :u modifier",
			 name);
		return -1;
	}
	return 0;
}

void ns_event_probe_reason(const char *name, const struct perf_event_attr *attr,
			   int errnum, const struct ns_event_host *host,
			   char *msg, size_t msglen)
{
	bool hw = ns_event_is_hw(attr);
	int paranoid;

	switch (errnum) {
	case ENOENT:
	case EOPNOTSUPP:
		if (hw && !host->cpu_pmu(host->ctx))
			snprintf(msg, msglen, "%s: no PMU in this machine (hardware events need a PMU, or a VM with a virtual PMU)",
				 name);
		else
			snprintf(msg, msglen, "%s: not supported by this PMU",
				 name);
		break;
	case EACCES:
	case EPERM:
		paranoid = host->paranoid(host->ctx);
		if (paranoid == INT_MIN)
			snprintf(msg, msglen, "%s: needs CAP_PERFMON (or CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0)",
				 name);
		else
			snprintf(msg, msglen, "%s: needs CAP_PERFMON (or CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0; it is %d)",
				 name, paranoid);
		break;
	case EINVAL:
		snprintf(msg, msglen, "%s: the kernel's perf refuses this encoding (type %u config 0x%llx)",
			 name, attr->type, (unsigned long long)attr->config);
		break;
	case EBUSY:
		snprintf(msg, msglen, "%s: the PMU is busy (another tool holds it exclusively)",
			 name);
		break;
	default:
		snprintf(msg, msglen, "%s: cannot be counted: %s", name,
			 strerror(errnum));
	}
}

/*
 * Probe @attr as the kernel will count it: this encoding, kernel mode
 * only (@probe).  0 if it can be counted, else the errno.
 */
static int probe_kernel_mode(const struct perf_event_attr *attr,
			     const struct ns_event_host *host,
			     struct perf_event_attr *probe)
{
	int errnum;

	*probe = (struct perf_event_attr){
		.size = sizeof(*probe),
		.type = attr->type,
		.config = attr->config,
		.config1 = attr->config1,
		.config2 = attr->config2,
		.exclude_user = 1,
	};
	errnum = host->probe(probe, host->ctx);
	/*
	 * A software event refused for want of privilege may still be
	 * counted: the kernel's own counters need none.
	 */
	if (!ns_event_is_hw(attr) && (errnum == EACCES || errnum == EPERM))
		return 0;
	return errnum;
}

int ns_events_parse(const char *spec, struct ns_evsel *sel,
		    const struct ns_event_host *host, char *err, size_t errlen)
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
		if (strlen(tok) >= NS_EVENT_NAME) {
			snprintf(err, errlen, "%.40s...: event name too long", tok);
			goto out;
		}
		if (ns_event_encode(tok, &attr, sel->canon[sel->n],
				    sizeof(sel->canon[0]), err, errlen))
			goto out;
		errnum = probe_kernel_mode(&attr, host, &probe);
		if (errnum) {
			ns_event_probe_reason(tok, &probe, errnum, host, err,
					      errlen);
			goto out;
		}
		snprintf(sel->name[sel->n], NS_EVENT_NAME, "%s", tok);
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

void ns_events_kernel_reason(const struct ns_evsel *sel, const char *what,
			     int errnum, char *msg, size_t msglen)
{
	char names[NSL_MAX_EVENTS * NS_EVENT_NAME];
	size_t used = 0;
	const char *why;

	names[0] = 0;
	for (unsigned int i = 0; i < sel->n; i++)
		used += snprintf(names + used, sizeof(names) - used, "%s%s",
				 i ? "," : "", sel->name[i]);
	switch (errnum) {
	case EINVAL:
		why = "the kernel refused the encoding";
		break;
	case ENODEV:
		why = "the kernel could not create a counter on every CPU";
		break;
	case EOPNOTSUPP:
		why = "this netslice.ko cannot count events (durations only)";
		break;
	case EPERM:
	case EACCES:
		why = "hardware events need CAP_PERFMON or CAP_SYS_ADMIN";
		break;
	case EBUSY:
		why = "the counters are busy (collection running?)";
		break;
	default:
		why = strerror(errnum);
	}
	snprintf(msg, msglen, "%s %s: %s (%s)", what, names[0] ? names : "(none)",
		 why, strerrorname_np(errnum) ? strerrorname_np(errnum) : "?");
}

/* ---- -L ---- */

static void one_line(FILE *out, const char *name, const char *desc)
{
	int len = desc ? (int)strcspn(desc, "\n") : 0;

	fprintf(out, "  %-36s %.*s\n", name, len, desc ? desc : "");
}

static bool usable(const char *name, const struct ns_event_host *host)
{
	struct perf_event_attr attr, probe;
	char canon[128], err[256];

	return !ns_event_encode(name, &attr, canon, sizeof(canon), err,
				sizeof(err)) &&
	       !probe_kernel_mode(&attr, host, &probe);
}

/* perf's names of software or else hardware events; how many listed. */
static unsigned int list_aliases(FILE *out, const struct ns_event_host *host,
				 bool software)
{
	unsigned int n = 0;

	for (size_t i = 0; i < N_ALIASES; i++) {
		char name[80];

		if ((aliases[i].type == PERF_TYPE_SOFTWARE) != software ||
		    !usable(aliases[i].name, host))
			continue;
		snprintf(name, sizeof(name), "%s%s%s", aliases[i].name,
			 aliases[i].alt ? " OR " : "",
			 aliases[i].alt ? aliases[i].alt : "");
		one_line(out, name, aliases[i].desc);
		n++;
	}
	return n;
}

int ns_events_list(FILE *out, const struct ns_event_host *host,
		   char *err, size_t errlen)
{
	bool have_pmu = host->cpu_pmu(host->ctx), any_hw;
	pfm_pmu_info_t pinfo;
	pfm_pmu_t p;

	if (ns_events_init(err, errlen))
		return -1;
	fprintf(out, "Software events (kernel perf):\n");
	list_aliases(out, host, true);
	if (!have_pmu) {
		fprintf(out, "\nNo hardware PMU found (no /sys/bus/event_source/devices/cpu): hardware events need a PMU, or a VM with a virtual PMU.\n");
		return 0;
	}
	fprintf(out, "\nHardware events, generic (kernel perf):\n");
	any_hw = list_aliases(out, host, false) > 0;
	pfm_for_all_pmus(p) {
		if (!pmu_present(p, &pinfo) || pinfo.type != PFM_PMU_TYPE_CORE)
			continue;
		fprintf(out, "\nHardware events, %s (%s; NAME or NAME:UMASK):\n",
			pinfo.desc, pinfo.name);
		for (int i = pinfo.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t ei;

			if (event_info(i, &ei))
				one_line(out, ei.name, ei.desc);
			any_hw = true;
		}
	}
	if (!any_hw)
		fprintf(out, "  (none this PMU can count)\n");
	return 0;
}

enum ns_event_kind ns_event_kind(const struct nsl_event *ev, const char *canon)
{
	static const char *const cycles[] = {
		"UNHALTED_CORE_CYCLES", "CPU_CLK_UNHALTED:THREAD",
		"CPU_CLK_UNHALTED.THREAD", "CYCLES_NOT_IN_HALT",
	};
	static const char *const instructions[] = {
		"INST_RETIRED", "INSTRUCTION_RETIRED", "INSTRUCTIONS_RETIRED",
		"RETIRED_INSTRUCTIONS",
	};

	if (ev->type == PERF_TYPE_HARDWARE) {
		switch (ev->config & 0xffffffffull) {	/* high bits: PMU */
		case PERF_COUNT_HW_CPU_CYCLES:
			return NS_EV_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS:
			return NS_EV_INSTRUCTIONS;
		}
		return NS_EV_OTHER;
	}
	if (ev->type == PERF_TYPE_SOFTWARE || !canon)
		return NS_EV_OTHER;
	for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++)
		if (strcasestr(canon, cycles[i]))
			return NS_EV_CYCLES;
	for (size_t i = 0; i < sizeof(instructions) / sizeof(instructions[0]); i++)
		if (strcasestr(canon, instructions[i]))
			return NS_EV_INSTRUCTIONS;
	return NS_EV_OTHER;
}
