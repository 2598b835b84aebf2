/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoding ABI items (include/netslice.h) from a byte buffer, as read()
 * returns them or as a trace file's DATA record carries them.  Every
 * length and index is checked; a malformed item is an error with a
 * reason, never a crash.
 */
#ifndef _NS_DECODE_H
#define _NS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

enum ns_item_type {
	NS_ITEM_BLOCK,
	NS_ITEM_LOSS,
	NS_ITEM_EVENT,		/* MAGNeT event record */
	NS_ITEM_SYSINFO,
	NS_ITEM_SKIPPED,	/* well-formed item of a kind we do not know */
};

enum ns_decode_error {
	NS_DEC_OK = 0,
	NS_DEC_SHORT_HEADER,	/* fewer than 8 bytes left */
	NS_DEC_BAD_SIZE,	/* hdr.size < 8 or not a multiple of 8 */
	NS_DEC_TRUNCATED,	/* hdr.size beyond the end of the buffer */
	NS_DEC_BLOCK_SHORT,	/* block smaller than its fixed part */
	NS_DEC_NREC,		/* nrec > NSL_MAX_RECORDS */
	NS_DEC_NEVENTS,		/* nevents > NSL_MAX_EVENTS */
	NS_DEC_BLOCK_SIZE,	/* hdr.size != NSL_BLOCK_SIZE(nrec) */
	NS_DEC_REGION,		/* a record's region is 0 or >= NSL_R_MAX */
	NS_DEC_LOSS_SIZE,	/* hdr.size != sizeof(struct nsl_loss) */
	NS_DEC_EVENT_SIZE,	/* hdr.size != sizeof(struct nsl_event_rec) */
	NS_DEC_EVENT_TYPE,	/* type 0 or >= NSL_EV_MAX */
	NS_DEC_EVENT_FLAGS,	/* flags outside NSL_EVF_* */
	NS_DEC_SYSINFO_SIZE,	/* hdr.size != sizeof(struct nsl_sysinfo) */
	NS_DEC_SYSINFO_BOM,	/* byte_order != NSL_BYTE_ORDER_MARK */
	NS_DEC_CBLOCK_FLAGS,	/* compact block: cflags outside NSL_CB_* */
	NS_DEC_CBLOCK_SIZE,	/* compact block: size != what its parts take */
	NS_DEC_CBLOCK_PAD,	/* compact block: non-zero bytes after its parts */
	NS_DEC_CREC_HCPU,	/* compact record: NSL_RF_HCPU and no ring CPU */
	NS_DEC_CDEV,		/* a device: ndev, dir, first or pad bad */
	NS_DEC_LOG,		/* a log with records, counters or a device's first */
				/* record, or a step no writer makes */
};

#define NS_EVF_KNOWN	(NSL_EVF_TCP | NSL_EVF_IP | NSL_EVF_ADDR | NSL_EVF_TSO | \
			 NSL_EVF_ADDR6)

struct ns_item {
	enum ns_item_type type;
	struct nsl_item_hdr hdr;
	const void *raw;	/* the item's bytes in the input buffer */
	/*
	 * A compact block decoded only as far as its header
	 * (ns_decode_shallow()): block's fixed fields are set, its
	 * addresses, devices and records are not read; raw holds them.
	 */
	bool shallow;
	uint64_t bad;		/* on error: the offending value or index */
	union {
		/* records past nrec are zero; NSL_ITEM_CBLOCK decodes to it */
		struct nsl_block block;
		struct nsl_loss loss;
		struct nsl_event_rec event;
		struct nsl_sysinfo sysinfo;
	};
};

/*
 * Decode the item at the start of @buf (@len bytes left).  On NS_DEC_OK
 * the item takes it->hdr.size bytes; on error it->bad holds the offending
 * value (size, nrec, nevents, ndev, or the index of the bad record or
 * device).
 */
enum ns_decode_error ns_decode_item(const void *buf, size_t len,
				    struct ns_item *it);

/*
 * What a recorder needs (-w alone, no filter): the item's size checked
 * as ns_decode_item() does, and a compact block's header read into
 * it->block's fixed fields (it->shallow), its records left in it->raw
 * for the trace file's reader to decode.  Other kinds decode in full.
 * Against /dev/ns alone, whose blocks the module encoded: a compact
 * block from a file is decoded by its reader.
 */
enum ns_decode_error ns_decode_shallow(const void *buf, size_t len,
				       struct ns_item *it);

/*
 * A run of items as the device hands them out, for a recorder that
 * copies them whole (-w alone: ns_pipeline_runs()): compact blocks and
 * loss items, and what the stages count of them.
 */
struct ns_run {
	const unsigned char *buf;
	size_t len;		/* bytes of whole items; 0: none */
	uint64_t blocks, lost, loss_items;
	uint64_t absorbed, coalesced;	/* blocks with NSL_BF_ABSORBED, ... */
	uint64_t tsc0;		/* the first block's, if any */
	unsigned int nevents;	/* the largest of the blocks' */
	/*
	 * The bytes stay valid past the source's next call, until the
	 * pipeline gives them back (NS_SOURCE_RECLAIM): a mapped ring's,
	 * which a recorder writes out from there.  False: until the next
	 * call, as any item.
	 */
	bool lent;
};

/*
 * The longest run of items at @buf (@len bytes) that are compact blocks
 * (of at most NSL_CBLOCK_MAX bytes) or loss items, each checked as
 * ns_decode_shallow() checks it, into @r: each item's header read, no
 * more.  r->len 0: the first item is of another kind, or malformed, and
 * is for ns_decode_shallow() to take or to say what is wrong with it.
 */
void ns_decode_run(const void *buf, size_t len, struct ns_run *r);

/*
 * Whether nsl_cblock_encode() keeps every byte of @b: the fields that are
 * narrower in the compact form fit, the padding, the counts past nevents
 * and the devices past ndev are zero, no record flag is NSL_RF_EXT.  A
 * block of an older module or file that does not is written as it is
 * (NSL_ITEM_BLOCK).
 */
bool ns_block_compacts(const struct nsl_block *b);

/* One line saying what is wrong, e.g. "nrec 17 exceeds 16". */
void ns_decode_describe(enum ns_decode_error err, const struct ns_item *it,
			char *msg, size_t msglen);

/*
 * Regions nsdump adds to the ABI's, never in an item from the kernel or
 * a file: wire, the time between two hosts that a join (source/join.h)
 * puts in a joined block.  Tables over regions run up to NS_R_MAX.
 */
#define NS_R_WIRE	NSL_R_MAX
#define NS_R_MAX	(NSL_R_MAX + 1)

/* "write", "tcp", ..., "wire", or NULL for an id outside them. */
const char *ns_region_name(unsigned int region);
/* "MAGNET_SOCK_SEND", ... or NULL for a type outside the ABI. */
const char *ns_event_type_name(unsigned int type);

#endif /* _NS_DECODE_H */
