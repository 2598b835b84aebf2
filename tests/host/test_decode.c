// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "decode.h"
#include "gen.h"
#include "tap.h"
#include "tests.h"

static const struct gen_opts six = { .n = 1 };	/* block 0: 6 records */
#define GOOD_SIZE	NSL_BLOCK_SIZE(6)

typedef size_t (*mutate_fn)(unsigned char *buf);	/* returns len */

static size_t good(unsigned char *b) { return gen_block(&six, 0, b); }

static void set_size(unsigned char *b, uint16_t size)
{
	memcpy(b + offsetof(struct nsl_item_hdr, size), &size, 2);
}

static size_t nrec_17(unsigned char *b)
{
	good(b);
	b[offsetof(struct nsl_block, nrec)] = 17;
	return sizeof(struct nsl_block);
}

static size_t size_mismatch(unsigned char *b)
{
	good(b);
	set_size(b, GOOD_SIZE + 56);
	return sizeof(struct nsl_block);
}

static size_t size_odd(unsigned char *b) { good(b); set_size(b, GOOD_SIZE - 4); return GOOD_SIZE; }
static size_t size_zero(unsigned char *b) { good(b); set_size(b, 0); return GOOD_SIZE; }
static size_t size_past_end(unsigned char *b) { good(b); set_size(b, GOOD_SIZE + 8); return GOOD_SIZE; }
static size_t truncated(unsigned char *b) { good(b); return GOOD_SIZE - 8; }
static size_t short_header(unsigned char *b) { good(b); return 4; }
static size_t block_short(unsigned char *b) { good(b); set_size(b, 56); return GOOD_SIZE; }

static size_t nevents_5(unsigned char *b)
{
	good(b);
	b[offsetof(struct nsl_block, nevents)] = 5;
	return GOOD_SIZE;
}

static size_t region_max(unsigned char *b)
{
	good(b);
	b[offsetof(struct nsl_block, rec[3].region)] = NSL_R_MAX;
	return GOOD_SIZE;
}

static size_t region_none(unsigned char *b)
{
	good(b);
	b[offsetof(struct nsl_block, rec[5].region)] = NSL_R_NONE;
	return GOOD_SIZE;
}

static size_t unknown_kind(unsigned char *b)
{
	struct nsl_item_hdr h = { .kind = 99, .size = 24, .cpu = 3 };

	memset(b, 0xAB, 64);
	memcpy(b, &h, sizeof(h));
	return 64;	/* more data follows: only 24 are taken */
}

static size_t loss(unsigned char *b) { return gen_loss(7, b); }

static size_t loss_big(unsigned char *b)
{
	gen_loss(7, b);
	set_size(b, 40);
	return 40;
}

static size_t zero_records(unsigned char *b)
{
	good(b);
	b[offsetof(struct nsl_block, nrec)] = 0;
	set_size(b, NSL_BLOCK_SIZE(0));
	return NSL_BLOCK_SIZE(0);
}

#define EV_SIZE		sizeof(struct nsl_event_rec)
#define SI_SIZE		sizeof(struct nsl_sysinfo)

static size_t event(unsigned char *b)
{
	return gen_event(1, 7, GEN_T0, NSL_EV_SOCK_SEND, 10240,
			 NSL_EVF_TCP | NSL_EVF_IP | NSL_EVF_ADDR, b);
}

static size_t event_bare(unsigned char *b)
{
	return gen_event(0, 0, GEN_T0, NSL_EV_SOCK_RECV, 0, 0, b);
}

static size_t event_tso(unsigned char *b)
{
	return gen_event(0, 0, GEN_T0, NSL_EV_TCP_SEND, 10240,
			 NSL_EVF_TSO | NSL_EVF_TCP, b);
}

static size_t event_type(unsigned char *b, uint32_t type)
{
	event(b);
	memcpy(b + offsetof(struct nsl_event_rec, type), &type, 4);
	return EV_SIZE;
}

static size_t event_type_0(unsigned char *b) { return event_type(b, 0); }
static size_t event_type_max(unsigned char *b) { return event_type(b, NSL_EV_MAX); }

static size_t event_flags_16(unsigned char *b)
{
	uint32_t flags = NSL_EVF_TCP | 0x10;

	event(b);
	memcpy(b + offsetof(struct nsl_event_rec, flags), &flags, 4);
	return EV_SIZE;
}

static size_t event_short(unsigned char *b) { event(b); set_size(b, EV_SIZE - 8); return EV_SIZE - 8; }
static size_t event_long(unsigned char *b) { event(b); set_size(b, EV_SIZE + 8); return EV_SIZE + 8; }
static size_t event_cut(unsigned char *b) { event(b); return EV_SIZE - 8; }
static size_t sysinfo(unsigned char *b) { return gen_sysinfo(b); }
static size_t sysinfo_long(unsigned char *b) { sysinfo(b); set_size(b, SI_SIZE + 8); return SI_SIZE + 8; }

static size_t sysinfo_swapped(unsigned char *b)
{
	uint32_t bom = 0x04030201;

	sysinfo(b);
	memcpy(b + offsetof(struct nsl_sysinfo, byte_order), &bom, 4);
	return SI_SIZE;
}

static size_t sysinfo_zero_bom(unsigned char *b)
{
	uint32_t bom = 0;

	sysinfo(b);
	memcpy(b + offsetof(struct nsl_sysinfo, byte_order), &bom, 4);
	return SI_SIZE;
}

static const struct {
	const char *name;
	mutate_fn build;
	enum ns_decode_error err;
	enum ns_item_type type;
	size_t size;		/* bytes taken (OK) */
	uint64_t bad;		/* it.bad (error) */
} rows[] = {
	{ "good block",		good,		NS_DEC_OK, NS_ITEM_BLOCK, GOOD_SIZE, 0 },
	{ "block, 0 records",	zero_records,	NS_DEC_OK, NS_ITEM_BLOCK, NSL_BLOCK_SIZE(0), 0 },
	{ "nrec 17",		nrec_17,	NS_DEC_NREC, 0, 0, 17 },
	{ "size != BLOCK_SIZE(nrec)", size_mismatch, NS_DEC_BLOCK_SIZE, 0, 0, GOOD_SIZE + 56 },
	{ "size not multiple of 8", size_odd,	NS_DEC_BAD_SIZE, 0, 0, GOOD_SIZE - 4 },
	{ "size 0",		size_zero,	NS_DEC_BAD_SIZE, 0, 0, 0 },
	{ "size past the end",	size_past_end,	NS_DEC_TRUNCATED, 0, 0, GOOD_SIZE + 8 },
	{ "truncated buffer",	truncated,	NS_DEC_TRUNCATED, 0, 0, GOOD_SIZE },
	{ "short header",	short_header,	NS_DEC_SHORT_HEADER, 0, 0, 4 },
	{ "block below fixed part", block_short, NS_DEC_BLOCK_SHORT, 0, 0, 56 },
	{ "nevents 5",		nevents_5,	NS_DEC_NEVENTS, 0, 0, 5 },
	{ "region NSL_R_MAX",	region_max,	NS_DEC_REGION, 0, 0, 3 },
	{ "region NONE",	region_none,	NS_DEC_REGION, 0, 0, 5 },
	{ "unknown kind skipped", unknown_kind,	NS_DEC_OK, NS_ITEM_SKIPPED, 24, 0 },
	{ "loss item",		loss,		NS_DEC_OK, NS_ITEM_LOSS, 32, 0 },
	{ "loss item of 40 bytes", loss_big,	NS_DEC_LOSS_SIZE, 0, 0, 40 },
	{ "event, TCP+IP+ADDR",	event,		NS_DEC_OK, NS_ITEM_EVENT, EV_SIZE, 0 },
	{ "event, no optional data", event_bare, NS_DEC_OK, NS_ITEM_EVENT, EV_SIZE, 0 },
	{ "event, TSO super-segment", event_tso, NS_DEC_OK, NS_ITEM_EVENT, EV_SIZE, 0 },
	{ "event type 0",	event_type_0,	NS_DEC_EVENT_TYPE, 0, 0, 0 },
	{ "event type NSL_EV_MAX", event_type_max, NS_DEC_EVENT_TYPE, 0, 0, NSL_EV_MAX },
	{ "event unknown flag 0x10", event_flags_16, NS_DEC_EVENT_FLAGS, 0, 0, 0x11 },
	{ "event 8 bytes short", event_short,	NS_DEC_EVENT_SIZE, 0, 0, EV_SIZE - 8 },
	{ "event 8 bytes long",	event_long,	NS_DEC_EVENT_SIZE, 0, 0, EV_SIZE + 8 },
	{ "event cut by the buffer", event_cut,	NS_DEC_TRUNCATED, 0, 0, EV_SIZE },
	{ "sysinfo",		sysinfo,	NS_DEC_OK, NS_ITEM_SYSINFO, SI_SIZE, 0 },
	{ "sysinfo 8 bytes long", sysinfo_long,	NS_DEC_SYSINFO_SIZE, 0, 0, SI_SIZE + 8 },
	{ "sysinfo other byte order", sysinfo_swapped, NS_DEC_SYSINFO_BOM, 0, 0, 0x04030201 },
	{ "sysinfo byte-order mark 0", sysinfo_zero_bom, NS_DEC_SYSINFO_BOM, 0, 0, 0 },
};

static void table(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned char *buf = calloc(1, 2048);
		size_t len = rows[i].build(buf);
		/* exact-size copy: ASan catches any read past @len */
		unsigned char *exact = malloc(len ? len : 1);
		struct ns_item it;
		enum ns_decode_error err;
		bool ok;

		memcpy(exact, buf, len);
		err = ns_decode_item(exact, len, &it);
		ok = err == rows[i].err;
		if (ok && err == NS_DEC_OK)
			ok = it.type == rows[i].type && it.hdr.size == rows[i].size;
		else if (ok)
			ok = it.bad == rows[i].bad;
		if (!ok)
			printf("# err %d type %d size %u bad %llu\n", err, it.type,
			       it.hdr.size, (unsigned long long)it.bad);
		tap_ok(ok, "decode: %s", rows[i].name);
		free(exact);
		free(buf);
	}
}

static void values(void)
{
	unsigned char buf[sizeof(struct nsl_block)];
	struct ns_item it;
	char msg[128];
	size_t len = gen_block(&six, 0, buf);

	ns_decode_item(buf, len, &it);
	tap_ok(it.block.nrec == 6 && it.block.rec[1].region == NSL_R_TCP &&
	       it.block.rec[1].ticks == 300 && it.block.rec[2].ticks == 120 &&
	       it.block.rec[0].ticks == 3000 && it.block.len == 1448 &&
	       it.block.rec[6].region == 0,
	       "decode: block fields read back, records past nrec zero");

	len = gen_loss(7, buf);
	ns_decode_item(buf, len, &it);
	tap_ok(it.loss.lost == GEN_LOST && it.loss.first_seq == 100007 &&
	       it.hdr.cpu == 1, "decode: loss fields read back");

	nrec_17(buf);
	ns_decode_describe(ns_decode_item(buf, sizeof(buf), &it), &it, msg,
			   sizeof(msg));
	tap_ok(!strcmp(msg, "block nrec 17 exceeds 16"), "decode: reason text '%s'",
	       msg);
	region_max(buf);
	ns_decode_describe(ns_decode_item(buf, GOOD_SIZE, &it), &it, msg,
			   sizeof(msg));
	tap_ok(!strcmp(msg, "block record 3 has region id 18 (valid 1..17)"),
	       "decode: reason text '%s'", msg);

	TAP_EQ(EV_SIZE, 120, "decode: struct nsl_event_rec is 120 bytes");
	TAP_EQ(SI_SIZE, 40, "decode: struct nsl_sysinfo is 40 bytes");
	len = event(buf);
	ns_decode_item(buf, len, &it);
	tap_ok(it.event.conn == GEN_CONN_A && it.event.bytes == 10240 &&
	       it.event.seq == 7 && it.hdr.cpu == 1 &&
	       it.event.tcp.snd_cwnd == 10 && it.event.tcp.sport == 43210 &&
	       it.event.ip.ttl == 64 && it.event.ip.id == 1234,
	       "decode: event fields read back");
	len = sysinfo(buf);
	ns_decode_item(buf, len, &it);
	tap_ok(it.sysinfo.tsc_khz == GEN_TSC_KHZ && it.sysinfo.ref_tsc == GEN_T0 &&
	       it.sysinfo.ref_realtime_ns == GEN_WALL0 && it.sysinfo.ncpus == 2,
	       "decode: sysinfo fields read back");
	event_flags_16(buf);
	ns_decode_describe(ns_decode_item(buf, EV_SIZE, &it), &it, msg,
			   sizeof(msg));
	tap_ok(!strcmp(msg, "event record flags 0x11, unknown bits 0x10"),
	       "decode: reason text '%s'", msg);
	event_type_max(buf);
	ns_decode_describe(ns_decode_item(buf, EV_SIZE, &it), &it, msg,
			   sizeof(msg));
	tap_ok(!strcmp(msg, "event record type 11 (valid 1..10)"),
	       "decode: reason text '%s'", msg);
	sysinfo_swapped(buf);
	ns_decode_describe(ns_decode_item(buf, SI_SIZE, &it), &it, msg,
			   sizeof(msg));
	tap_ok(!strcmp(msg, "sysinfo byte-order mark 0x04030201 (written in the other byte order)"),
	       "decode: reason text '%s'", msg);
	tap_ok(!strcmp(ns_event_type_name(NSL_EV_SOCK_SEND), "MAGNET_SOCK_SEND") &&
	       !strcmp(ns_event_type_name(NSL_EV_SOCK_RECV), "MAGNET_SOCK_RECV") &&
	       !ns_event_type_name(0) && !ns_event_type_name(NSL_EV_MAX),
	       "decode: event type names");
}

/* Every proper prefix of a block is an error; only the whole is OK. */
static void prefixes(void)
{
	unsigned char buf[sizeof(struct nsl_block)];
	size_t len = gen_block(&six, 0, buf);
	int wrong = 0;

	for (size_t cut = 0; cut <= len; cut++) {
		unsigned char *p = malloc(cut ? cut : 1);
		struct ns_item it;
		enum ns_decode_error err;

		memcpy(p, buf, cut);
		err = ns_decode_item(p, cut, &it);
		wrong += (cut == len) != (err == NS_DEC_OK);
		free(p);
	}
	TAP_EQ(wrong, 0, "decode: every prefix of a block is refused");

	len = event(buf);
	wrong = 0;
	for (size_t cut = 0; cut <= len; cut++) {
		unsigned char *p = malloc(cut ? cut : 1);
		struct ns_item it;

		memcpy(p, buf, cut);
		wrong += (cut == len) != (ns_decode_item(p, cut, &it) == NS_DEC_OK);
		free(p);
	}
	TAP_EQ(wrong, 0, "decode: every prefix of an event record is refused");
}

static void stream(void)
{
	struct gen_opts g = { .n = 40, .loss_every = 10, .open_every = 3,
			      .nevents = 2 };
	size_t len, pos = 0;
	unsigned char *p = gen_stream(&g, &len);
	unsigned int blocks = 0, losses = 0, bad = 0;

	while (pos < len) {
		struct ns_item it;

		if (ns_decode_item(p + pos, len - pos, &it)) {
			bad++;
			break;
		}
		blocks += it.type == NS_ITEM_BLOCK;
		losses += it.type == NS_ITEM_LOSS;
		pos += it.hdr.size;
	}
	tap_ok(!bad && blocks == 40 && losses == 4 && pos == len,
	       "decode: generated stream, 40 blocks and 4 loss items");
	free(p);
}

void test_decode(void)
{
	table();
	values();
	prefixes();
	stream();
}
