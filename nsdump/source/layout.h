/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Field-by-field description of the ABI items, as a trace file's FIELDS
 * record carries it, and translation of items written with another
 * layout (an older or newer netslice.h) into this build's structs: each
 * field is found by name; fields the file lacks read as zero, fields this
 * build does not know are dropped.  The item header (kind, size, cpu)
 * is the one thing that never moves.
 */
#ifndef _NS_LAYOUT_H
#define _NS_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

#define NS_FIELD_NAME	24
#define NS_LAYOUT_MAX	128	/* FIELDS and XFIELDS together */

/* On disk as is: 32 bytes.  Name is NUL-padded. */
struct ns_field {
	char name[NS_FIELD_NAME];	/* "block.seq", "record.ticks", ... */
	uint32_t offset;		/* in its struct */
	uint32_t size;			/* 1, 2, 4 or 8; struct size for "block" */
};

/*
 * Pseudo-fields: "block" (size of a block without records), "record"
 * (size of one record = the array stride), "loss" (size of a loss item),
 * "event" and "sysinfo" (sizes of those items); "block.rec" gives the
 * offset of the record array.  The devices (ABI 6) are an array in the
 * block's fixed part: "dev" is the size of one (the stride), "dev[]"
 * gives the array's offset in the block and, as its size, its entries;
 * fields "dev.ifindex" ... are within one entry.  Nested members are
 * named by their path: "event.tcp.snd_cwnd".  Every byte of every item
 * struct is some field's (tests/host checks it), padding included, so
 * a translation of an item in this build's own layout gives it back
 * byte for byte.
 *
 * The items of ABI version 1's first cut (block, record, loss) are the
 * base part, carried by a file's FIELDS record; the later ones (event,
 * sysinfo, and the block's devices) are the extension part, in an
 * XFIELDS record of their own: a reader that predates them skips XFIELDS
 * whole (it checks every FIELDS entry against the structs it knows) and
 * skips their items by size.  One that has XFIELDS but predates the
 * devices passes over "dev" and "dev[]" (no '.') and "dev.*" (a kind of
 * struct it does not know).
 */
struct ns_layout {
	size_t n;
	struct ns_field f[NS_LAYOUT_MAX];
	/* derived by ns_layout_check(); event/sysinfo_size 0: not described */
	uint32_t block_fixed, rec_off, rec_size, loss_size;
	uint32_t event_size, sysinfo_size;
	uint32_t dev_off, dev_size, ndevs;	/* dev[]; ndevs 0: not described */
	uint32_t nrec_off;		/* of block.nrec */
	/* this build's field i is f[at[i]], or absent where at[i] < 0 */
	int16_t at[NS_LAYOUT_MAX];
	bool native;
};

/* This build's layout, both parts. */
void ns_layout_native(struct ns_layout *l);
/* This build's base (FIELDS) or extension (XFIELDS) part. */
const struct ns_field *ns_layout_native_part(bool ext, size_t *n);

/*
 * Validate a layout read from a file; 0 or -1 with @why set.  Fields of
 * item kinds this build does not know are not checked (never used).
 */
int ns_layout_check(struct ns_layout *l, char *why, size_t whylen);

/*
 * Translate the item at @in (@inlen bytes, hdr.size already within it),
 * written with layout @from as ns_layout_check() accepted it, to
 * this build's form in @out (at least sizeof(struct nsl_block) bytes).
 * Returns the translated size, or 0 with @why set.  Unknown kinds are
 * copied unchanged if they fit.
 */
size_t ns_layout_translate(const struct ns_layout *from, const void *in,
			   size_t inlen, void *out, size_t outcap,
			   char *why, size_t whylen);

/* Bytes a translated item can take: the largest struct. */
#define NS_LAYOUT_ITEM_MAX	sizeof(struct nsl_block)

#endif /* _NS_LAYOUT_H */
