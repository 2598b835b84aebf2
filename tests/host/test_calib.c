// SPDX-License-Identifier: GPL-2.0
/*
 * The correction formulas with hand-computed answers.  Calibration is
 * gen_calib()'s: tau_o 30 ticks, tau_beta 60, NSI 90, NSE 300,
 * n(o,e) = 2 + e, n(beta,e) = 5 + e, 3 GHz TSC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "source/calib.h"
#include "stage/correct.h"
#include "source/crc32.h"
#include "source/decode.h"
#include "source/file.h"
#include "gen.h"
#include "view/report.h"
#include "tap.h"
#include "stage/rtt.h"
#include "tests.h"
#include "tpipe.h"

/* the tables leave trailing fields (counters, retrans) zero */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static void calib_set(struct ns_calib_set *cs, unsigned int ncpus,
		      unsigned int nevents)
{
	struct nsl_calib c;

	ns_calib_alloc(cs, ncpus);
	cs->tsc_khz = GEN_TSC_KHZ;
	snprintf(cs->model, sizeof(cs->model), "Synthetic CPU @ 3.00GHz");
	for (unsigned int cpu = 0; cpu < ncpus; cpu++) {
		gen_calib(cpu, nevents, &c);
		ns_calib_put(cs, &c);
	}
}

struct r {
	uint8_t depth;
	uint16_t nmerged, flags, cpu;
	uint64_t start, ticks, c0, c1;
};

static void make_block(struct nsl_block *b, unsigned int nevents,
		       const struct r *recs, unsigned int n)
{
	memset(b, 0, sizeof(*b));
	b->hdr.kind = NSL_ITEM_BLOCK;
	b->hdr.size = NSL_BLOCK_SIZE(n);
	b->nrec = n;
	b->nevents = nevents;
	b->gso_segs = 1;
	for (unsigned int i = 0; i < n; i++) {
		b->rec[i].region = NSL_R_WRITE + i % (NSL_R_MAX - 1);
		b->rec[i].depth = recs[i].depth;
		b->rec[i].nmerged = recs[i].nmerged ? recs[i].nmerged : 1;
		b->rec[i].flags = recs[i].flags;
		b->rec[i].cpu = recs[i].cpu;
		b->rec[i].start = recs[i].start;
		b->rec[i].ticks = recs[i].ticks;
		b->rec[i].count[0] = recs[i].c0;
		b->rec[i].count[1] = recs[i].c1;
	}
}

/*
 * self: the table's self sum for the record's region (each record has a
 * region of its own here), 0 where the region gives no value (OPEN,
 * SHARED).  A MERGED record's intervals are not contiguous: in the merged
 * rows the record's two intervals are [0, 100) and [1000, 1100) (or
 * [1000, 1900)), and what ran in the second one follows it in the block.
 */
#define N_MAX 6
static const struct {
	const char *row;
	unsigned int n;
	struct r rec[N_MAX];
	uint32_t k[N_MAX];
	uint64_t want[N_MAX];
	unsigned int clamped;
	uint64_t self[N_MAX];
} cases[] = {
	{ "leaf: T = T' - tau_o", 1, { { 0, 1, 0, 0, 0, 1000 } },
	  { 0 }, { 970 }, 0, { 970 } },
	{ "siblings and one deeper outside: K = 0", 3,
	  { { 0, 1, 0, 0, 0, 1000 }, { 0, 1, 0, 0, 1000, 500 },
	    { 1, 1, 0, 0, 1600, 100 } },
	  { 0, 0, 0 }, { 970, 470, 70 }, 0, { 970, 470, 70 } },
	{ "K = 1: T = T' - tau_o - tau_beta", 2,
	  { { 0, 1, 0, 0, 0, 1000 }, { 1, 1, 0, 0, 100, 200 } },
	  { 1, 0 }, { 910, 170 }, 0, { 740, 170 } },
	{ "K = 3 over two levels, one at the end not inside", 5,
	  { { 0, 1, 0, 0, 0, 5000 }, { 1, 1, 0, 0, 10, 100 },
	    { 2, 1, 0, 0, 20, 50 }, { 1, 1, 0, 0, 4000, 500 },
	    { 1, 1, 0, 0, 5000, 400 } },
	  { 3, 1, 0, 0, 0 }, { 4790, 10, 20, 470, 370 }, 0,
	  { 4310, 0, 20, 470, 370 } },
	{ "merged: nmerged 3 takes 3 tau_o", 1, { { 0, 3, NSL_RF_MERGED, 0, 0, 900 } },
	  { 0 }, { 810 }, 0, { 810 } },
	{ "a merged record inside counts nmerged pairs", 2,
	  { { 0, 1, 0, 0, 0, 2000 }, { 1, 2, NSL_RF_MERGED, 0, 50, 300 } },
	  { 2, 0 }, { 1850, 240 }, 0, { 1610, 240 } },
	{ "an OPEN record inside is not a pair", 2,
	  { { 0, 1, 0, 0, 0, 2000 }, { 1, 1, NSL_RF_OPEN, 0, 50, 0 } },
	  { 0, 0 }, { 1970, 0 }, 0, { 1970, 0 } },
	{ "clamped below zero", 2,
	  { { 0, 1, 0, 0, 0, 70 }, { 1, 1, 0, 0, 10, 20 } },
	  { 1, 0 }, { 0, 0 }, 2, { 0, 0 } },
	{ "CPU 1 has its own calibration (tau_o 100)", 2,
	  { { 0, 1, 0, 1, 0, 1000 }, { 0, 1, 0, 7, 0, 1000 } },
	  { 0, 0 }, { 900, 970 }, 0, { 900, 970 } },
	/* 200 - 2 tau_o - tau_beta = 80; self 80 - (50 - tau_o) = 60 */
	{ "merged: a pair in its second interval is inside (K 1)", 3,
	  { { 0, 2, NSL_RF_MERGED, 0, 0, 200 }, { 1, 1, 0, 0, 1010, 50 },
	    { 0, 1, 0, 0, 2000, 100 } },
	  { 1, 0, 0 }, { 80, 20, 70 }, 0, { 60, 20, 70 } },
	/*
	 * 1000 - 2 tau_o - tau_beta = 880, self 880 - 400 - 70 = 410; the
	 * GAP no pair but a child; the sibling at depth 0 ends the run: the
	 * record after it is its own (200 - 90 = 110, self 110 - 10).
	 */
	{ "merged: a GAP inside is no pair, a sibling ends what is inside", 5,
	  { { 0, 2, NSL_RF_MERGED, 0, 0, 1000 },
	    { 1, 1, NSL_RF_GAP, 0, 1500, 400 }, { 1, 1, 0, 0, 1600, 100 },
	    { 0, 1, 0, 0, 3000, 200 }, { 1, 1, 0, 0, 3010, 40 } },
	  { 1, 0, 0, 1, 0 }, { 880, 400, 70, 110, 10 }, 0,
	  { 410, 400, 70, 100, 10 } },
	{ "merged SHARED copies: corrected alike, counted elsewhere", 3,
	  { { 0, 2, NSL_RF_MERGED | NSL_RF_SHARED, 0, 0, 200 },
	    { 1, 1, NSL_RF_SHARED, 0, 1010, 50 }, { 0, 1, 0, 0, 2000, 100 } },
	  { 1, 0, 0 }, { 80, 20, 70 }, 0, { 0, 0, 70 } },
};

static void formulas(void)
{
	struct ns_calib_set cs;
	struct nsl_block b;
	struct ns_rec_corr corr[NSL_MAX_RECORDS];

	calib_set(&cs, 2, 2);
	cs.cpu[1].cost[NSL_C_NSO].ticks = 100;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int clamped = 0;
		struct tpipe t;
		bool ok = true;

		make_block(&b, 0, cases[i].rec, cases[i].n);
		ns_correct_block(&cs, &b, corr);
		tpipe_init(&t, &cs, NULL);
		tpipe_block(&t, &b);
		for (unsigned int j = 0; j < cases[i].n; j++) {
			double self = t.p.acc.region[b.rec[j].region].self_sum;

			clamped += corr[j].ticks_clamped;
			if (corr[j].k != cases[i].k[j] ||
			    ns_nested_pairs(&b, j) != cases[i].k[j] ||
			    corr[j].ticks != cases[i].want[j] ||
			    self != cases[i].self[j]) {
				printf("# record %u: K %u ticks %llu self %.0f\n", j,
				       corr[j].k, (unsigned long long)corr[j].ticks,
				       self);
				ok = false;
			}
		}
		tpipe_free(&t);
		tap_ok(TAP_IS(ok) && TAP_IS(clamped == cases[i].clamped),
		       "correct: %s",
		       cases[i].row);
	}

	/* counters: N = N' - n(o,e) - K n(beta,e), e0 2/5, e1 3/6 */
	static const struct r crec[] = {
		{ 0, 1, 0, 0, 0, 1000, 100, 200 }, { 1, 1, 0, 0, 10, 100, 3, 50 },
	};

	make_block(&b, 2, crec, 2);
	ns_correct_block(&cs, &b, corr);
	tap_ok(TAP_IS(corr[0].count[0] == 93) &&
	       TAP_IS(corr[0].count[1] == 191) &&
	       TAP_IS(!corr[0].count_clamped),
	       "correct: counters with K 1: 100-2-5 = 93, 200-3-6 = 191");
	tap_ok(TAP_IS(corr[1].count[0] == 1) &&
	       TAP_IS(corr[1].count[1] == 47) && TAP_IS(!corr[1].count_clamped),
	       "correct: leaf counters: 3-2 = 1, 50-3 = 47");
	ns_calib_free(&cs);

	/* no calibration: raw values, K still known */
	make_block(&b, 2, crec, 2);
	ns_correct_block(NULL, &b, corr);
	tap_ok(TAP_IS(corr[0].ticks == 1000) && TAP_IS(corr[0].k == 1) &&
	       TAP_IS(corr[1].count[0] == 3),
	       "correct: without calibration the values stay raw");
}

static void feed(struct tpipe *t, const struct gen_opts *g)
{
	unsigned char item[sizeof(struct nsl_block)];
	struct ns_item it;

	for (unsigned int i = 0; i < g->n; i++) {
		ns_decode_item(item, gen_block(g, i, item), &it);
		tpipe_push(t, &it);
	}
}

static void report(void)
{
	struct gen_opts g = { .n = 20, .nevents = 2, .invalid_every = 4 };
	struct ns_calib_set cs;
	struct ns_counters sel;
	struct tpipe t;
	struct ns_acc *r = &t.p.acc;
	struct ns_summary s;

	/* raw: IPC and INVALID exclusion */
	tpipe_init(&t, NULL, NULL);
	gen_events(2, &sel);
	ns_acc_set_counters(r, &sel);
	feed(&t, &g);
	TAP_NEAR(ns_acc_ipc(r, NSL_R_TCP), 44.0 / 42.0, "report: raw IPC tcp 44/42");
	tap_ok(TAP_IS(r->invalid == 5) &&
	       TAP_IS(r->region[NSL_R_IP].invalid == 5) &&
	       TAP_IS(r->region[NSL_R_IP].ev_n[0] == 15) &&
	       TAP_IS(r->region[NSL_R_IP].ev[1].n == 15) &&
	       TAP_IS(r->region[NSL_R_IP].ticks.n == 20),
	       "report: 5 INVALID ip records: counters over 15 blocks, durations over 20");
	TAP_NEAR(r->region[NSL_R_IP].ev[0].mean, 60, "report: invalid readings not averaged in (ip ev0 60)");
	tpipe_free(&t);

	/* corrected */
	calib_set(&cs, 2, 2);
	tpipe_init(&t, &cs, NULL);
	ns_acc_set_counters(r, &sel);
	feed(&t, &g);
	ns_acc_summary(r, NSL_R_WRITE, &s);
	TAP_NEAR(s.mean, 5.41, "report: corrected write mean 5.5 - 0.09 us (K 4)");
	ns_acc_summary(r, NSL_R_TCP, &s);
	TAP_NEAR(s.mean, 0.12, "report: corrected tcp 360 ticks, two leaf records");
	TAP_NEAR(ns_acc_ipc(r, NSL_R_TCP), 1.0, "report: corrected IPC tcp 38/38");
	TAP_NEAR(ns_acc_ipc(r, NSL_R_WRITE), 32480.0 / 32560.0,
		 "report: corrected IPC write (33000-520)/(33000-440)");
	TAP_NEAR(r->region[NSL_R_WRITE].raw_sum / 20, 16500, "report: raw mean kept beside");
	tap_ok(TAP_IS(r->clamped_ticks == 0) && TAP_IS(r->clamped_counts == 0),
	       "report: nothing clamped");

	/* a block whose records clamp: counted, said in the footer */
	static const struct r tiny[] = {
		{ 0, 1, 0, 0, 0, 10, 1, 1 }, { 1, 1, 0, 0, 1, 5, 1, 100 },
	};
	struct nsl_block b;
	char *text;

	make_block(&b, 2, tiny, 2);
	tpipe_block(&t, &b);
	tap_ok(TAP_IS(r->clamped_ticks == 2) && TAP_IS(r->clamped_counts == 3),
	       "report: 2 durations and 3 counter values clamped");
	text = tpipe_table(&t, &ns_plain_printer);
	tap_ok(TAP_IS(strstr(text, ": corrected for macro overhead (tau_o=10.0ns, tau_beta=20.0ns)\n")) &&
	       TAP_IS(strstr(text, "\n# 2 durations and 3 counter values clamped to 0 by the correction\n")) &&
	       TAP_IS(strstr(text, " cycles        p50        p99   instructions        p50        p99    IPC\n")),
	       "report: header says corrected with the taus, footer the clamps");
	free(text);
	tpipe_free(&t);
	ns_calib_free(&cs);
}

/* Warm and cold calibrations of one capture: both kept, apart. */
static int write_calibs(int fd, const struct ns_calib_set *warm,
			const struct ns_calib_set *cold, int ncold)
{
	struct nsf_writer w;
	struct nsl_info info;
	int ret = 0;

	gen_info(&info);
	ret |= nsf_writer_open(&w, fd, "t", &info);
	if (warm)
		ret |= nsf_write_calib(&w, warm);
	while (ncold-- > 0)
		ret |= nsf_write_calib(&w, cold);
	ret |= nsf_writer_close(&w);
	return ret;
}

static void file_cold(void)
{
	struct ns_calib_set warm, cold;
	struct nsf_reader rd;
	int fd;

	calib_set(&warm, 2, 1);
	calib_set(&cold, 2, 1);
	cold.cold = true;
	cold.cpu[1].cost[NSL_C_NSA].ticks = 12345;

	fd = memfd_create("nstest", 0);
	tap_ok(!write_calibs(dup(fd), &warm, &cold, 1), "file: CALIB and CALIB_COLD written");
	lseek(fd, 0, SEEK_SET);
	tap_ok(!nsf_reader_open(&rd, fd, "t"), "file: CALIB_COLD read (%s)", rd.err);
	tap_ok(TAP_IS(rd.have_calib) && TAP_IS(!rd.calib.cold),
	       "file: the warm set is warm");
	tap_ok(TAP_IS(rd.have_calib_cold) && TAP_IS(rd.calib_cold.cold),
	       "file: the cold set is cold");
	tap_ok(TAP_IS(rd.calib_cold.ncpus == 2) &&
	       TAP_IS(!memcmp(&rd.calib_cold.cpu[1], &cold.cpu[1], sizeof(cold.cpu[1]))),
	       "file: CALIB_COLD round-trips CPU 1's struct nsl_calib");
	tap_ok(rd.calib.cpu[1].cost[NSL_C_NSA].ticks == warm.cpu[1].cost[NSL_C_NSA].ticks,
	       "file: the warm set is not the cold one (NSA %llu)",
	       (unsigned long long)rd.calib.cpu[1].cost[NSL_C_NSA].ticks);
	nsf_reader_close(&rd);
	close(fd);

	fd = memfd_create("nstest", 0);
	write_calibs(dup(fd), NULL, &cold, 2);
	lseek(fd, 0, SEEK_SET);
	tap_ok(TAP_IS(nsf_reader_open(&rd, fd, "t")) &&
	       TAP_IS(strstr(rd.err, "second CALIB_COLD record")),
	       "file: a second CALIB_COLD is refused (%s)", rd.err);
	nsf_reader_close(&rd);
	close(fd);
	ns_calib_free(&warm);
	ns_calib_free(&cold);
}

static void file_records(void)
{
	struct gen_opts g = { .n = 10, .nevents = 2, .calib = true, .named = true };
	int fd = memfd_create("nstest", 0);
	struct nsf_reader rd;
	struct nsl_calib want;
	struct ns_counters sel;

	gen_file(&g, dup(fd));
	lseek(fd, 0, SEEK_SET);
	tap_ok(TAP_IS(!nsf_reader_open(&rd, fd, "t")) &&
	       TAP_IS(rd.have_calib) && TAP_IS(rd.have_events),
	       "file: CALIB and EVENTS records read (%s)", rd.err);
	gen_calib(1, 2, &want);
	tap_ok(TAP_IS(rd.calib.ncpus == 2) && TAP_IS(rd.calib.valid[0]) &&
	       TAP_IS(rd.calib.valid[1]) &&
	       TAP_IS(!memcmp(&rd.calib.cpu[1], &want, sizeof(want))) &&
	       TAP_IS(rd.calib.tsc_khz == GEN_TSC_KHZ) &&
	       TAP_IS(!strcmp(rd.calib.model, "Synthetic CPU @ 3.00GHz")),
	       "file: CALIB round-trips every struct nsl_calib of every CPU");
	gen_events(2, &sel);
	tap_ok(TAP_IS(rd.events.n == 2) &&
	       TAP_IS(!strcmp(rd.events.name[1], "instructions")) &&
	       TAP_IS(!strcmp(rd.events.canon[0], "perf::cycles")) &&
	       TAP_IS(!memcmp(&rd.events.ev, &sel.ev, sizeof(sel.ev))),
	       "file: EVENTS round-trips names and encodings");
	nsf_reader_close(&rd);
	close(fd);

	g = (struct gen_opts){ .n = 3 };
	fd = memfd_create("nstest", 0);
	gen_file(&g, dup(fd));
	lseek(fd, 0, SEEK_SET);
	tap_ok(TAP_IS(!nsf_reader_open(&rd, fd, "t")) &&
	       TAP_IS(!rd.have_calib) && TAP_IS(!rd.have_events) &&
	       TAP_IS(!ns_calib_get(&rd.calib, 0)),
	       "file: without them, no calibration and no names");
	nsf_reader_close(&rd);
	close(fd);

	/* a CALIB record from a newer ABI: more costs, more events */
	unsigned char rec[80 + 16 + 8 * (24 + 8 * 6)];
	struct nsf_calib_hdr h = { .ncpus = 1, .ncost = 8, .nev = 6, .tsc_khz = 1000 };
	uint64_t ticks = 77;

	memset(rec, 0, sizeof(rec));
	memcpy(rec, &h, sizeof(h));
	memcpy(rec + 80 + 16 + NSL_C_NSO * (24 + 48), &ticks, 8);
	fd = memfd_create("nstest", 0);
	{
		struct nsf_writer w;
		struct nsl_info info;
		unsigned char *buf = malloc(16 + sizeof(rec));
		struct nsf_rec_hdr rh = { NSF_CALIB, 16 + sizeof(rec), 0, 0 };

		gen_info(&info);
		nsf_writer_open(&w, dup(fd), "t", &info);
		memcpy(buf, &rh, 16);
		memcpy(buf + 16, rec, sizeof(rec));
		/* CRC as file.c computes it */
		rh.crc = ns_crc32(ns_crc32(0, &rh, 16), rec, sizeof(rec));
		memcpy(buf, &rh, 16);
		if (write(w.fd, buf, 16 + sizeof(rec)) != (ssize_t)(16 + sizeof(rec)))
			abort();
		w.committed += 16 + sizeof(rec);
		nsf_writer_close(&w);
		free(buf);
	}
	lseek(fd, 0, SEEK_SET);
	tap_ok(TAP_IS(!nsf_reader_open(&rd, fd, "t")) &&
	       TAP_IS(rd.have_calib) &&
	       TAP_IS(rd.calib.cpu[0].cost[NSL_C_NSO].ticks == 77),
	       "file: a CALIB with 8 costs of 6 counts reads by its own sizes (%s)",
	       rd.err);
	nsf_reader_close(&rd);
	close(fd);
	file_cold();
}

/*
 * The writer's CALIB for every CPU count it takes reads back: 3000 CPUs'
 * entries are past NSF_MAX_RECORD (2978 the most within), 65536 is the
 * most either side takes.
 */
static void calib_sizes(void)
{
	static const struct {
		uint32_t ncpus;
		bool written;
	} rows[] = {
		{ 2, true }, { 2978, true }, { 3000, true }, { 65536, true },
		{ 65537, false },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t n = rows[i].ncpus;
		int fd = memfd_create("nstest", 0), wret;
		struct ns_calib_set cs;
		struct nsf_reader rd;
		struct nsf_writer w;
		struct nsl_info info;
		struct nsl_calib want;
		bool read_back;

		calib_set(&cs, n, 2);
		gen_info(&info);
		nsf_writer_open(&w, dup(fd), "t", &info);
		wret = nsf_write_calib(&w, &cs);
		nsf_writer_close(&w);
		ns_calib_free(&cs);
		if (!rows[i].written) {
			tap_ok(TAP_IS(wret) && TAP_IS(w.err == EOVERFLOW),
			       "file: CALIB of %u CPUs refused by the writer", n);
			close(fd);
			continue;
		}
		lseek(fd, 0, SEEK_SET);
		gen_calib(n - 1, 2, &want);
		read_back = !nsf_reader_open(&rd, fd, "t") && rd.have_calib &&
			    ns_calib_count(&rd.calib) == n &&
			    !memcmp(&rd.calib.cpu[n - 1], &want, sizeof(want));
		tap_ok(TAP_IS(!wret) && TAP_IS(read_back),
		       "file: CALIB of %u CPUs written and read back (%s)",
		       n, rd.err);
		nsf_reader_close(&rd);
		close(fd);
	}
}

static void calibrate_output(void)
{
	static const char *const names[] = { "cycles", "instructions" };
	struct ns_calib_set cs;
	char *text = NULL;
	size_t size;
	FILE *f;

	calib_set(&cs, 2, 2);
	f = open_memstream(&text, &size);
	ns_calib_print(f, &cs, names, 2);
	fclose(f);
	tap_ok(!strcmp(text,
		"# NetSlice macro costs (Table 2) on Synthetic CPU @ 3.00GHz, tsc_khz 3000000 (1 tick = 0.333 ns)\n"
		"# medians over the samples kept per CPU; CV = stddev / mean\n"
		"# warm: samples back to back, code and data cached (--cold for the other bound)\n"
		"# 2 CPUs measured, all within their CV of CPU 0: one set shown\n"
		"macro symbol             ns    ticks     min ns    CV %  samples         cycles   instructions  what\n"
		"NSI   tau_alpha        30.0       90       29.0    0.40     1000              0              1  NET_SLICE_INIT\n"
		"NSS   -                15.0       45       14.0    0.40     1000             10             11  NET_SLICE_START\n"
		"NST   -                15.0       45       14.0    0.40     1000             20             21  NET_SLICE_STOP\n"
		"NSE   tau_gamma       100.0      300       99.0    0.40     1000             30             31  NET_SLICE_EXIT\n"
		"NSO   tau_o            10.0       30        9.0    0.40     1000              2              3  empty START..STOP as recorded\n"
		"NSA   tau_beta         20.0       60       19.0    0.40     1000              5              6  a START/STOP pair, seen around it\n"),
	       "calibrate: Table 2 rows, one set when the CPUs agree");
	if (tap_failed)
		printf("%s", text);
	free(text);
	cs.cold = true;
	f = open_memstream(&text, &size);
	ns_calib_print(f, &cs, names, 2);
	fclose(f);
	tap_ok(strstr(text, "\n# cold: each sample after a TLB flush") != NULL,
	       "calibrate: a cold set says it is cold");
	tap_ok(strstr(text, "# warm") == NULL,
	       "calibrate: a cold set does not say warm");
	free(text);
	cs.cold = false;

	/* CPU 1's NSE 1 % off: within 0.4 % CV? no: one set per CPU */
	cs.cpu[1].cost[NSL_C_NSE].ticks = 303;
	f = open_memstream(&text, &size);
	ns_calib_print(f, &cs, NULL, 0);
	fclose(f);
	tap_ok(TAP_IS(strstr(text, "# 2 CPUs measured; they differ by more than their CV: one set per CPU\ncpu 0\n")) &&
	       TAP_IS(strstr(text, "\ncpu 1\n")) &&
	       TAP_IS(strstr(text, "\nNSE   tau_gamma       101.0      303 ")),
	       "calibrate: CPUs differing beyond the CV get a set each");
	free(text);

	/* tau_beta 1.6 % off with a CV of 2 %: one set */
	cs.cpu[1].cost[NSL_C_NSE].ticks = 300;
	cs.cpu[1].cost[NSL_C_NSA].cv_ppm = 20000;
	cs.cpu[1].cost[NSL_C_NSA].ticks = 61;
	f = open_memstream(&text, &size);
	ns_calib_print(f, &cs, NULL, 0);
	fclose(f);
	tap_ok(strstr(text, "one set shown") != NULL,
	       "calibrate: a difference within the CV is one set");
	free(text);

	char sum[128];

	ns_calib_summary(&cs, sum, sizeof(sum));
	tap_ok(!strcmp(sum, "tau_o=10.0ns, tau_beta=20.0..20.3ns"),
	       "calibrate: summary gives ranges when CPUs differ: '%s'", sum);
	ns_calib_free(&cs);
}

static void rtt_block(struct nsl_block *b, uint64_t tsc0, uint64_t conn,
		      bool retrans)
{
	static const struct r one[] = { { 0, 1, 0, 0, 0, 100 } };

	make_block(b, 0, one, 1);
	b->tsc0 = tsc0;
	b->conn = conn;
	b->flags = retrans ? NSL_BF_RETRANS : 0;
}

/* overhead per block here: NSI 90 + NSE 300 + one pair 60 = 450 */
static void rtt(void)
{
	static const struct {
		const char *row;
		unsigned int n;
		struct { uint64_t tsc0, conn; bool retrans; } b[8];
		uint64_t loss_tsc;	/* 0: none */
		unsigned int samples;
		double raw_mean, cor_mean;
		uint64_t dropped, clamped;
	} rows[] = {
		{ "ping-pong A B A B A: 3000, 3000, 3100 raw, 900 each off", 5,
		  { { 0, 'A' }, { 1000, 'B' }, { 3000, 'A' }, { 4100, 'B' }, { 6000, 'A' } },
		  0, 3, 9100.0 / 3, 6400.0 / 3, 0, 0 },
		{ "a loss at 3500 drops the two samples around it", 5,
		  { { 0, 'A' }, { 1000, 'B' }, { 3000, 'A' }, { 4100, 'B' }, { 6000, 'A' } },
		  3500, 1, 3000, 2100, 2, 0 },
		{ "two-skb message and a retransmission: 3200-1800, 4000-1350", 6,
		  { { 0, 'A' }, { 100, 'A' }, { 1000, 'B' }, { 3000, 'A', true },
		    { 3200, 'A' }, { 5000, 'B' } },
		  0, 2, 3600, 2025, 0, 0 },
		{ "shorter than the macros: clamped", 3,
		  { { 0, 'A' }, { 10, 'B' }, { 20, 'A' } }, 0, 1, 20, 0, 0, 1 },
		{ "one sender only: no samples", 3,
		  { { 0, 'A' }, { 10, 'A' }, { 20, 'A' } }, 0, 0, 0, 0, 0, 0 },
	};
	struct ns_calib_set cs;

	calib_set(&cs, 2, 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ns_rtt t;
		struct nsl_block b;

		ns_rtt_init(&t);
		/* fed out of order, as per-CPU rings deliver them */
		for (unsigned int j = rows[i].n; j-- > 0; ) {
			rtt_block(&b, rows[i].b[j].tsc0, rows[i].b[j].conn,
				  rows[i].b[j].retrans);
			ns_rtt_block(&t, &b, ns_block_overhead(&cs, &b));
		}
		if (rows[i].loss_tsc) {
			struct nsl_loss l = { .lost = 1, .tsc = rows[i].loss_tsc };

			ns_rtt_loss(&t, &l);
		}
		ns_rtt_finish(&t);
		tap_ok(TAP_IS(t.raw.n == rows[i].samples) &&
		       TAP_IS(t.corrected.n == rows[i].samples) &&
		       TAP_IS((!t.raw.n || (fabs(t.raw.mean - rows[i].raw_mean) < 1e-9 &&
					    fabs(t.corrected.mean - rows[i].cor_mean) < 1e-9))) &&
		       TAP_IS(t.spanning_loss == rows[i].dropped) &&
		       TAP_IS(t.clamped == rows[i].clamped),
		       "rtt: %s (n %llu raw %.1f corrected %.1f)", rows[i].row,
		       (unsigned long long)t.raw.n, t.raw.mean, t.corrected.mean);
		ns_rtt_free(&t);
	}

	/* The cold set, every cost doubled: 900 per block, 1800 a trip. */
	struct ns_calib_set cold;
	struct ns_rtt t;

	calib_set(&cold, 2, 0);
	for (unsigned int cpu = 0; cpu < 2; cpu++)
		for (int m = 0; m < NSL_C_MAX; m++)
			cold.cpu[cpu].cost[m].ticks *= 2;
	ns_rtt_init(&t);
	t.cold = &cold;
	for (unsigned int j = 0; j < rows[0].n; j++) {
		struct nsl_block b;

		rtt_block(&b, rows[0].b[j].tsc0, rows[0].b[j].conn, false);
		ns_rtt_block(&t, &b, ns_block_overhead(&cs, &b));
	}
	ns_rtt_finish(&t);
	tap_ok(t.corrected_cold.n == 3, "rtt cold: 3 samples (%llu)",
	       (unsigned long long)t.corrected_cold.n);
	tap_ok(fabs(t.corrected_cold.mean - 3700.0 / 3) < 1e-9,
	       "rtt cold: each trip less twice the warm cost (mean %.1f, want %.1f)",
	       t.corrected_cold.mean, 3700.0 / 3);
	tap_ok(fabs(t.corrected.mean - 6400.0 / 3) < 1e-9,
	       "rtt cold: the warm correction unchanged (mean %.1f)", t.corrected.mean);
	ns_rtt_free(&t);
	ns_calib_free(&cold);
	ns_calib_free(&cs);
}

void test_calib(void)
{
	formulas();
	report();
	file_records();
	calib_sizes();
	calibrate_output();
	rtt();
}
