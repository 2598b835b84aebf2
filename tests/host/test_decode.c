// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "source/decode.h"
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
	uint32_t flags = NSL_EVF_TCP | 0x20;

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
	{ "event unknown flag 0x20", event_flags_16, NS_DEC_EVENT_FLAGS, 0, 0, 0x21 },
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
		/*
		 * Shallow: the same verdict, but that a compact block's body
		 * is not read (its reader checks it in the file).
		 */
		enum ns_decode_error serr = ns_decode_shallow(exact, len, &it);

		tap_ok(serr == err ||
		       (serr == NS_DEC_OK && len >= sizeof(it.hdr) &&
			((const struct nsl_item_hdr *)exact)->kind == NSL_ITEM_CBLOCK),
		       "decode shallow: %s (error %d, full %d)", rows[i].name, serr, err);
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
	tap_ok(TAP_IS(it.block.nrec == 6) &&
	       TAP_IS(it.block.rec[1].region == NSL_R_TCP) &&
	       TAP_IS(it.block.rec[1].ticks == 300) &&
	       TAP_IS(it.block.rec[2].ticks == 120) &&
	       TAP_IS(it.block.rec[0].ticks == 3000) &&
	       TAP_IS(it.block.len == 1448) &&
	       TAP_IS(it.block.rec[6].region == 0),
	       "decode: block fields read back, records past nrec zero");

	len = gen_loss(7, buf);
	ns_decode_item(buf, len, &it);
	tap_ok(TAP_IS(it.loss.lost == GEN_LOST) &&
	       TAP_IS(it.loss.first_seq == 100007) && TAP_IS(it.hdr.cpu == 1),
	       "decode: loss fields read back");

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

	TAP_EQ(EV_SIZE, 152, "decode: struct nsl_event_rec is 152 bytes");
	TAP_EQ(SI_SIZE, 40, "decode: struct nsl_sysinfo is 40 bytes");
	len = event(buf);
	ns_decode_item(buf, len, &it);
	tap_ok(TAP_IS(it.event.conn == GEN_CONN_A) &&
	       TAP_IS(it.event.bytes == 10240) && TAP_IS(it.event.seq == 7) &&
	       TAP_IS(it.hdr.cpu == 1) && TAP_IS(it.event.tcp.snd_cwnd == 10) &&
	       TAP_IS(it.event.tcp.sport == 43210) &&
	       TAP_IS(it.event.ip.ttl == 64) && TAP_IS(it.event.ip.id == 1234),
	       "decode: event fields read back");
	len = sysinfo(buf);
	ns_decode_item(buf, len, &it);
	tap_ok(TAP_IS(it.sysinfo.tsc_khz == GEN_TSC_KHZ) &&
	       TAP_IS(it.sysinfo.ref_tsc == GEN_T0) &&
	       TAP_IS(it.sysinfo.ref_realtime_ns == GEN_WALL0) &&
	       TAP_IS(it.sysinfo.ncpus == 2),
	       "decode: sysinfo fields read back");
	event_flags_16(buf);
	ns_decode_describe(ns_decode_item(buf, EV_SIZE, &it), &it, msg,
			   sizeof(msg));
	tap_ok(!strcmp(msg, "event record flags 0x21, unknown bits 0x20"),
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
	tap_ok(TAP_IS(!strcmp(ns_event_type_name(NSL_EV_SOCK_SEND), "MAGNET_SOCK_SEND")) &&
	       TAP_IS(!strcmp(ns_event_type_name(NSL_EV_SOCK_RECV), "MAGNET_SOCK_RECV")) &&
	       TAP_IS(!ns_event_type_name(0)) &&
	       TAP_IS(!ns_event_type_name(NSL_EV_MAX)),
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
	tap_ok(TAP_IS(!bad) && TAP_IS(blocks == 40) && TAP_IS(losses == 4) &&
	       TAP_IS(pos == len),
	       "decode: generated stream, 40 blocks and 4 loss items");
	free(p);
}

/* A start or ticks of 2^32 or more, or just below. */
static uint64_t random_high(void)
{
	switch (rand() % 4) {
	case 0:
		return (uint64_t)1 << 32;
	case 1:
		return 0xffffffffu;
	case 2:
		return (uint64_t)rand() << 33 ^ (uint64_t)rand() << 2 ^ rand();
	default:
		return (uint64_t)rand() << 20 | rand();
	}
}

/* A block with every field set, records of every kind @seed chooses. */
static void random_block(struct nsl_block *b, unsigned int seed)
{
	unsigned int i, j;

	srand(seed);
	memset(b, 0, sizeof(*b));
	b->hdr.kind = NSL_ITEM_BLOCK;
	b->hdr.cpu = rand() % 16 ? (uint32_t)rand() % 64 :
				   (uint32_t)rand() << 1;
	b->seq = (uint64_t)rand() << 31 | rand();
	b->tsc0 = (uint64_t)rand() << 33 | rand();
	b->conn = (uint64_t)rand() << 32 | rand();
	b->flags = rand() & 0x7ff;
	b->len = rand();
	b->ifindex = rand() % 1000;
	b->gso_segs = rand() % 64 + 1;
	b->proto = rand() % 2 ? 6 : 17;
	b->nhlen = rand() % 2 ? 20 : 40 + rand() % 600;
	b->thlen = rand() % 61;
	b->dir = rand() % 2;
	b->nrec = rand() % (NSL_MAX_RECORDS + 1);
	b->nevents = rand() % (NSL_MAX_EVENTS + 1);
	b->mode = b->nevents ? NSL_MODE_COUNT : NSL_MODE_DURATION;
	b->tcp_seq = rand();
	b->family = rand() % 3 ? 10 : 2;
	b->sport = rand();
	b->dport = rand();
	if (rand() % 2)
		for (i = 0; i < 16; i++) {
			b->saddr[i] = rand();
			b->daddr[i] = rand();
		}
	for (i = 0; i < b->nrec; i++) {
		struct nsl_record *r = &b->rec[i];

		r->region = rand() % (NSL_R_MAX - 1) + 1;
		r->depth = rand() % 8 ? rand() % 8 : rand() % 256;
		r->flags = rand() & 0x3f;
		r->nmerged = rand() % 4 ? 1 + rand() % 16 : rand() % 70000;
		r->cpu = rand() % 4 ? b->rec[0].cpu :
			 rand() % 8 ? rand() % 64 : 0xffff - rand() % 2;
		r->start = rand() % 4 ? (uint64_t)rand() : random_high();
		r->ticks = rand() % 4 ? (uint64_t)rand() % 100000 :
			   random_high();
		for (j = 0; j < b->nevents; j++)
			r->count[j] = (uint64_t)rand() << (rand() % 33);
	}
	/*
	 * Often a record started where the block was delivered; now and
	 * then the ring's CPU is one that takes more than 16 bits, the
	 * records' CPU in its low ones.
	 */
	if (b->nrec && rand() % 2)
		b->hdr.cpu = b->rec[rand() % b->nrec].cpu;
	else if (b->nrec && rand() % 8 == 0)
		b->hdr.cpu = 0x10000 | b->rec[0].cpu;
	/* 0 to NSL_MAX_DEVS devices, any fields the ABI allows */
	b->ndev = rand() % (NSL_MAX_DEVS + 1);
	for (i = 0; i < b->ndev; i++) {
		b->dev[i].ifindex = rand() % 3 ? (uint32_t)rand() % 64 :
						 (uint32_t)rand() << 1;
		b->dev[i].netns = rand() % 3 ? 4026531840u + rand() % 1000 :
			(uint32_t)rand() << 1;
		b->dev[i].first = rand() % (NSL_MAX_RECORDS + 1);
		b->dev[i].dir = rand() % 2;
	}
}

/*
 * rcpu by its definition: the CPU most records not on the ring's started
 * on, the first of equals (the encoder's one-pass shortcut must agree);
 * the ring's CPU, in the 16 bits rcpu has, if there are none.
 * *@others: how many CPUs besides the ring's the records started on.
 */
static unsigned int rcpu_of(const struct nsl_block *b, unsigned int *others)
{
	unsigned int hcpu = b->hdr.cpu, rcpu = (uint16_t)hcpu, i, j, k;
	unsigned int most = 0;

	*others = 0;
	for (i = 0; i < b->nrec; i++) {
		if (b->rec[i].cpu == hcpu)
			continue;
		for (k = 0, j = 0; j < b->nrec; j++)
			k += b->rec[j].cpu == b->rec[i].cpu;
		for (j = 0; j < i && b->rec[j].cpu != b->rec[i].cpu; j++)
			;
		*others += j == i;
		if (k > most) {
			most = k;
			rcpu = b->rec[i].cpu;
		}
	}
	return rcpu;
}

/* How many of @b's records need their extension, by the header's rules. */
static unsigned int extended(const struct nsl_block *b, unsigned int rcpu)
{
	unsigned int hcpu = b->hdr.cpu, i, n = 0;

	for (i = 0; i < b->nrec; i++)
		n += b->rec[i].nmerged < 1 || b->rec[i].nmerged > 16 ||
		     b->rec[i].depth > 15 ||
		     (b->rec[i].cpu != rcpu && b->rec[i].cpu != hcpu) ||
		     b->rec[i].start >> 32 || b->rec[i].ticks >> 32;
	return n;
}

/* Bytes the compact form must take, counted from the header's rules. */
static size_t compact_size(const struct nsl_block *b)
{
	size_t n = sizeof(struct nsl_cblock), i;
	unsigned int others, rcpu = rcpu_of(b, &others);
	int addr = 0;

	for (i = 0; i < 16; i++)
		addr |= b->saddr[i] | b->daddr[i];
	n += addr ? 32 : 0;
	n += 12 * b->ndev;
	n += (12 + 8 * b->nevents) * b->nrec + 12 * extended(b, rcpu);
	return (n + 7) / 8 * 8;
}

/* Whether any of @b's records started on the ring's CPU, not on @rcpu. */
static bool hcpu_records(const struct nsl_block *b, unsigned int rcpu)
{
	unsigned int i;

	for (i = 0; i < b->nrec; i++)
		if (b->rec[i].cpu == b->hdr.cpu && b->rec[i].cpu != rcpu)
			return true;
	return false;
}

/*
 * NSL_ITEM_CBLOCK: every field of a block survives encode then decode,
 * the size is the one the header's rules give, and a malformed compact
 * block is refused with the reason.
 */
/*
 * Makes @b a block as nearly every one is, its records all compact
 * without an extension (the encoder's short way): duration mode, depth
 * and nmerged - 1 below 16, start and ticks below 2^32, the records on
 * the ring's CPU and at most one other.  In one block of three a record
 * at random is then given what takes it off that way.
 */
static void common_block(struct nsl_block *b)
{
	unsigned int i, other = rand() % 8 ? rand() % 64 : 0xffff;
	struct nsl_record *r;

	b->nevents = 0;
	b->mode = NSL_MODE_DURATION;
	for (i = 0; i < b->nrec; i++) {
		r = &b->rec[i];
		r->depth %= 16;
		r->nmerged = 1 + r->nmerged % 16;
		r->cpu = rand() % 2 ? (uint16_t)b->hdr.cpu : other;
		r->start = (uint32_t)r->start;
		r->ticks = (uint32_t)r->ticks;
		memset(r->count, 0, sizeof(r->count));
	}
	if (!b->nrec || rand() % 3)
		return;
	r = &b->rec[rand() % b->nrec];
	switch (rand() % 5) {
	case 0:
		r->depth = 16 + rand() % 240;
		break;
	case 1:
		r->nmerged = rand() % 2 ? 0 : 17 + rand() % 65519;
		break;
	case 2:
		r->start |= (uint64_t)1 << 32;
		break;
	case 3:
		r->ticks |= (uint64_t)(rand() + 1) << 32;
		break;
	default:
		r->cpu = other + 1;	/* a third CPU, mostly */
	}
}

/* What ns_decode_shallow() promises of @it: @b's fixed fields, raw kept. */
static bool shallow_matches(const struct ns_item *it, const struct nsl_block *b,
			    const void *buf, size_t n)
{
	const struct nsl_block *s = &it->block;

	return it->type == NS_ITEM_BLOCK && it->shallow && it->raw == buf &&
	       it->hdr.size == n && s->hdr.cpu == b->hdr.cpu &&
	       s->seq == b->seq && s->tsc0 == b->tsc0 && s->conn == b->conn &&
	       s->flags == b->flags && s->len == b->len &&
	       s->ifindex == b->ifindex && s->tcp_seq == b->tcp_seq &&
	       s->gso_segs == b->gso_segs && s->nhlen == b->nhlen &&
	       s->sport == b->sport && s->dport == b->dport &&
	       s->proto == b->proto && s->thlen == b->thlen &&
	       s->family == b->family && s->nrec == b->nrec &&
	       s->nevents == b->nevents && s->ndev == b->ndev &&
	       s->dir == b->dir && s->mode == b->mode;
}

static void compact(void)
{
	uint64_t buf[NSL_CBLOCK_MAX / 8 + 1], again[NSL_CBLOCK_MAX / 8 + 1];
	unsigned char *c = (unsigned char *)buf;
	unsigned int i, bad_rt = 0, bad_size = 0, ext = 0, compacts = 0;
	unsigned int hcpu = 0, devs = 0, k, others, bad_rcpu = 0, spread = 0;
	unsigned int rcpu, bad_shallow = 0, bad_again = 0, past = 0;
	unsigned int unext = 0, unext2 = 0;
	struct nsl_block b;
	struct ns_item it;
	size_t n;

	for (i = 0; i < 5000; i++) {
		random_block(&b, i + 1);
		if (i % 2)
			common_block(&b);
		compacts += ns_block_compacts(&b);
		devs += b.ndev;
		memset(buf, 0xa5, sizeof(buf));
		n = nsl_cblock_encode(&b, buf);
		for (k = NSL_CBLOCK_MAX; k < sizeof(buf); k++)
			past += c[k] != 0xa5;
		bad_size += n != compact_size(&b);
		rcpu = nsl_cblock_rcpu(&b, b.hdr.cpu);
		bad_rcpu += rcpu != rcpu_of(&b, &others);
		spread += others > 1;
		for (k = 0; k < b.nrec; k++)	/* records on the ring's CPU */
			hcpu += b.rec[k].cpu == b.hdr.cpu && b.rec[k].cpu != rcpu;
		ext += extended(&b, rcpu) != 0;
		if (!b.nevents && !extended(&b, rcpu)) {
			unext++;
			unext2 += others == 1 && hcpu_records(&b, rcpu);
		}
		if (ns_decode_item(buf, n, &it) || it.type != NS_ITEM_BLOCK ||
		    it.hdr.kind != NSL_ITEM_CBLOCK || it.hdr.size != n ||
		    it.block.hdr.cpu != b.hdr.cpu ||
		    memcmp(&it.block.seq, &b.seq,
			   sizeof(b) - offsetof(struct nsl_block, seq)))
			bad_rt++;
		else
			bad_again += nsl_cblock_encode(&it.block, again) != n ||
				     memcmp(again, buf, n);
		if (ns_decode_shallow(buf, n, &it) ||
		    !shallow_matches(&it, &b, buf, n))
			bad_shallow++;
	}
	TAP_EQ(compacts, 5000, "compact: 5000 random blocks are all representable");
	TAP_EQ(bad_size, 0, "compact: size as the rules say (header, addresses, 12 B records, extensions, counters)");
	TAP_EQ(bad_rt, 0, "compact: 5000 random blocks (%u with extended records, %u records on the ring's CPU, %u devices) decode to every field they had",
	       ext, hcpu, devs);
	TAP_EQ(bad_again, 0, "compact: each of the 5000 decoded encodes to the same bytes");
	TAP_EQ(past, 0, "compact: the encoder writes nothing past NSL_CBLOCK_MAX bytes");
	tap_ok(unext > 1000 && unext2 > 300, "compact: %u of the blocks in duration mode have no record extended, %u of those on the ring's CPU and another",
	       unext, unext2);
	TAP_EQ(bad_shallow, 0, "compact: shallow decoding of the 5000 gives each one's header fields and keeps its bytes");
	TAP_EQ(bad_rcpu, 0, "compact: rcpu as defined, by the one-pass shortcut or the count (%u blocks on 2+ CPUs besides the ring's)",
	       spread);
	tap_ok(spread > 500, "compact: the random blocks take both ways to rcpu (%u of 5000 need the count)", spread);
	tap_ok(devs > 10000, "compact: the random blocks name devices (%u)", devs);
	tap_ok(hcpu > 1000, "compact: the random blocks have records on the ring's CPU");

	/* a 7-record send block in duration mode, no addresses: 152 bytes */
	random_block(&b, 1);
	b.ndev = 0;
	memset(b.saddr, 0, 16);
	memset(b.daddr, 0, 16);
	b.nrec = 7;
	b.nevents = 0;
	b.mode = NSL_MODE_DURATION;
	for (i = 0; i < 7; i++) {
		b.rec[i].nmerged = 1;
		b.rec[i].depth = i ? 1 : 0;
		b.rec[i].cpu = 3;
		b.rec[i].start = i * 1000;
		b.rec[i].ticks = 5000;
	}
	b.rec[1].nmerged = 2;	/* tcp: the copy and the header build */
	b.hdr.cpu = 0;
	b.rec[0].cpu = 1;	/* rcpu is the CPU most records have */
	TAP_EQ(nsl_cblock_encode(&b, buf), 160, "compact: a 7-record send block with one record on a third CPU: 160 bytes (struct nsl_block: %u)",
	       (unsigned int)NSL_BLOCK_SIZE(7));
	b.hdr.cpu = 1;		/* ... on the CPU whose ring carries it */
	n = nsl_cblock_encode(&b, buf);
	TAP_EQ(n, 152, "compact: a 7-record send block with one record on the ring's CPU: 152 bytes");
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_OK, "compact: ... decodes");
	TAP_EQ(it.block.rec[0].cpu, 1, "compact: ... its first record on the ring's CPU 1");
	TAP_EQ(it.block.rec[0].flags, b.rec[0].flags, "compact: ... with its own flags, not NSL_RF_HCPU");
	TAP_EQ(it.block.rec[1].cpu, 3, "compact: ... the others on rcpu 3");
	b.hdr.cpu = 0;
	b.rec[0].cpu = 3;
	TAP_EQ(nsl_cblock_encode(&b, buf), 152, "compact: a 7-record send block, tcp merged twice, all on one CPU: 152 bytes");
	for (i = 0; i < 7; i++)
		b.rec[i].cpu = 0;
	TAP_EQ(nsl_cblock_encode(&b, buf), 152, "compact: ... all on the ring's CPU: 152 bytes");

	/* what cannot be represented is written as a whole block */
	b.pad = 1;
	tap_ok(!ns_block_compacts(&b), "compact: non-zero padding keeps the block whole");
	b.pad = 0;
	b.rec[2].count[1] = 5;
	tap_ok(!ns_block_compacts(&b), "compact: a count past nevents keeps the block whole");
	b.rec[2].count[1] = 0;
	b.proto = 300;
	tap_ok(!ns_block_compacts(&b), "compact: proto 300 keeps the block whole");
	b.proto = 6;
	b.dev[NSL_MAX_DEVS - 1].netns = 1;	/* ndev 0 */
	tap_ok(!ns_block_compacts(&b), "compact: a device past ndev keeps the block whole");
	b.dev[NSL_MAX_DEVS - 1].netns = 0;

	n = nsl_cblock_encode(&b, buf);
	c[offsetof(struct nsl_cblock, cflags)] |= 0x80;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CBLOCK_FLAGS, "compact: unknown cflags refused");
	n = nsl_cblock_encode(&b, buf);
	c[offsetof(struct nsl_cblock, cflags)] |= NSL_CB_LOG;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_LOG, "compact: a log beside records refused");
	n = nsl_cblock_encode(&b, buf);
	c[offsetof(struct nsl_cblock, nrec)] = 8;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CBLOCK_SIZE, "compact: nrec past the size refused");
	n = nsl_cblock_encode(&b, buf);
	c[offsetof(struct nsl_cblock, nrec)] = 17;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_NREC, "compact: nrec 17 refused");
	n = nsl_cblock_encode(&b, buf);
	c[offsetof(struct nsl_cblock, nrec)] = 6;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CBLOCK_SIZE, "compact: bytes past the records refused");
	n = nsl_cblock_encode(&b, buf);
	c[sizeof(struct nsl_cblock) + 2 * 12 + 3] |= 0x80;	/* NSL_RF_EXT */
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CBLOCK_SIZE, "compact: an extension past the end refused");
	b.rec[0].depth = 20;	/* its extension says the depth */
	n = nsl_cblock_encode(&b, buf);
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_OK, "compact: a record with its extension");
	c[sizeof(struct nsl_cblock) + 3] |= 0x40;	/* NSL_RF_HCPU too */
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CREC_HCPU, "compact: NSL_RF_HCPU beside an extension refused");
	b.rec[0].depth = 0;
	b.nrec = 6;
	n = nsl_cblock_encode(&b, buf);	/* 136: 64 + 72, no padding */
	b.nrec = 5;
	n = nsl_cblock_encode(&b, buf);	/* 124 + 4 bytes of padding */
	c[n - 1] = 1;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CBLOCK_PAD, "compact: non-zero padding refused");
	n = nsl_cblock_encode(&b, buf);
	c[sizeof(struct nsl_cblock) + 12] = NSL_R_MAX;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_REGION, "compact: region %d refused", NSL_R_MAX);
}

/* Step @step of @region at @t ticks after tsc0 on @cpu, as the kernel logs it. */
#define STEP(step, region, t, cpu) \
	nsl_log_entry(NSL_LOG_##step, NSL_R_##region, t, cpu)
/* Device @dev's first record, a START of @region at @t on @cpu (ABI 10). */
#define DEV_START(region, dev, t, cpu) \
	((uint64_t)(t) | \
	 (uint64_t)nsl_log_high_arg(NSL_LOG_DEV_START, NSL_R_##region, dev, cpu) << 32)
/* @from hands over to @to at @t on @cpu, in one step (ABI 10). */
#define NEXT(from, to, t, cpu) \
	((uint64_t)(t) | \
	 (uint64_t)nsl_log_high_arg(NSL_LOG_NEXT, NSL_R_##from, NSL_R_##to, cpu) << 32)

/* A record a log's replay must make: what log_steps_abi10() checks. */
struct want_rec {
	uint8_t region, depth;
	uint16_t flags, cpu;
	uint64_t start, ticks;
};

/*
 * ABI 10's steps, a table of logs replayed on @b (one device): a NEXT
 * stops one region and starts the next at one time, a DEV_START opens
 * a device's first record; each refused where no writer makes it.
 */
static void log_steps_abi10(struct nsl_block *b)
{
	const struct {
		const char *name;
		uint64_t step[6];
		enum ns_decode_error dec;
		unsigned int nrec, dev_first;
		struct want_rec rec[3];
	} cases[] = {
		{ "a NEXT closes one region and opens the next at one time",
		  { STEP(START, WRITE, 10, 0), STEP(START, IP, 20, 0),
		    NEXT(IP, TCP, 50, 1), STEP(STOP, TCP, 70, 1),
		    STEP(STOP, WRITE, 80, 1), STEP(SEAL, NONE, 0, 0) },
		  NS_DEC_OK, 3, 0,
		  { { NSL_R_WRITE, 0, NSL_RF_MIGRATED, 0, 10, 70 },
		    { NSL_R_IP, 1, NSL_RF_MIGRATED, 0, 20, 30 },
		    { NSL_R_TCP, 1, 0, 1, 50, 20 } } },
		{ "a NEXT into no region refused",
		  { STEP(START, IP, 20, 0), NEXT(IP, NONE, 50, 1),
		    STEP(SEAL, NONE, 0, 0), STEP(SEAL, NONE, 0, 0),
		    STEP(SEAL, NONE, 0, 0), STEP(SEAL, NONE, 0, 0) },
		  NS_DEC_LOG, 0, 0, { { 0 } } },
		{ "a DEV_START opens the device's first record",
		  { STEP(START, WRITE, 10, 0), STEP(START, IP, 20, 0),
		    STEP(STOP, IP, 30, 0), DEV_START(LINK, 0, 40, 0),
		    STEP(STOP, LINK, 60, 0), STEP(STOP, WRITE, 70, 0) },
		  NS_DEC_OK, 3, 2,
		  { { NSL_R_WRITE, 0, 0, 0, 10, 60 },
		    { NSL_R_IP, 1, 0, 0, 20, 10 },
		    { NSL_R_LINK, 1, 0, 0, 40, 20 } } },
		{ "a DEV_START of device 1 of 1 refused",
		  { STEP(START, WRITE, 10, 0), DEV_START(LINK, 1, 40, 0),
		    STEP(SEAL, NONE, 0, 0), STEP(SEAL, NONE, 0, 0),
		    STEP(SEAL, NONE, 0, 0), STEP(SEAL, NONE, 0, 0) },
		  NS_DEC_LOG, 0, 0, { { 0 } } },
	};
	uint64_t buf[NSL_CBLOCK_MAX / 8 + 1];
	const struct nsl_record *r;
	struct ns_item it;
	unsigned int k, i;
	size_t n;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		n = nsl_cblock_encode_log_on(b, 1, buf, cases[k].step, 6);
		if (cases[k].dec != NS_DEC_OK) {
			TAP_EQ(ns_decode_item(buf, n, &it), cases[k].dec,
			       "log: %s", cases[k].name);
			continue;
		}
		tap_ok(TAP_IS(ns_decode_item(buf, n, &it) == NS_DEC_OK) &&
		       TAP_IS(it.block.nrec == cases[k].nrec) &&
		       TAP_IS(it.block.dev[0].first == cases[k].dev_first),
		       "log: %s: decodes", cases[k].name);
		for (i = 0; i < cases[k].nrec; i++) {
			const struct want_rec *w = &cases[k].rec[i];

			r = &it.block.rec[i];
			tap_ok(TAP_IS(r->region == w->region) &&
			       TAP_IS(r->depth == w->depth) &&
			       TAP_IS(r->flags == w->flags) &&
			       TAP_IS(r->cpu == w->cpu) &&
			       TAP_IS(r->start == w->start) &&
			       TAP_IS(r->ticks == w->ticks),
			       "log: %s: record %u", cases[k].name, i);
		}
	}
}

/*
 * NSL_CB_LOG (ABI 8): a block that carries the steps its records came
 * from is decoded into those records, as the kernel keeps them.
 */
static void logs(void)
{
	uint64_t buf[NSL_CBLOCK_MAX / 8 + 1];
	unsigned char *c = (unsigned char *)buf;
	uint64_t log[] = {
		STEP(START, WRITE, 10, 0),
		STEP(START, TCP, 20, 0),
		STEP(STOP, TCP, 50, 0),
		STEP(SEAL, NONE, 0, 0),
		nsl_log_entry(NSL_LOG_DEV, 0, 0, 0),
		STEP(START, IP, 60, 0),
		STEP(STOP, IP, 90, 0),
		STEP(START, IP, 100, 0),	/* back to back: merged */
		STEP(STOP, IP, 130, 0),
		STEP(GAP, SNDQ, 140, 0),	/* from tcp's end: 50 .. 140 */
		STEP(STOP, WRITE, 200, 1),	/* on another CPU */
		STEP(STOP, LINK, 210, 1),	/* none open: nothing */
	};
	const struct nsl_record *r = NULL;
	struct nsl_block b;
	struct ns_item it;
	size_t n;

	memset(&b, 0, sizeof(b));
	b.hdr.cpu = 1;
	b.tsc0 = 1000;
	b.proto = 6;
	b.family = 2;
	b.ndev = 1;
	b.dev[0].ifindex = 1;
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	TAP_EQ(n, 64 + 12 + 4 + 12 * 8, "log: header, a device, padding to 8 and 12 steps");
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_OK, "log: decodes");
	r = it.block.rec;
	tap_ok(TAP_IS(it.block.nrec == 4) && TAP_IS(it.block.dev[0].first == 2) &&
	       TAP_IS(r[0].region == NSL_R_WRITE) && TAP_IS(r[0].start == 10) &&
	       TAP_IS(r[0].ticks == 190) && TAP_IS(r[0].depth == 0) &&
	       TAP_IS(r[0].flags == NSL_RF_MIGRATED) &&
	       TAP_IS(r[1].region == NSL_R_TCP) && TAP_IS(r[1].depth == 1) &&
	       TAP_IS(r[1].ticks == 30) && TAP_IS(r[1].flags == 0) &&
	       TAP_IS(r[2].region == NSL_R_IP) && TAP_IS(r[2].start == 60) &&
	       TAP_IS(r[2].ticks == 60) && TAP_IS(r[2].nmerged == 2) &&
	       TAP_IS(r[2].flags == NSL_RF_MERGED) &&
	       TAP_IS(r[3].region == NSL_R_SNDQ) && TAP_IS(r[3].start == 50) &&
	       TAP_IS(r[3].ticks == 90) && TAP_IS(r[3].depth == 1) &&
	       TAP_IS(r[3].flags == NSL_RF_GAP),
	       "log: the records its steps make: nesting, a merge, a gap, a migration, the device's first record");
	/* sealed between the two: no merge */
	log[7] = STEP(SEAL, NONE, 0, 0);
	log[8] = STEP(START, IP, 100, 0);
	log[9] = STEP(STOP, IP, 130, 0);
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	tap_ok(ns_decode_item(buf, n, &it) == NS_DEC_OK &&
	       TAP_IS(it.block.nrec == 4) && TAP_IS(it.block.rec[3].region == NSL_R_IP) &&
	       TAP_IS(it.block.rec[3].nmerged == 1) && TAP_IS(it.block.rec[2].ticks == 30),
	       "log: a START after a SEAL opens a record of its own");
	/* split there (ABI 9): what closed before is another part's too */
	log[7] = STEP(SHARE, NONE, 0, 0);
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	r = it.block.rec;
	tap_ok(ns_decode_item(buf, n, &it) == NS_DEC_OK &&
	       TAP_IS(it.block.nrec == 4) &&
	       TAP_IS(r[0].flags == NSL_RF_MIGRATED) &&
	       TAP_IS(r[1].flags == NSL_RF_SHARED) &&
	       TAP_IS(r[2].flags == NSL_RF_SHARED) &&
	       TAP_IS(r[3].region == NSL_R_IP) && TAP_IS(r[3].flags == 0) &&
	       TAP_IS(r[3].nmerged == 1),
	       "log: a SHARE makes the records closed before it SHARED, the open one not, and nothing merges into them");

	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	c[offsetof(struct nsl_cblock, nrec)] = 1;
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_LOG, "log: with a record count refused");
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	c[64 + 12 + 4 + 8 * 3 + 5] = 9;		/* a step no writer makes */
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_LOG, "log: an unknown step refused");
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	c[64 + 12 + 4 + 8 * 0 + 4] = NSL_R_MAX;	/* a region past the last */
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_LOG, "log: a START of region %d refused", NSL_R_MAX);
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	c[64 + 12 + 4 + 8 * 4 + 4] = 1;		/* device 1 of 1 */
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_LOG, "log: a device past ndev refused");
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	c[64 + 12] = 1;				/* the padding before the log */
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_CBLOCK_PAD, "log: non-zero padding refused");
	b.dev[0].first = 3;
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	TAP_EQ(ns_decode_item(buf, n, &it), NS_DEC_LOG, "log: a device's first record not the log's to say refused");
	TAP_EQ(it.bad, 2, "log: ... and said so");
	b.dev[0].first = 0;
	n = nsl_cblock_encode_log_on(&b, 1, buf, log, 12);
	TAP_EQ(ns_decode_shallow(buf, n, &it), NS_DEC_OK, "log: ns_decode_shallow() takes its header");
	log_steps_abi10(&b);
	/* NSL_LOG_MAX steps and one more: the first is a block, the other not */
	{
		uint64_t big[NSL_CBLOCK_MAX / 8 + 2];
		uint64_t steps[NSL_LOG_MAX + 1];
		unsigned int k;

		for (k = 0; k <= NSL_LOG_MAX; k++)
			steps[k] = STEP(SEAL, NONE, 0, 0);
		b.ndev = 0;
		n = nsl_cblock_encode_log_on(&b, 1, big, steps, NSL_LOG_MAX);
		TAP_EQ(ns_decode_item(big, n, &it), NS_DEC_OK, "log: %d steps decode", NSL_LOG_MAX);
		memcpy((unsigned char *)big + n, &steps[0], 8);
		((struct nsl_cblock *)big)->hdr.size = n + 8;
		TAP_EQ(ns_decode_item(big, n + 8, &it), NS_DEC_CBLOCK_SIZE, "log: %d steps refused", NSL_LOG_MAX + 1);
	}
}

/* A compact block of two devices with @mutate applied to its bytes. */
static enum ns_decode_error bad_devices(void (*mutate)(unsigned char *c),
					struct ns_item *it, char *msg,
					size_t msglen)
{
	uint64_t buf[NSL_CBLOCK_MAX / 8 + 1];
	struct nsl_block b;
	enum ns_decode_error err;
	size_t n;

	random_block(&b, 7);
	memset(b.saddr, 0, 16);
	memset(b.daddr, 0, 16);
	b.ndev = 2;
	b.dev[1].first = 3;
	n = nsl_cblock_encode(&b, buf);
	mutate((unsigned char *)buf);
	err = ns_decode_item(buf, n, it);
	ns_decode_describe(err, it, msg, msglen);
	return err;
}

#define DEV1	(sizeof(struct nsl_cblock) + sizeof(struct nsl_cdev))
static void ndev_7(unsigned char *c) { c[offsetof(struct nsl_cblock, cflags)] |= 7 << NSL_CB_NDEV_SHIFT; }
static void dir_2(unsigned char *c) { c[DEV1 + offsetof(struct nsl_cdev, dir)] = 2; }
static void first_17(unsigned char *c) { c[DEV1 + offsetof(struct nsl_cdev, first)] = NSL_MAX_RECORDS + 1; }
static void pad_1(unsigned char *c) { c[DEV1 + offsetof(struct nsl_cdev, pad)] = 1; }
static void untouched(unsigned char *c) { (void)c; }

/* Devices a kernel never writes are refused, the reason naming the term. */
static void devices(void)
{
	static const struct {
		const char *name;
		void (*mutate)(unsigned char *c);
		enum ns_decode_error err;
		const char *msg;
	} rows[] = {
		{ "two devices", untouched, NS_DEC_OK, "no error" },
		{ "ndev 7", ndev_7, NS_DEC_CDEV, "block names 7 devices, at most 6" },
		{ "a direction of 2", dir_2, NS_DEC_CDEV, "block device 1 has direction 2 (tx 0, rx 1)" },
		{ "first record 17", first_17, NS_DEC_CDEV, "block device 1 has first record 17, past 16" },
		{ "non-zero padding", pad_1, NS_DEC_CDEV, "block device 1 has non-zero padding" },
	};
	unsigned char whole[sizeof(struct nsl_block)];
	struct ns_item it;
	char msg[160];
	size_t len;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum ns_decode_error err = bad_devices(rows[i].mutate, &it, msg,
						       sizeof(msg));

		tap_ok(TAP_IS(err == rows[i].err) &&
		       TAP_IS(!strcmp(msg, rows[i].msg)),
		       "compact devices: %s: %s", rows[i].name, msg);
	}
	/* a whole block's devices are checked as well: views index by them */
	len = gen_block(&six, 0, whole);
	whole[offsetof(struct nsl_block, ndev)] = 200;
	TAP_EQ(ns_decode_item(whole, len, &it), NS_DEC_CDEV, "decode: a whole block naming 200 devices refused");
	whole[offsetof(struct nsl_block, ndev)] = 1;
	whole[offsetof(struct nsl_block, dev[0].dir)] = 2;
	TAP_EQ(ns_decode_item(whole, len, &it), NS_DEC_CDEV, "decode: a whole block's device direction 2 refused");
	whole[offsetof(struct nsl_block, dev[0].dir)] = NSL_DIR_RX;
	TAP_EQ(ns_decode_item(whole, len, &it), NS_DEC_OK, "decode: a whole block with one device");
	TAP_EQ(it.block.dev[0].dir, NSL_DIR_RX, "decode: ... read back");
}

/* Where a recorder's run (ns_decode_run()) ends, and what it counts. */
static void runs(void)
{
	uint64_t buf[4 * NSL_CBLOCK_MAX / 8];
	unsigned char *p = (unsigned char *)buf;
	struct nsl_block b;
	struct nsl_cblock c;
	struct nsl_loss l = {
		.hdr = { .kind = NSL_ITEM_LOSS, .size = sizeof(l) }, .lost = 5,
	};
	struct ns_item it;
	struct ns_run r;
	size_t n, len = 0;

	random_block(&b, 7);
	b.flags = NSL_BF_ABSORBED;
	n = nsl_cblock_encode(&b, p);
	len += n;
	memcpy(p + len, &l, sizeof(l));
	len += sizeof(l);
	memcpy(p + len, p, n);
	len += n;
	ns_decode_run(p, len, &r);
	tap_ok(TAP_IS(r.len == len) && TAP_IS(r.blocks == 2) &&
	       TAP_IS(r.absorbed == 2) && TAP_IS(!r.coalesced) &&
	       TAP_IS(r.lost == 5) && TAP_IS(r.loss_items == 1) &&
	       TAP_IS(r.tsc0 == b.tsc0) && TAP_IS(r.nevents == b.nevents),
	       "decode: a run of two compact blocks and a loss, counted from their headers");
	ns_decode_run(p, len - 8, &r);
	TAP_EQ(r.len, n + sizeof(l), "decode: a run ends before an item cut short");
	/* the third block's flags unknown: the run ends before it */
	memcpy(&c, p + n + sizeof(l), sizeof(c));
	c.cflags |= 0x80;
	memcpy(p + n + sizeof(l), &c, sizeof(c));
	ns_decode_run(p, len, &r);
	tap_ok(TAP_IS(r.len == n + sizeof(l)) && TAP_IS(r.blocks == 1) &&
	       TAP_IS(ns_decode_shallow(p + r.len, len - r.len, &it) ==
		      NS_DEC_CBLOCK_FLAGS),
	       "decode: a run ends before a block ns_decode_shallow() refuses");
	/* an item of another kind first: no run, the item one by one */
	b.nrec = 1;
	memcpy(p, &b, NSL_BLOCK_SIZE(1));
	ns_decode_run(p, NSL_BLOCK_SIZE(1), &r);
	TAP_EQ(r.len, 0, "decode: no run of a block that is not compact");
}

/*
 * ns_decode_run() as it was first written, each check as
 * ns_decode_shallow() words it: the one nsdump has now must find the
 * same runs and count the same.
 */
static void run_ref(const unsigned char *p, size_t len, struct ns_run *r)
{
	struct nsl_item_hdr h;
	size_t off = 0;

	memset(r, 0, sizeof(*r));
	r->buf = p;
	while (len - off >= sizeof(h)) {
		const unsigned char *q = p + off;
		uint8_t cflags, nrec, nev;
		uint64_t x;
		uint32_t flags;

		memcpy(&h, q, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > len - off)
			break;
		if (h.kind == NSL_ITEM_LOSS) {
			if (h.size != sizeof(struct nsl_loss))
				break;
			memcpy(&x, q + offsetof(struct nsl_loss, lost), 8);
			r->lost += x;
			r->loss_items++;
			off += h.size;
			continue;
		}
		if (h.kind != NSL_ITEM_CBLOCK ||
		    h.size < sizeof(struct nsl_cblock) || h.size > NSL_CBLOCK_MAX)
			break;
		cflags = q[offsetof(struct nsl_cblock, cflags)];
		nrec = q[offsetof(struct nsl_cblock, nrec)];
		nev = q[offsetof(struct nsl_cblock, nevents)];
		if ((cflags & ~NSL_CB_KNOWN) || nrec > NSL_MAX_RECORDS ||
		    nev > NSL_MAX_EVENTS || NSL_CB_NDEV(cflags) > NSL_MAX_DEVS)
			break;
		if (!r->blocks)
			memcpy(&r->tsc0, q + offsetof(struct nsl_cblock, tsc0), 8);
		memcpy(&flags, q + offsetof(struct nsl_cblock, flags), 4);
		r->blocks++;
		r->absorbed += !!(flags & NSL_BF_ABSORBED);
		r->coalesced += !!(flags & NSL_BF_COALESCED);
		if (nev > r->nevents)
			r->nevents = nev;
		off += h.size;
	}
	r->len = off;
}

/*
 * Streams of compact blocks, losses and now and then another item, a
 * byte of a header or of a block's checked fields set at random: the
 * run found and its counts are the reference's.
 */
static void runs_random(void)
{
	static uint64_t buf[12 * NSL_CBLOCK_MAX / 8];
	unsigned char *p = (unsigned char *)buf;
	unsigned int seed = 1, bad = 0, i, k;
	uint32_t x = 2463534242u;

	for (i = 0; i < 20000 && !bad; i++) {
		size_t len = 0, start[10];
		unsigned int n = 1 + i % 8;
		struct ns_run a, b;

		for (k = 0; k < n; k++) {
			struct nsl_block blk;
			struct nsl_loss l = {
				.hdr = { .kind = NSL_ITEM_LOSS,
					 .size = sizeof(l) },
			};

			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			start[k] = len;
			if (x % 5 == 0) {
				l.lost = x >> 8;
				memcpy(p + len, &l, sizeof(l));
				len += sizeof(l);
				continue;
			}
			random_block(&blk, seed++);
			blk.ndev = x % 11 < NSL_MAX_DEVS + 1 ? x % 11 : 0;
			for (unsigned int d = 0; d < blk.ndev; d++)
				blk.dev[d].ifindex = d + 1;
			if (x % 23 == 0) {
				blk.nrec = blk.nrec % 4;
				memcpy(p + len, &blk, NSL_BLOCK_SIZE(blk.nrec));
				len += NSL_BLOCK_SIZE(blk.nrec);
			} else if (x % 7 == 0) {
				uint64_t log[NSL_LOG_MAX];

				for (unsigned int e = 0; e < NSL_LOG_MAX; e++)
					log[e] = nsl_log_entry(1 + e % 2, 1, e, 0);
				blk.nrec = 0;
				blk.nevents = 0;
				len += nsl_cblock_encode_log_on(&blk, 0, p + len,
								log, x % 50);
			} else if (ns_block_compacts(&blk)) {
				len += nsl_cblock_encode(&blk, p + len);
			}
		}
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (x % 3 && len) {
			/* a byte of an item's first 64 set at random */
			k = (x >> 4) % n;
			static const unsigned char near[] = {
				0, 1, NSL_MAX_RECORDS, NSL_MAX_RECORDS + 1,
				NSL_MAX_EVENTS, NSL_MAX_EVENTS + 1, 0x37, 0x38,
				0x3f, 0x40, 0x7f, 0x80, 0xff, 2, 5, 8,
			};
			size_t at = start[k];

			/* mostly the bytes the run checks */
			if (x & 0x100)
				at += offsetof(struct nsl_cblock, family) + (x >> 9) % 4;
			else if (x & 0x200)
				at += (x >> 10) % 8;
			else
				at += (x >> 10) % 64;
			if (at < len)
				p[at] = x & 0x400 ? near[(x >> 16) % 16] :
					(unsigned char)(x >> 20) >> (x >> 28) % 8;
		}
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		if (x % 4 == 0 && len)
			len -= (x >> 4) % (len < 80 ? len : 80);
		ns_decode_run(p, len, &a);
		run_ref(p, len, &b);
		if (a.buf != b.buf || a.len != b.len || a.blocks != b.blocks ||
		    a.lost != b.lost || a.loss_items != b.loss_items ||
		    a.absorbed != b.absorbed || a.coalesced != b.coalesced ||
		    a.tsc0 != b.tsc0 || a.nevents != b.nevents)
			bad = i + 1;
	}
	TAP_EQ(bad, 0, "decode: runs of random items, one byte of them set at random, found and counted as the reference does");
}

void test_decode(void)
{
	table();
	values();
	prefixes();
	stream();
	compact();
	logs();
	devices();
	runs();
	runs_random();
}
