// SPDX-License-Identifier: GPL-2.0
/* stress: small things */
#define TAP_IMPLEMENT
#include "stress.h"

long stress_page;
struct nsl_info stress_info;		/* NSIOCGINFO of the module */
bool stress_cpu_online[MAXCPUS];
unsigned int stress_ncpus_online;
bool stress_cpu_pmu;			/* a core PMU: hardware events */
uint32_t stress_pmu_type[64];		/* dynamic PMU types (sysfs) */
int stress_npmu_types;
/*
 * The kprobe and uprobe PMUs take config1 as a pointer to the caller's
 * memory (the probed symbol or path: perf_kprobe_init() copies it with
 * strndup_user()), so a random config is EFAULT from them.
 */
uint32_t stress_probe_pmu_type[2];
int stress_nprobe_pmu_types;
int stress_cycles = CYCLES_DEFAULT;

/* NS_STRESS_CYCLES, if set: 0, or -1 with a line on stderr. */
int stress_cycles_from_env(void)
{
	const char *s = getenv("NS_STRESS_CYCLES");
	char *end;
	long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 1000) {
		fprintf(stderr, "stress: NS_STRESS_CYCLES=%s is not a count of 1..1000\n", s);
		return -1;
	}
	stress_cycles = (int)v;
	return 0;
}

uint64_t stress_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

double stress_now_s(void)
{
	return stress_now_ns() / 1e9;
}

/* xorshift64*, one state per thread */
uint64_t stress_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

uint64_t stress_below(uint64_t *s, uint64_t n)
{
	return n ? stress_rnd(s) % n : 0;
}

bool stress_chance(uint64_t *s, unsigned int pct)
{
	return stress_below(s, 100) < pct;
}


void stress_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	stress_vline("# ", fmt, ap);
	va_end(ap);
}

/* CPUs online, from "0-1,4" */
void stress_read_online_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	unsigned int a, b;
	char sep;

	if (!f)
		return;
	while (fscanf(f, "%u", &a) == 1) {
		b = a;
		sep = fgetc(f);
		if (sep == '-') {
			if (fscanf(f, "%u", &b) != 1)
				break;
			sep = fgetc(f);
		}
		for (; a <= b && a < MAXCPUS; a++) {
			stress_cpu_online[a] = true;
			stress_ncpus_online++;
		}
		if (sep != ',')
			break;
	}
	fclose(f);
}

/* The PMUs perf has here: which types exist beyond the fixed ones. */
void stress_read_pmus(void)
{
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *de;
	char path[512];
	unsigned int type;
	FILE *f;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (!strcmp(de->d_name, "cpu") || !strcmp(de->d_name, "cpu_core") ||
		    !strcmp(de->d_name, "cpu_atom"))
			stress_cpu_pmu = true;
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u", &type) != 1 || type < K_TYPE_MAX) {
			fclose(f);
			continue;
		}
		if (stress_npmu_types < (int)(sizeof(stress_pmu_type) / sizeof(stress_pmu_type[0])))
			stress_pmu_type[stress_npmu_types++] = type;
		if ((!strcmp(de->d_name, "kprobe") || !strcmp(de->d_name, "uprobe")) &&
		    stress_nprobe_pmu_types < 2)
			stress_probe_pmu_type[stress_nprobe_pmu_types++] = type;
		fclose(f);
	}
	closedir(d);
}

/*
 * Whether a PMU may have @type.  Sysfs lists all but two: perf_event_init()
 * registers cpu_clock and task_clock, which it keeps out of sysfs, before
 * any other dynamic PMU, so they have the first two dynamic types.
 */
bool stress_pmu_type_exists(uint32_t type)
{
	if (type >= K_TYPE_MAX && type < K_TYPE_MAX + 2)
		return true;
	for (int i = 0; i < stress_npmu_types; i++)
		if (stress_pmu_type[i] == type)
			return true;
	return false;
}

bool stress_module_loaded(void)
{
	FILE *f = fopen("/proc/modules", "r");
	char line[256];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, MODNAME " ", sizeof(MODNAME));
	fclose(f);
	return found;
}

long stress_insmod(int kofd, const char *params)
{
	return syscall(SYS_finit_module, kofd, params, 0);
}

long stress_rmmod(void)
{
	return syscall(SYS_delete_module, MODNAME, O_NONBLOCK);
}
