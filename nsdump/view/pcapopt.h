/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pcapng export (pcapng.h) says of each item beside its made-up
 * packet: the NetSlice payload, a small versioned binary layout carried
 * in a custom option (and, base64, in a comment, for Wireshark's Lua),
 * and the comment a person reads.  The layout, version 1, every integer
 * big-endian (network order), whatever the section's byte order:
 *
 *   all kinds, 8 bytes
 *     0  u8   version (1)
 *     1  u8   kind: 1 block, 2 MAGNeT event record, 3 loss
 *     2  u16  length of the whole payload in bytes
 *     4  u32  CPU whose ring carried the item
 *   block (kind 1), from byte 8
 *     8  u64  seq             16  u64 conn           24  u32 flags (NSL_BF_*)
 *     28 u32  len             32  u32 tcp_seq        36  u16 segs
 *     38 u8   dir (0 tx, 1 rx)    39 u8 nrec         40  u8  ndev
 *     41 u8   nevents         42  u8  1: values corrected, 0: raw
 *     43 u8   pathlen
 *     44      ndev devices, 12 bytes each: u32 ifindex, u32 netns,
 *             u8 dir, u8 first record, u16 0
 *             nrec records, 32 + 8 * nevents bytes each: u8 region,
 *             u8 depth, u16 flags (NSL_RF_*), u16 cpu, u16 nmerged,
 *             u64 start (ns from NSI), u64 raw (ns), u64 value (ns:
 *             corrected where byte 42 says so, raw for an OPEN record),
 *             u64 count[nevents] (corrected likewise)
 *             the device path as nsdump prints it (pathlen bytes, no NUL)
 *             nevents counter names, each a u8 length and its bytes
 *   event record (kind 2), from byte 8
 *     8  u64  seq   16 u64 conn   24 u32 type   28 u32 bytes
 *     32 u32  flags (NSL_EVF_*)   36 u8 namelen, then the type's name
 *   loss (kind 3), from byte 8
 *     8  u64  first_seq   16 u64 lost
 */
#ifndef _NS_PCAPOPT_H
#define _NS_PCAPOPT_H

#include <stddef.h>
#include <stdint.h>
#include "stage/accum.h"

#define NS_PCAPOPT_VERSION	1
#define NS_PCAPOPT_BLOCK	1
#define NS_PCAPOPT_EVENT	2
#define NS_PCAPOPT_LOSS		3
/* The longest payload: every record, device, counter name at its longest. */
#define NS_PCAPOPT_MAX		4096
/* The comment Wireshark's Lua reads: this prefix, then base64. */
#define NS_PCAPOPT_PREFIX	"netslice1:"

/*
 * The payload of block @ci (@path: its devices as ns_dev_path() names
 * them) into @out; its length.
 */
size_t ns_pcapopt_block(const struct ns_acc *acc, const struct ns_citem *ci,
			const char *path, uint8_t out[NS_PCAPOPT_MAX]);
size_t ns_pcapopt_event(const struct nsl_event_rec *ev,
			uint8_t out[NS_PCAPOPT_MAX]);
size_t ns_pcapopt_loss(const struct nsl_loss *l, uint8_t out[NS_PCAPOPT_MAX]);

/*
 * What a person reads in Wireshark: "tx write 4.890us tcp 0.390us ...
 * nic open | eth0/tx | RETRANS | cpu 0 seq 5", values as nsdump's.
 */
void ns_pcapopt_block_text(const struct ns_acc *acc, const struct ns_citem *ci,
			   const char *path, char *buf, size_t len);
void ns_pcapopt_event_text(const struct nsl_event_rec *ev, char *buf,
			   size_t len);
void ns_pcapopt_loss_text(const struct nsl_loss *l, char *buf, size_t len);

/* NS_PCAPOPT_PREFIX and @n bytes of @in in base64 (RFC 4648) into @buf. */
void ns_pcapopt_base64(const uint8_t *in, size_t n, char *buf, size_t len);

#endif /* _NS_PCAPOPT_H */
