// SPDX-License-Identifier: GPL-2.0
/*
 * --serve's pieces without a socket: the snapshot's checks, --exemplars'
 * SPEC, the exemplars linked to the kernel's buckets, and the exposition
 * in both formats: cumulative buckets, +Inf = _count = the buckets' sum,
 * "le" the bucket bounds over tsc_khz, escaping, what OpenMetrics adds.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "source/histograms.h"
#include "stage/exemplar.h"
#include "view/metrics.h"
#include "tap.h"
#include "tests.h"

#define KHZ	1000000u	/* 1 GHz: a tick is a nanosecond */

static bool number_is(double v, const char *want)
{
	char buf[32];

	ns_metrics_number(v, buf, sizeof(buf));
	if (!strcmp(buf, want))
		return true;
	printf("# %.17g: got %s, want %s\n", v, buf, want);
	return false;
}

static void numbers(void)
{
	tap_ok(TAP_IS(number_is(0, "0.0")) && TAP_IS(number_is(1, "1.0")) &&
	       TAP_IS(number_is(10, "10.0")) && TAP_IS(number_is(0.95, "0.95")) &&
	       TAP_IS(number_is(0.001, "0.001")) &&
	       TAP_IS(number_is(1e-4, "0.0001")) &&
	       TAP_IS(number_is(1e-5, "1e-05")) &&
	       TAP_IS(number_is(1e5, "100000.0")) &&
	       TAP_IS(number_is(1e6, "1e+06")) &&
	       TAP_IS(number_is(1.44e-7, "1.44e-07")) &&
	       TAP_IS(number_is(1.0 / 0.0, "+Inf")),
	       "metrics: numbers as OpenMetrics' canonical ones (Go's %%g)");
}

static void negotiation(void)
{
	static const char prometheus[] =
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

	tap_ok(TAP_IS(ns_metrics_negotiate(prometheus) == NS_METRICS_OPENMETRICS) &&
	       TAP_IS(ns_metrics_negotiate(NULL) == NS_METRICS_PROM) &&
	       TAP_IS(ns_metrics_negotiate("*/*") == NS_METRICS_PROM) &&
	       TAP_IS(ns_metrics_negotiate("text/plain;version=0.0.4") == NS_METRICS_PROM) &&
	       TAP_IS(ns_metrics_negotiate("application/openmetrics-text") == NS_METRICS_OPENMETRICS) &&
	       TAP_IS(ns_metrics_negotiate("application/openmetrics-text;version=2.0.0") == NS_METRICS_PROM) &&
	       TAP_IS(ns_metrics_negotiate("application/openmetrics-text; q=0.3, text/plain; q=0.5") == NS_METRICS_PROM),
	       "metrics: Accept as Prometheus sends it is OpenMetrics, by q-value, else 0.0.4");
}

static bool escaped_is(const char *s, bool help, enum ns_metrics_format f,
		       const char *want)
{
	char buf[128] = "";
	FILE *m = fmemopen(buf, sizeof(buf), "w");

	ns_metrics_escape(m, s, help, f);
	fclose(m);
	if (!strcmp(buf, want))
		return true;
	printf("# got [%s], want [%s]\n", buf, want);
	return false;
}

static void escaping(void)
{
	const char *s = "a\\b\"c\nd\xff";

	tap_ok(TAP_IS(escaped_is(s, false, NS_METRICS_PROM, "a\\\\b\\\"c\\nd\xef\xbf\xbd")) &&
	       TAP_IS(escaped_is(s, false, NS_METRICS_OPENMETRICS, "a\\\\b\\\"c\\nd\xef\xbf\xbd")) &&
	       TAP_IS(escaped_is(s, true, NS_METRICS_PROM, "a\\\\b\"c\\nd\xef\xbf\xbd")) &&
	       TAP_IS(escaped_is(s, true, NS_METRICS_OPENMETRICS, "a\\\\b\\\"c\\nd\xef\xbf\xbd")),
	       "metrics: label values and HELP escaped as each format says, made UTF-8");
}

static void specs(void)
{
	struct nsl_agg a;

	tap_ok(TAP_IS(!ns_agg_spec("all", &a) && a.flags == NSL_AGG_ALL) &&
	       TAP_IS(!ns_agg_spec("span>p99", &a) && a.flags == NSL_AGG_P99 &&
		      a.region == NSL_AGG_SPAN) &&
	       TAP_IS(!ns_agg_spec("queue>50us", &a) && !a.flags &&
		      a.region == NSL_R_QUEUE && a.threshold_ns == 50000) &&
	       TAP_IS(!ns_agg_spec("rx-tcp>1.5ms", &a) &&
		      a.region == NSL_R_RX_TCP && a.threshold_ns == 1500000) &&
	       TAP_IS(!ns_agg_spec("tcp>200", &a) && a.threshold_ns == 200) &&
	       TAP_IS(ns_agg_spec("foo>p99", &a)) && TAP_IS(ns_agg_spec("queue>", &a)) &&
	       TAP_IS(ns_agg_spec("queue>0", &a)) && TAP_IS(ns_agg_spec("queue>5x", &a)) &&
	       TAP_IS(ns_agg_spec("queue", &a)) && TAP_IS(ns_agg_spec("tcp>-1us", &a)),
	       "metrics: --exemplars all, REGION>p99, REGION>TIME; others refused");
}

/* The snapshot of the tests below: tcp, if7@99 tx ipv4 tcp, twice (merged), and other. */
struct snapbuf {
	struct nsl_agg_head head;
	struct nsl_agg_hist hist[3];
};

static void make_snap(struct snapbuf *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->head = (struct nsl_agg_head){
		.magic = NSL_AGG_MAGIC, .abi_version = NSL_ABI_VERSION,
		.load_id = 5, .since_realtime_ns = 1700000000500000000ull,
		.tsc_khz = KHZ, .nhist = 3, .conf = { .flags = NSL_AGG_ON },
		.tau_o = 20, .tau_b = 10, .blocks = 9, .trunc = 1, .open = 2,
		.exemplars = 3, .threshold_ticks = 1500, .emitted = 11,
		.other = 4,
	};
	for (unsigned int i = 0; i < 2; i++) {
		struct nsl_agg_hist *h = &sb->hist[i];

		h->region = NSL_R_TCP;
		h->dir = NSL_DIR_TX;
		h->family = AF_INET;
		h->proto = 6;
		h->group = 1 + i;
		h->ifindex = 7;
		h->netns = 99;
	}
	sb->hist[0].bucket[40] = 2;	/* 128 .. 144 ticks */
	sb->hist[0].bucket[42] = 1;	/* 160 .. 176; 41 empty between */
	sb->hist[1].bucket[42] = 2;
	sb->hist[0].sum_ticks = 300 + 170;
	sb->hist[1].sum_ticks = 340;
	sb->hist[2].region = NSL_AGG_SPAN;	/* group 0 */
	sb->hist[2].bucket[NSL_AGG_BUCKETS - 1] = 4;
	sb->hist[2].sum_ticks = 4ull << 36;
}

static void snapshot_checks(void)
{
	struct snapbuf sb;
	struct ns_agg_snap s;
	char why[128];
	bool ok;

	make_snap(&sb);
	ok = !ns_agg_parse(&sb, sizeof(sb), &s, why, sizeof(why)) &&
	     s.head.nhist == 3 && ns_agg_count(&s.hist[0]) == 3;
	ns_agg_free(&s);
	tap_ok(TAP_IS(ok) &&
	       TAP_IS(ns_agg_parse(&sb, sizeof(sb) - 1, &s, why, sizeof(why)) &&
		      strstr(why, "truncated")) &&
	       TAP_IS((sb.head.magic = 1, ns_agg_parse(&sb, sizeof(sb), &s, why,
						       sizeof(why))) &&
		      strstr(why, "magic")) &&
	       TAP_IS((make_snap(&sb), sb.head.abi_version = 6,
		       ns_agg_parse(&sb, sizeof(sb), &s, why, sizeof(why))) &&
		      strstr(why, "ABI 6")) &&
	       TAP_IS((make_snap(&sb), sb.hist[1].region = NSL_R_MAX,
		       ns_agg_parse(&sb, sizeof(sb), &s, why, sizeof(why))) &&
		      strstr(why, "region")),
	       "metrics: a snapshot read whole; short, bad magic, ABI 6, bad region refused");
}

/* The line of @text that starts with @prefix, its value after it (or NULL). */
static const char *after(const char *text, const char *prefix)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, prefix, strlen(prefix)))
			return l + strlen(prefix);
	return NULL;
}

/* How many times @s occurs in @text. */
static unsigned int count_of(const char *text, const char *s)
{
	unsigned int n = 0;

	for (const char *p = text; p && (p = strstr(p, s)); p++)
		n++;
	return n;
}

#define TCP_SERIES	"netslice_region_latency_seconds_bucket{region=\"tcp\",dir=\"tx\",dev=\"if7@99\",family=\"ipv4\",proto=\"tcp\",le="
#define TCP_LABELS	"{region=\"tcp\",dir=\"tx\",dev=\"if7@99\",family=\"ipv4\",proto=\"tcp\"}"

static bool value_is(const char *text, const char *prefix, const char *want)
{
	const char *v = after(text, prefix);

	if (v && *v == ' ')
		v++;
	if (v && !strncmp(v, want, strlen(want)) &&
	    (v[strlen(want)] == '\n' || v[strlen(want)] == ' '))
		return true;
	printf("# %s: got %.40s, want %s\n", prefix, v ? v : "(none)", want);
	return false;
}

static char *format(const struct ns_agg_snap *s, const struct ns_exemplars *ex,
		    enum ns_metrics_format f)
{
	struct ns_metrics_in in = {
		.snap = s, .ex = ex, .version = "9.9\"x", .abi = 7,
	};
	size_t len;
	char *text = ns_metrics_text(&in, f, &len);

	if (text && strlen(text) != len)
		printf("# length %zu, strlen %zu\n", len, strlen(text));
	return text;
}

static void prometheus_text(const struct ns_agg_snap *s)
{
	char *t = format(s, NULL, NS_METRICS_PROM);

	/* le: low(41) = 144, low(42) = 160, low(43) = 176 ticks at 1 GHz */
	tap_ok(TAP_IS(value_is(t, TCP_SERIES "\"1.44e-07\"}", "2")) &&
	       TAP_IS(value_is(t, TCP_SERIES "\"1.6e-07\"}", "2")) &&
	       TAP_IS(value_is(t, TCP_SERIES "\"1.76e-07\"}", "5")) &&
	       TAP_IS(value_is(t, TCP_SERIES "\"+Inf\"}", "5")) &&
	       TAP_IS(value_is(t, "netslice_region_latency_seconds_count" TCP_LABELS " ", "5")) &&
	       TAP_IS(value_is(t, "netslice_region_latency_seconds_sum" TCP_LABELS " ", "8.1e-07")) &&
	       TAP_IS(value_is(t, TCP_SERIES "\"1.92e-07\"}", "5")),
	       "metrics: 0.0.4: two histograms of the same labels merged, cumulative, le = low(i + 1) / tsc_khz, +Inf = _count");
	tap_ok(TAP_IS(count_of(t, "proto=\"tcp\",le=") ==
		      count_of(t, "proto=\"other\",le=")) &&
	       TAP_IS(count_of(t, "proto=\"tcp\",le=") > 4),
	       "metrics: every series the same le, from the first bucket any holds to the last (a sum by le adds like with like)");
	tap_ok(TAP_IS(value_is(t, "netslice_region_latency_seconds_bucket{region=\"span\",dir=\"tx\",dev=\"other\",family=\"other\",proto=\"other\",le=\"+Inf\"}", "4")) &&
	       TAP_IS(!strstr(t, "region=\"span\",dir=\"tx\",dev=\"other\",family=\"other\",proto=\"other\",le=\"17.1")),
	       "metrics: group 0 is other; the last bucket (2^34 ticks on) only under +Inf");
	tap_ok(TAP_IS(value_is(t, "# TYPE netslice_blocks_total", "counter")) &&
	       TAP_IS(value_is(t, "netslice_blocks_total", "9")) &&
	       TAP_IS(value_is(t, "netslice_other_blocks_total", "4")) &&
	       TAP_IS(value_is(t, "# TYPE netslice_build_info", "gauge")) &&
	       TAP_IS(value_is(t, "netslice_build_info{version=\"9.9\\\"x\",abi=\"7\"}", "1")) &&
	       TAP_IS(value_is(t, "netslice_up", "1")) &&
	       TAP_IS(value_is(t, "netslice_start_time_seconds", "1700000000.500")) &&
	       TAP_IS(value_is(t, "netslice_correction_seconds{tau=\"tau_o\"}", "2e-08")) &&
	       TAP_IS(value_is(t, "netslice_exemplar_threshold_seconds{region=\"span\"}", "1.5e-06")) &&
	       TAP_IS(!strstr(t, "# EOF")) && TAP_IS(!strstr(t, "# UNIT")) &&
	       TAP_IS(!strstr(t, "} 5 #")),
	       "metrics: 0.0.4: counters named _total, info as a gauge, no UNIT, no exemplar, no EOF");
	free(t);
}

static void openmetrics_text(const struct ns_agg_snap *s)
{
	struct nsl_block b = { .nrec = 1, .ifindex = 7, .family = AF_INET,
			       .proto = 6, .seq = 77, .ndev = 1 };
	struct ns_exemplars ex;
	char *t;

	b.hdr.cpu = 1;
	b.dev[0] = (struct nsl_dev){ .ifindex = 7, .netns = 99 };
	b.rec[0] = (struct nsl_record){ .region = NSL_R_TCP, .ticks = 190,
					.nmerged = 1 };	/* 170 once corrected */
	ns_exemplars_init(&ex, true);
	ex.tau_o = s->head.tau_o;
	ex.tau_b = s->head.tau_b;
	ns_exemplars_add(&ex, &b, 1700000001.25);
	t = format(s, &ex, NS_METRICS_OPENMETRICS);
	tap_ok(TAP_IS(value_is(t, TCP_SERIES "\"1.76e-07\"}", "5 # {trace_id=\"cpu1:seq77\",block=\"1\"} 1.7e-07 1700000001.250")) &&
	       TAP_IS(value_is(t, TCP_SERIES "\"1.44e-07\"}", "2")) &&
	       TAP_IS(ns_exemplars_find(&ex, &s->hist[0], 42) != NULL) &&
	       TAP_IS(ns_exemplars_find(&ex, &s->hist[0], 41) == NULL),
	       "metrics: OpenMetrics: the exemplar on the bucket nsl_agg_values() puts it in, trace_id cpu:seq, its -w number, value, time");
	tap_ok(TAP_IS(value_is(t, "# TYPE netslice_blocks", "counter")) &&
	       TAP_IS(value_is(t, "netslice_blocks_total", "9")) &&
	       TAP_IS(value_is(t, "# TYPE netslice_build", "info")) &&
	       TAP_IS(value_is(t, "# TYPE netslice_region_latency_seconds", "histogram")) &&
	       TAP_IS(value_is(t, "# UNIT netslice_region_latency_seconds", "seconds")) &&
	       TAP_IS(strstr(t, "# TYPE netslice_region_latency_seconds histogram\n# UNIT netslice_region_latency_seconds seconds\n# HELP netslice_region_latency_seconds ")) &&
	       TAP_IS(strlen(t) > 6 && !strcmp(t + strlen(t) - 6, "# EOF\n")),
	       "metrics: OpenMetrics: families TYPE, UNIT, HELP; counter and info families named without their suffix; # EOF last");
	free(t);
	ns_exemplars_free(&ex);
}

static void down(void)
{
	char *t = format(NULL, NULL, NS_METRICS_OPENMETRICS);

	tap_ok(TAP_IS(value_is(t, "netslice_up", "0")) &&
	       TAP_IS(!strstr(t, "netslice_region_latency_seconds")) &&
	       TAP_IS(!strstr(t, "netslice_blocks")) &&
	       TAP_IS(strstr(t, "# EOF\n") != NULL),
	       "metrics: no snapshot: netslice_up 0 and the build, nothing else");
	free(t);
}

void test_metrics(void)
{
	struct snapbuf sb;
	struct ns_agg_snap s;
	char why[128];

	numbers();
	negotiation();
	escaping();
	specs();
	snapshot_checks();
	make_snap(&sb);
	if (ns_agg_parse(&sb, sizeof(sb), &s, why, sizeof(why))) {
		tap_ok(false, "metrics: the test's snapshot: %s", why);
		return;
	}
	prometheus_text(&s);
	openmetrics_text(&s);
	down();
	ns_agg_free(&s);
}
