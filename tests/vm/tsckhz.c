// SPDX-License-Identifier: GPL-2.0
/*
 * tsckhz: the host's TSC rate in kHz, which run-vm.sh hands the test
 * VM's kernel as tsc_early_khz=.
 *
 * Under QEMU TCG the guest's rdtsc reads the host's TSC, but the guest
 * finds its rate by timing the PIT against it, and a busy host stretches
 * that: a VM booted beside two others took a 2.6 GHz TSC for 491 MHz
 * ("PIT calibration deviates from HPET: 491314 2594405"), its clocksource
 * watchdog then marked the TSC unstable, sched_clock() fell back to a
 * clamped per-tick clock, and cpu-clock counted 0 ns in most regions of
 * t_counters.sh.  Here both ends of the interval are read from the
 * host's monotonic clock around a TSC read, keeping the pair read
 * closest together of a few, so that being descheduled only lengthens
 * the interval, which both clocks see.  Prints nothing and fails where
 * there is no invariant TSC to measure.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* A TSC reading and the clock's midpoint around it, of the tightest of 9. */
static void sample(uint64_t *tsc, int64_t *ns)
{
	int64_t best = INT64_MAX;

	for (int i = 0; i < 9; i++) {
		int64_t a = mono_ns();
		uint64_t t = __rdtsc();
		int64_t b = mono_ns();

		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

/* Whether /proc/cpuinfo lists the TSC as invariant. */
static int invariant_tsc(void)
{
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int ok = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5)) {
			ok = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
			break;
		}
	fclose(f);
	return ok;
}

int main(void)
{
	struct timespec wait = { .tv_nsec = 200000000 };
	uint64_t t0, t1;
	int64_t n0, n1;

	if (!invariant_tsc())
		return 1;
	sample(&t0, &n0);
	nanosleep(&wait, NULL);
	sample(&t1, &n1);
	if (n1 <= n0 || t1 <= t0)
		return 1;
	printf("%llu\n", (unsigned long long)((t1 - t0) * 1000000 / (uint64_t)(n1 - n0)));
	return 0;
}
#else
int main(void)
{
	return 1;
}
#endif
