// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "netslice.h"
#include "source/layout.h"

#define F(prefix, type, member) \
	{ prefix "." #member, offsetof(type, member), \
	  sizeof(((type *)0)->member) }
#define B(m)	F("block", struct nsl_block, m)
#define R(m)	F("record", struct nsl_record, m)
#define L(m)	F("loss", struct nsl_loss, m)
#define C(i)	{ "record.count" #i, offsetof(struct nsl_record, count[i]), 8 }
#define E(m)	F("event", struct nsl_event_rec, m)
#define S(m)	F("sysinfo", struct nsl_sysinfo, m)
#define D(m)	F("dev", struct nsl_dev, m)

static const struct ns_field base_fields[] = {
	{ "block", 0, NSL_BLOCK_SIZE(0) },
	{ "record", 0, sizeof(struct nsl_record) },
	{ "loss", 0, sizeof(struct nsl_loss) },
	{ "item.kind", 0, 2 },
	{ "item.size", 2, 2 },
	{ "item.cpu", 4, 4 },
	B(seq), B(tsc0), B(conn), B(flags), B(len), B(ifindex), B(gso_segs),
	B(proto), B(nhlen), B(thlen), B(dir), B(nrec), B(nevents), B(mode),
	B(tcp_seq), B(family), B(pad), B(sport), B(dport), B(pad2),
	/* fields are 1 to 8 bytes: an address is described in two halves */
	{ "block.saddr0", offsetof(struct nsl_block, saddr), 8 },
	{ "block.saddr8", offsetof(struct nsl_block, saddr) + 8, 8 },
	{ "block.daddr0", offsetof(struct nsl_block, daddr), 8 },
	{ "block.daddr8", offsetof(struct nsl_block, daddr) + 8, 8 },
	{ "block.rec", offsetof(struct nsl_block, rec), 0 },
	R(region), R(depth), R(flags), R(nmerged), R(cpu), R(start), R(ticks),
	C(0), C(1), C(2), C(3),
	L(lost), L(first_seq), L(tsc),
};

/*
 * ABI 6's devices, last in XFIELDS: the entries before them are what the
 * ABI 6 files written before they were described carry (same_as_native).
 * dev[] is described as rec[] is: "dev" gives its stride, "dev[]" where
 * it starts in a block and, as its size, its entries.  pad3's 7 bytes
 * are three fields, named by their byte within it.
 */
#define DEV_FIELDS \
	B(ndev), \
	{ "block.pad3_0", offsetof(struct nsl_block, pad3), 1 }, \
	{ "block.pad3_1", offsetof(struct nsl_block, pad3) + 1, 2 }, \
	{ "block.pad3_3", offsetof(struct nsl_block, pad3) + 3, 4 }, \
	{ "dev", 0, sizeof(struct nsl_dev) }, \
	{ "dev[]", offsetof(struct nsl_block, dev), NSL_MAX_DEVS }, \
	D(ifindex), D(netns), D(first), D(dir), D(pad), D(pad2)

static const struct ns_field ext_fields[] = {
	{ "event", 0, sizeof(struct nsl_event_rec) },
	{ "sysinfo", 0, sizeof(struct nsl_sysinfo) },
	E(seq), E(tsc), E(conn), E(type), E(bytes), E(flags), E(pad),
	E(tcp.snd_wnd), E(tcp.srtt_us), E(tcp.rto_us), E(tcp.packets_out),
	E(tcp.retrans_out), E(tcp.total_retrans), E(tcp.snd_ssthresh),
	E(tcp.snd_cwnd), E(tcp.rcv_wnd), E(tcp.write_seq), E(tcp.copied_seq),
	E(tcp.mss), E(tcp.sport), E(tcp.dport), E(tcp.state), E(tcp.ca_state),
	E(tcp.tcp_flags),
	E(ip.version), E(ip.tos), E(ip.ttl), E(ip.protocol), E(ip.id),
	E(ip.frag_off), E(ip.saddr), E(ip.daddr),
	{ "event.saddr6_0", offsetof(struct nsl_event_rec, saddr6), 8 },
	{ "event.saddr6_8", offsetof(struct nsl_event_rec, saddr6) + 8, 8 },
	{ "event.daddr6_0", offsetof(struct nsl_event_rec, daddr6), 8 },
	{ "event.daddr6_8", offsetof(struct nsl_event_rec, daddr6) + 8, 8 },
	S(abi_version), S(byte_order), S(tsc_khz), S(ncpus), S(ref_tsc),
	S(ref_realtime_ns),
	DEV_FIELDS,
};

#define N_BASE	(sizeof(base_fields) / sizeof(base_fields[0]))
#define N_EXT	(sizeof(ext_fields) / sizeof(ext_fields[0]))
/* XFIELDS of the ABI 6 files written before the devices were described */
#define N_EXT_NODEV	(N_EXT - sizeof((struct ns_field[]){ DEV_FIELDS }) / \
			 sizeof(struct ns_field))
_Static_assert(NSL_MAX_EVENTS == 4, "extend C(i) above");
_Static_assert(N_BASE + N_EXT <= NS_LAYOUT_MAX, "NS_LAYOUT_MAX too small");

/* Both parts as one array, index 0 .. N_BASE + N_EXT - 1. */
static const struct ns_field *native_at(size_t i)
{
	return i < N_BASE ? &base_fields[i] : &ext_fields[i - N_BASE];
}

const struct ns_field *ns_layout_native_part(bool ext, size_t *n)
{
	*n = ext ? N_EXT : N_BASE;
	return ext ? ext_fields : base_fields;
}

static const struct ns_field *find(const struct ns_layout *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strncmp(l->f[i].name, name, NS_FIELD_NAME))
			return &l->f[i];
	return NULL;
}

void ns_layout_native(struct ns_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->n = N_BASE + N_EXT;
	memcpy(l->f, base_fields, sizeof(base_fields));
	memcpy(l->f + N_BASE, ext_fields, sizeof(ext_fields));
	ns_layout_check(l, NULL, 0);
}

/*
 * A file without XFIELDS is native when its base part is; so is an ABI 6
 * file written before the devices were described, whose XFIELDS lacks
 * only them: its FIELDS give this build's struct sizes.
 */
static bool same_as_native(const struct ns_layout *l)
{
	size_t next;

	if (l->n < N_BASE)
		return false;
	next = l->n - N_BASE;
	if (next && next != N_EXT_NODEV && next != N_EXT)
		return false;
	return !memcmp(l->f, base_fields, sizeof(base_fields)) &&
	       !memcmp(l->f + N_BASE, ext_fields, next * sizeof(ext_fields[0]));
}

/*
 * What ns_layout_check() derives from a layout same_as_native() takes,
 * without looking up a name: every file this build writes has it, and
 * the lookups cost more than reading a small file (tests/host checks
 * that both ways agree).
 */
static void native_derived(struct ns_layout *l)
{
	bool ext = l->n > N_BASE, devs = l->n == N_BASE + N_EXT;

	l->block_fixed = NSL_BLOCK_SIZE(0);
	l->rec_off = offsetof(struct nsl_block, rec);
	l->rec_size = sizeof(struct nsl_record);
	l->loss_size = sizeof(struct nsl_loss);
	l->event_size = ext ? sizeof(struct nsl_event_rec) : 0;
	l->sysinfo_size = ext ? sizeof(struct nsl_sysinfo) : 0;
	l->dev_off = devs ? offsetof(struct nsl_block, dev) : 0;
	l->dev_size = devs ? sizeof(struct nsl_dev) : 0;
	l->ndevs = devs ? NSL_MAX_DEVS : 0;
	l->nrec_off = offsetof(struct nsl_block, nrec);
	for (size_t i = 0; i < N_BASE + N_EXT; i++)
		l->at[i] = i < l->n ? (int16_t)i : -1;
	l->native = true;
}

/*
 * Size of the struct holding field @name (0: the file gives none); false
 * for a field of an item kind this build does not know (never used).
 */
static bool container_size(const struct ns_layout *l, const char *name,
			   uint32_t *size)
{
	if (!strncmp(name, "block.", 6))
		*size = l->block_fixed;
	else if (!strncmp(name, "record.", 7))
		*size = l->rec_size;
	else if (!strncmp(name, "loss.", 5))
		*size = l->loss_size;
	else if (!strncmp(name, "event.", 6))
		*size = l->event_size;
	else if (!strncmp(name, "sysinfo.", 8))
		*size = l->sysinfo_size;
	else if (!strncmp(name, "dev.", 4))
		*size = l->dev_size;
	else if (!strncmp(name, "item.", 5))
		*size = 8;
	else
		return false;
	return true;
}

/* Size of pseudo-field @name, 0 if absent. */
static uint32_t struct_size(const struct ns_layout *l, const char *name)
{
	const struct ns_field *f = find(l, name);

	return f ? f->size : 0;
}

int ns_layout_check(struct ns_layout *l, char *why, size_t whylen)
{
	static const char *const need[] = {
		"block", "record", "loss", "block.rec", "block.nrec",
	};
	static const struct ns_field hdr[] = {
		{ "item.kind", 0, 2 }, { "item.size", 2, 2 }, { "item.cpu", 4, 4 },
	};
	const struct ns_field *f;

	if (same_as_native(l)) {
		native_derived(l);
		return 0;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (memchr(l->f[i].name, 0, NS_FIELD_NAME) == l->f[i].name ||
		    l->f[i].name[NS_FIELD_NAME - 1]) {
			snprintf(why, whylen, "field %zu has a bad name", i);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!find(l, need[i])) {
			snprintf(why, whylen, "field %s missing", need[i]);
			return -1;
		}
	}
	for (size_t i = 0; i < sizeof(hdr) / sizeof(hdr[0]); i++) {
		f = find(l, hdr[i].name);
		if (!f || f->offset != hdr[i].offset || f->size != hdr[i].size) {
			snprintf(why, whylen, "item header field %s moved",
				 hdr[i].name);
			return -1;
		}
	}
	l->block_fixed = find(l, "block")->size;
	l->rec_size = find(l, "record")->size;
	l->loss_size = find(l, "loss")->size;
	l->rec_off = find(l, "block.rec")->offset;
	l->event_size = struct_size(l, "event");
	l->sysinfo_size = struct_size(l, "sysinfo");
	l->dev_size = struct_size(l, "dev");
	f = find(l, "dev[]");
	l->dev_off = f ? f->offset : 0;
	l->ndevs = f ? f->size : 0;
	/* below 8 bytes no struct holds what its fields say it does */
	if (l->block_fixed < 8 || l->block_fixed > 4096 ||
	    l->rec_size < 8 || l->rec_size > 4096 ||
	    l->loss_size < 8 || l->loss_size > 4096 ||
	    l->rec_off > l->block_fixed ||
	    (l->event_size && (l->event_size < 8 || l->event_size > 4096)) ||
	    (l->sysinfo_size && (l->sysinfo_size < 8 ||
				 l->sysinfo_size > 4096)) ||
	    (l->dev_size && (l->dev_size < 8 || l->dev_size > 4096)) ||
	    (l->ndevs && (!l->dev_size || l->ndevs > 255 ||
			  l->dev_off + (uint64_t)l->ndevs * l->dev_size >
			  l->block_fixed))) {
		snprintf(why, whylen, "implausible struct sizes");
		return -1;
	}
	for (size_t i = 0; i < l->n; i++) {
		uint32_t size;

		f = &l->f[i];
		if (!strchr(f->name, '.') || !strcmp(f->name, "block.rec") ||
		    !container_size(l, f->name, &size))
			continue;
		if (!size) {
			snprintf(why, whylen, "field %s of a struct whose size is not given",
				 f->name);
			return -1;
		}
		if ((f->size != 1 && f->size != 2 && f->size != 4 &&
		     f->size != 8) ||
		    size < f->size || f->offset > size - f->size) {
			snprintf(why, whylen, "field %s (offset %u size %u) out of bounds",
				 f->name, f->offset, f->size);
			return -1;
		}
	}
	if (find(l, "block.nrec")->size != 1) {
		/* translating a wider nrec would be easy; nothing needs it yet */
		snprintf(why, whylen, "field block.nrec is not one byte");
		return -1;
	}
	l->nrec_off = find(l, "block.nrec")->offset;
	l->native = false;
	/* looked up once here, not for every field of every item */
	for (size_t i = 0; i < N_BASE + N_EXT; i++) {
		f = find(l, native_at(i)->name);
		l->at[i] = f ? f - l->f : -1;
	}
	return 0;
}

static uint64_t get(const unsigned char *p, uint32_t size)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (size) {
	case 1: memcpy(&v8, p, 1); return v8;
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	default: memcpy(&v64, p, 8); return v64;
	}
}

static int put(unsigned char *p, uint32_t size, uint64_t v)
{
	uint8_t v8 = v;
	uint16_t v16 = v;
	uint32_t v32 = v;

	switch (size) {
	case 1: memcpy(p, &v8, 1); return v8 == v ? 0 : -1;
	case 2: memcpy(p, &v16, 2); return v16 == v ? 0 : -1;
	case 4: memcpy(p, &v32, 4); return v32 == v ? 0 : -1;
	default: memcpy(p, &v, 8); return 0;
	}
}

/* Copy every native field named "<prefix>.*" that @from also has. */
static int copy_fields(const struct ns_layout *from, const char *prefix,
		       const unsigned char *in, unsigned char *out,
		       char *why, size_t whylen)
{
	size_t plen = strlen(prefix);

	for (size_t i = 0; i < N_BASE + N_EXT; i++) {
		const struct ns_field *n = native_at(i), *f;

		if (strncmp(n->name, prefix, plen) || n->name[plen] != '.' ||
		    !n->size || from->at[i] < 0)
			continue;
		f = &from->f[from->at[i]];
		if (put(out + n->offset, n->size, get(in + f->offset, f->size))) {
			snprintf(why, whylen, "value of %s does not fit in %u bytes",
				 n->name, n->size);
			return -1;
		}
	}
	return 0;
}

/* An item of one fixed size (loss, event, sysinfo): 0 or its new size. */
static size_t translate_fixed(const struct ns_layout *from, const char *prefix,
			      const char *what, uint32_t from_size, size_t size,
			      const unsigned char *src, size_t inlen,
			      unsigned char *dst, char *why, size_t whylen)
{
	if (inlen != from_size) {
		snprintf(why, whylen, "%s of %zu bytes, expected %u", what,
			 inlen, from_size);
		return 0;
	}
	memset(dst, 0, size);
	if (copy_fields(from, prefix, src, dst, why, whylen))
		return 0;
	return size;
}

size_t ns_layout_translate(const struct ns_layout *from, const void *in,
			   size_t inlen, void *out, size_t outcap,
			   char *why, size_t whylen)
{
	const unsigned char *src = in;
	unsigned char *dst = out;
	struct nsl_item_hdr hdr;
	size_t size;

	memcpy(&hdr, in, sizeof(hdr));
	if (hdr.kind == NSL_ITEM_BLOCK) {
		unsigned int nrec;

		if (inlen < from->block_fixed) {
			snprintf(why, whylen, "block of %zu bytes below its fixed part %u",
				 inlen, from->block_fixed);
			return 0;
		}
		nrec = src[from->nrec_off];
		if (nrec > NSL_MAX_RECORDS ||
		    inlen != from->rec_off + (size_t)nrec * from->rec_size) {
			snprintf(why, whylen, "block of %zu bytes with nrec %u",
				 inlen, nrec);
			return 0;
		}
		size = NSL_BLOCK_SIZE(nrec);
		memset(dst, 0, size);
		if (copy_fields(from, "block", src, dst, why, whylen))
			return 0;
		/* all of dev[], not only ndev: a block may carry more */
		for (unsigned int i = 0; i < from->ndevs && i < NSL_MAX_DEVS; i++)
			if (copy_fields(from, "dev",
					src + from->dev_off + i * from->dev_size,
					dst + offsetof(struct nsl_block, dev[i]),
					why, whylen))
				return 0;
		for (unsigned int i = 0; i < nrec; i++)
			if (copy_fields(from, "record",
					src + from->rec_off + i * from->rec_size,
					dst + offsetof(struct nsl_block, rec[i]),
					why, whylen))
				return 0;
	} else if (hdr.kind == NSL_ITEM_LOSS) {
		size = translate_fixed(from, "loss", "loss item", from->loss_size,
				       sizeof(struct nsl_loss), src, inlen, dst,
				       why, whylen);
	} else if (hdr.kind == NSL_ITEM_EVENT && from->event_size) {
		size = translate_fixed(from, "event", "event record",
				       from->event_size,
				       sizeof(struct nsl_event_rec), src, inlen,
				       dst, why, whylen);
	} else if (hdr.kind == NSL_ITEM_SYSINFO && from->sysinfo_size) {
		size = translate_fixed(from, "sysinfo", "sysinfo",
				       from->sysinfo_size,
				       sizeof(struct nsl_sysinfo), src, inlen, dst,
				       why, whylen);
	} else {
		/* not described: taken as this build's (decoding checks it) */
		if (inlen > outcap) {
			snprintf(why, whylen, "item of %zu bytes too large", inlen);
			return 0;
		}
		memcpy(dst, src, inlen);
		return inlen;
	}
	if (!size)
		return 0;
	hdr.size = size;
	memcpy(dst, &hdr, sizeof(hdr));
	return size;
}
