// SPDX-License-Identifier: GPL-2.0
/*
 * Event names to encodings through libpfm4, and the one-line reasons.
 * Nothing here needs a PMU: libpfm4 encodes perf's generic events through
 * its "perf" PMU on any Linux machine, and the machine itself (probe, CPU
 * PMU, paranoia) is a fake.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "source/counters.h"
#include "tap.h"
#include "tests.h"

static const struct {
	const char *name;
	__u32 type;
	__u64 config;
} encodings[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "perf::PERF_COUNT_SW_CPU_CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "perf::cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "LLC-load-misses", PERF_TYPE_HW_CACHE, 0x10002 },
	{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, 0x10000 },
};

static void names(void)
{
	for (size_t i = 0; i < sizeof(encodings) / sizeof(encodings[0]); i++) {
		struct perf_event_attr attr;
		char canon[128], err[256] = "";
		int ret = ns_counter_encode(encodings[i].name, &attr, canon,
					    sizeof(canon), err, sizeof(err));

		tap_ok(TAP_IS(!ret) && TAP_IS(attr.type == encodings[i].type) &&
		       TAP_IS(attr.config == encodings[i].config) &&
		       TAP_IS(attr.exclude_user) &&
		       TAP_IS(!attr.exclude_kernel),
		       "events: %s -> type %u config 0x%llx (%s%s)",
		       encodings[i].name, encodings[i].type,
		       (unsigned long long)encodings[i].config, canon, err);
	}
}

static const struct {
	const char *name, *want;
} unknown[] = {
	{ "cyclse", "cyclse: unknown event; did you mean cycles?" },
	{ "instrucitons", "instrucitons: unknown event; did you mean instructions?" },
	{ "page-fualts", "page-fualts: unknown event; did you mean page-faults?" },
	{ "perf::cpu-clok", "perf::cpu-clok: unknown event; did you mean cpu-clock?" },
	{ "zzzzzzzzzzzz", "zzzzzzzzzzzz: unknown event" },
};

static void unknown_names(void)
{
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		struct perf_event_attr attr;
		char canon[128], err[256] = "";

		tap_ok(TAP_IS(ns_counter_encode(unknown[i].name, &attr, canon, sizeof(canon),
						err, sizeof(err))) &&
		       TAP_IS(!strcmp(err, unknown[i].want)),
		       "events: unknown %s: '%s'", unknown[i].name, err);
	}
}

/* The machine, as the tests want it. */
struct fake {
	int hw_errno, sw_errno;
	bool pmu;
	int paranoid;
	unsigned int probes;
};

static int fake_probe(const struct perf_event_attr *attr, void *ctx)
{
	struct fake *f = ctx;

	f->probes++;
	if (!attr->exclude_user || attr->exclude_kernel)
		return EINVAL;	/* must count kernel mode only */
	return ns_counter_is_hw(attr) ? f->hw_errno : f->sw_errno;
}

static bool fake_pmu(void *ctx)
{
	return ((struct fake *)ctx)->pmu;
}

static int fake_paranoid(void *ctx)
{
	return ((struct fake *)ctx)->paranoid;
}

static const struct {
	const char *row, *spec;
	struct fake machine;
	int ret;
	const char *want;	/* the error, or the names joined by ',' */
} parses[] = {
	{ "software events on a machine without a PMU", "cpu-clock,page-faults,cs",
	  { ENOENT, 0, false, 2, 0 }, 0, "cpu-clock,page-faults,cs" },
	{ "cycles without a PMU", "cpu-clock,cycles", { ENOENT, 0, false, 2, 0 }, -1,
	  "cycles: no PMU in this machine (hardware events need a PMU, or a VM with a virtual PMU)" },
	{ "EOPNOTSUPP without a PMU", "instructions", { EOPNOTSUPP, 0, false, 2, 0 }, -1,
	  "instructions: no PMU in this machine (hardware events need a PMU, or a VM with a virtual PMU)" },
	{ "a PMU that lacks the event", "LLC-load-misses", { ENOENT, 0, true, 2, 0 }, -1,
	  "LLC-load-misses: not supported by this PMU" },
	{ "EOPNOTSUPP with a PMU", "branch-misses", { EOPNOTSUPP, 0, true, 2, 0 }, -1,
	  "branch-misses: not supported by this PMU" },
	{ "hardware event without privilege", "cycles", { EACCES, 0, true, 2, 0 }, -1,
	  "cycles: needs CAP_PERFMON (or CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0; it is 2)" },
	{ "EPERM, paranoia unknown", "cycles", { EPERM, 0, true, INT_MIN, 0 }, -1,
	  "cycles: needs CAP_PERFMON (or CAP_SYS_ADMIN, or kernel.perf_event_paranoid <= 0)" },
	{ "software event without privilege: the kernel decides", "cpu-clock",
	  { 0, EACCES, true, 3, 0 }, 0, "cpu-clock" },
	{ "a PMU: cycles and instructions", "cycles,instructions", { 0, 0, true, 2, 0 }, 0,
	  "cycles,instructions" },
	{ "five events", "cycles,instructions,cs,faults,cpu-clock", { 0, 0, true, 2, 0 }, -1,
	  "-e cycles,instructions,cs,faults,cpu-clock: too many events (at most 4)" },
	{ "an unknown one among good ones", "cpu-clock,cyclse", { 0, 0, true, 2, 0 }, -1,
	  "cyclse: unknown event; did you mean cycles?" },
	{ "empty", ",", { 0, 0, true, 2, 0 }, -1, "-e ',': no event named" },
};

static void parse(void)
{
	for (size_t i = 0; i < sizeof(parses) / sizeof(parses[0]); i++) {
		struct fake f = parses[i].machine;
		struct ns_counter_host host = {
			fake_probe, fake_pmu, fake_paranoid, &f,
		};
		struct ns_counters sel;
		char err[256] = "", joined[256] = "";
		int ret = ns_counters_parse(parses[i].spec, &sel, &host, err,
					    sizeof(err));
		size_t used = 0;

		for (unsigned int e = 0; !ret && e < sel.n; e++)
			used += snprintf(joined + used, sizeof(joined) - used,
					 "%s%s", e ? "," : "", sel.name[e]);
		tap_ok(TAP_IS(ret == parses[i].ret) &&
		       TAP_IS(!strcmp(ret ? err : joined, parses[i].want)) &&
		       TAP_IS((ret || (sel.ev.nevents == sel.n && !sel.ev.flags))),
		       "events: parse, %s: '%s'", parses[i].row, ret ? err : joined);
	}

	struct fake f = { 0, 0, true, 2, 0 };
	struct ns_counter_host host = { fake_probe, fake_pmu, fake_paranoid, &f };
	struct ns_counters sel;
	char err[256];

	tap_ok(TAP_IS(!ns_counters_parse("cpu-clock,cycles", &sel, &host, err, sizeof(err))) &&
	       TAP_IS(f.probes == 2) &&
	       TAP_IS(sel.ev.ev[0].type == PERF_TYPE_SOFTWARE) &&
	       TAP_IS(sel.ev.ev[1].type == PERF_TYPE_HARDWARE) &&
	       TAP_IS(sel.ev.ev[1].config == PERF_COUNT_HW_CPU_CYCLES) &&
	       TAP_IS(!sel.ev.ev[2].type) && TAP_IS(!sel.ev.ev[2].config),
	       "events: parse fills struct nsl_events, probes each once, zero past n");
}

static void kernel_reasons(void)
{
	static const struct {
		int errnum;
		const char *want;
	} rows[] = {
		{ EINVAL, "NSIOCSEVENT cycles,cs: the kernel refused the encoding (EINVAL)" },
		{ ENODEV, "NSIOCSEVENT cycles,cs: the kernel could not create a counter on every CPU (ENODEV)" },
		{ EOPNOTSUPP, "NSIOCSEVENT cycles,cs: this netslice.ko cannot count events (durations only) (EOPNOTSUPP)" },
		{ EPERM, "NSIOCSEVENT cycles,cs: hardware events need CAP_PERFMON or CAP_SYS_ADMIN (EPERM)" },
	};
	struct ns_counters sel = { .n = 2 };
	char msg[256];

	strcpy(sel.name[0], "cycles");
	strcpy(sel.name[1], "cs");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ns_counters_kernel_reason(&sel, "NSIOCSEVENT", rows[i].errnum, msg,
					  sizeof(msg));
		tap_ok(!strcmp(msg, rows[i].want), "events: kernel says %s: '%s'",
		       strerrorname_np(rows[i].errnum), msg);
	}
}

static void kinds(void)
{
	struct nsl_event cyc = { .type = PERF_TYPE_HARDWARE, .config = 0 };
	struct nsl_event ins = { .type = PERF_TYPE_HARDWARE, .config = 1 };
	struct nsl_event raw = { .type = PERF_TYPE_RAW, .config = 0xc0 };
	struct nsl_event sw = { .type = PERF_TYPE_SOFTWARE, .config = 0 };

	tap_ok(TAP_IS(ns_counter_kind(&cyc, "perf::PERF_COUNT_HW_CPU_CYCLES") == NS_COUNTER_CYCLES) &&
	       TAP_IS(ns_counter_kind(&ins, NULL) == NS_COUNTER_INSTRUCTIONS) &&
	       TAP_IS(ns_counter_kind(&raw, "icl::INST_RETIRED:ANY:u=0") == NS_COUNTER_INSTRUCTIONS) &&
	       TAP_IS(ns_counter_kind(&raw, "icl::UNHALTED_CORE_CYCLES") == NS_COUNTER_CYCLES) &&
	       TAP_IS(ns_counter_kind(&sw, "perf::PERF_COUNT_SW_CPU_CLOCK") == NS_COUNTER_OTHER),
	       "events: cycles and instructions recognised, generic and raw");
}

/* -L's plain text with @host. */
static int list_text(const struct ns_counter_host *host, char **text)
{
	struct ns_counter_plain plain;
	char err[256];
	size_t size;
	FILE *out = open_memstream(text, &size);
	int ret;

	ns_counter_plain_init(&plain, out);
	ret = ns_counters_list(&plain.lister, host, err, sizeof(err));
	fclose(out);
	return ret;
}

static void listing(void)
{
	struct fake f = { ENOENT, 0, false, 2, 0 };
	struct ns_counter_host host = { fake_probe, fake_pmu, fake_paranoid, &f };
	char *text = NULL;
	int ret = list_text(&host, &text);

	tap_ok(TAP_IS(!ret) &&
	       TAP_IS(strstr(text, "Software events (kernel perf):\n  cpu-clock ")) &&
	       TAP_IS(strstr(text, "\n  context-switches OR cs ")) &&
	       TAP_IS(strstr(text, "\nNo hardware PMU found")) &&
	       TAP_IS(!strstr(text, "  cycles")),
	       "events: -L without a PMU lists software events and says so");
	free(text);

	f = (struct fake){ 0, 0, true, 2, 0 };
	ret = list_text(&host, &text);
	tap_ok(TAP_IS(!ret) &&
	       TAP_IS(strstr(text, "\nHardware events, generic (kernel perf):\n  cycles OR cpu-cycles ")) &&
	       TAP_IS(strstr(text, "\n  LLC-load-misses ")) &&
	       TAP_IS(!strstr(text, "No hardware PMU")),
	       "events: -L with a PMU lists the generic hardware events");
	for (char *p = text, *nl; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl && nl - p > 400) {
			tap_ok(false, "events: -L line over 400 characters");
			break;
		}
	}
	free(text);
}

void test_counters(void)
{
	names();
	unknown_names();
	parse();
	kernel_reasons();
	kinds();
	listing();
}
