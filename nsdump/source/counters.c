// SPDX-License-Identifier: GPL-2.0
/*
 * Counter events: what this machine can count and why not, whatever the
 * build.  Names to encodings and -L's list need libpfm4: pfm.c, or
 * nopfm.c in a build without it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "source/counters.h"

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

const struct ns_counter_host ns_counter_host_real = {
	.probe = real_probe,
	.cpu_pmu = real_cpu_pmu,
	.paranoid = real_paranoid,
};

bool ns_counter_is_hw(const struct perf_event_attr *attr)
{
	return attr->type != PERF_TYPE_SOFTWARE &&
	       attr->type != PERF_TYPE_TRACEPOINT &&
	       attr->type != PERF_TYPE_BREAKPOINT;
}

void ns_counter_probe_reason(const char *name,
			     const struct perf_event_attr *attr, int errnum,
			     const struct ns_counter_host *host, char *msg,
			     size_t msglen)
{
	bool hw = ns_counter_is_hw(attr);
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

int ns_counter_probe_kernel(const struct perf_event_attr *attr,
			    const struct ns_counter_host *host,
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
	if (!ns_counter_is_hw(attr) && (errnum == EACCES || errnum == EPERM))
		return 0;
	return errnum;
}


void ns_counters_kernel_reason(const struct ns_counters *sel, const char *what,
			       int errnum, char *msg, size_t msglen)
{
	char names[NSL_MAX_EVENTS * NS_COUNTER_NAME];
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


enum ns_counter_kind ns_counter_kind(const struct nsl_event *ev,
				     const char *canon)
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
			return NS_COUNTER_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS:
			return NS_COUNTER_INSTRUCTIONS;
		}
		return NS_COUNTER_OTHER;
	}
	if (ev->type == PERF_TYPE_SOFTWARE || !canon)
		return NS_COUNTER_OTHER;
	for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++)
		if (strcasestr(canon, cycles[i]))
			return NS_COUNTER_CYCLES;
	for (size_t i = 0; i < sizeof(instructions) / sizeof(instructions[0]); i++)
		if (strcasestr(canon, instructions[i]))
			return NS_COUNTER_INSTRUCTIONS;
	return NS_COUNTER_OTHER;
}

/* ---- -L in plain text ---- */

static void plain_section(void *ctx, const char *kind, const char *pmu,
			  const char *title)
{
	struct ns_counter_plain *p = ctx;

	(void)kind;
	(void)pmu;
	fprintf(p->out, "%s%s:\n", p->sections++ ? "\n" : "", title);
}

static void plain_counter(void *ctx, const char *name, const char *alt,
			  const char *desc)
{
	struct ns_counter_plain *p = ctx;
	int len = desc ? (int)strcspn(desc, "\n") : 0;
	char both[160];

	if (alt)
		snprintf(both, sizeof(both), "%s OR %s", name, alt);
	fprintf(p->out, "  %-36s %.*s\n", alt ? both : name, len,
		desc ? desc : "");
}

static void plain_note(void *ctx, const char *text)
{
	struct ns_counter_plain *p = ctx;

	fprintf(p->out, "\n%s\n", text);
}

void ns_counter_plain_init(struct ns_counter_plain *p, FILE *out)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->lister = (struct ns_counter_lister){
		.section = plain_section, .counter = plain_counter,
		.note = plain_note, .ctx = p,
	};
}
