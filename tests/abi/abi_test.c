/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ABI test for include/netslice.h: compiled as C90 (-pedantic -Werror) for
 * -m32 and -m64.  Every struct size, every field offset and every ioctl
 * number is checked at compile time against the one layout both ABIs must
 * share; nothing is executed (see the end of the file).
 */
#include <stddef.h>

#include "netslice.h"

#define SZ(type)	sizeof(struct type)
#define OFF(type, f)	offsetof(struct type, f)
#define FSZ(type, f)	sizeof(((struct type *)0)->f)

/* X(expression, value it must have on every ABI) */
#define ABI_CHECKS(X) \
	X(NSL_ABI_VERSION, 10) \
	X(NSL_MAX_RECORDS, 16) \
	X(NSL_MAX_EVENTS, 4) \
	X(NSL_R_MAX, 18) \
	X(NSL_ITEM_BLOCK, 1) \
	X(NSL_ITEM_LOSS, 2) \
	X(NSL_CB_LOG, 0x40) \
	X(NSL_LOG_MAX, 64) \
	X(NSL_LOG_START, 1) \
	X(NSL_LOG_STOP, 2) \
	X(NSL_LOG_SEAL, 3) \
	X(NSL_LOG_DEV, 4) \
	X(NSL_LOG_GAP, 5) \
	X(NSL_LOG_SHARE, 6) \
	X(NSL_LOG_NEXT, 7) \
	X(NSL_LOG_DEV_START, 8) \
	X(NSL_LOG_NEXT_MAX, 16) \
	\
	X(SZ(nsl_item_hdr), 8) \
	X(OFF(nsl_item_hdr, kind), 0) \
	X(OFF(nsl_item_hdr, size), 2) \
	X(OFF(nsl_item_hdr, cpu), 4) \
	\
	X(SZ(nsl_record), 56) \
	X(OFF(nsl_record, region), 0) \
	X(OFF(nsl_record, depth), 1) \
	X(OFF(nsl_record, flags), 2) \
	X(OFF(nsl_record, nmerged), 4) \
	X(OFF(nsl_record, cpu), 6) \
	X(OFF(nsl_record, start), 8) \
	X(OFF(nsl_record, ticks), 16) \
	X(OFF(nsl_record, count), 24) \
	X(FSZ(nsl_record, count), 32) \
	\
	X(NSL_ITEM_CBLOCK, 5) \
	X(NSL_ITEM_PAD, 6) \
	X(NSL_RF_EXT, 0x8000) \
	X(NSL_RF_HCPU, 0x4000) \
	X(NSL_RING_MAGIC, 0x4e534c52) \
	X(SZ(nsl_cblock), 64) \
	X(OFF(nsl_cblock, seq), 8) \
	X(OFF(nsl_cblock, tsc0), 16) \
	X(OFF(nsl_cblock, conn), 24) \
	X(OFF(nsl_cblock, flags), 32) \
	X(OFF(nsl_cblock, len), 36) \
	X(OFF(nsl_cblock, ifindex), 40) \
	X(OFF(nsl_cblock, tcp_seq), 44) \
	X(OFF(nsl_cblock, gso_segs), 48) \
	X(OFF(nsl_cblock, nhlen), 50) \
	X(OFF(nsl_cblock, sport), 52) \
	X(OFF(nsl_cblock, dport), 54) \
	X(OFF(nsl_cblock, rcpu), 56) \
	X(OFF(nsl_cblock, proto), 58) \
	X(OFF(nsl_cblock, thlen), 59) \
	X(OFF(nsl_cblock, family), 60) \
	X(OFF(nsl_cblock, nrec), 61) \
	X(OFF(nsl_cblock, nevents), 62) \
	X(OFF(nsl_cblock, cflags), 63) \
	X(SZ(nsl_crec), 12) \
	X(OFF(nsl_crec, region), 0) \
	X(OFF(nsl_crec, dm), 1) \
	X(OFF(nsl_crec, flags), 2) \
	X(OFF(nsl_crec, start), 4) \
	X(OFF(nsl_crec, ticks), 8) \
	X(SZ(nsl_crec_ext), 12) \
	X(OFF(nsl_crec_ext, nmerged), 0) \
	X(OFF(nsl_crec_ext, cpu), 2) \
	X(OFF(nsl_crec_ext, start_hi), 4) \
	X(OFF(nsl_crec_ext, ticks_hi), 8) \
	X(SZ(nsl_cdev), 12) \
	X(OFF(nsl_cdev, ifindex), 0) \
	X(OFF(nsl_cdev, netns), 4) \
	X(OFF(nsl_cdev, first), 8) \
	X(OFF(nsl_cdev, dir), 9) \
	X(OFF(nsl_cdev, pad), 10) \
	X(NSL_CB_NDEV_SHIFT, 3) \
	X(NSL_CB_KNOWN, 0x7f) \
	X(NSL_CBLOCK_MAX, 1064) \
	\
	X(NSL_MAX_DEVS, 6) \
	X(SZ(nsl_dev), 16) \
	X(OFF(nsl_dev, ifindex), 0) \
	X(OFF(nsl_dev, netns), 4) \
	X(OFF(nsl_dev, first), 8) \
	X(OFF(nsl_dev, dir), 9) \
	X(OFF(nsl_dev, pad), 10) \
	X(OFF(nsl_dev, pad2), 12) \
	\
	X(SZ(nsl_block), 1104) \
	X(OFF(nsl_block, hdr), 0) \
	X(OFF(nsl_block, seq), 8) \
	X(OFF(nsl_block, tsc0), 16) \
	X(OFF(nsl_block, conn), 24) \
	X(OFF(nsl_block, flags), 32) \
	X(OFF(nsl_block, len), 36) \
	X(OFF(nsl_block, ifindex), 40) \
	X(OFF(nsl_block, gso_segs), 44) \
	X(OFF(nsl_block, proto), 46) \
	X(OFF(nsl_block, nhlen), 48) \
	X(OFF(nsl_block, thlen), 50) \
	X(OFF(nsl_block, dir), 52) \
	X(OFF(nsl_block, nrec), 53) \
	X(OFF(nsl_block, nevents), 54) \
	X(OFF(nsl_block, mode), 55) \
	X(OFF(nsl_block, tcp_seq), 56) \
	X(OFF(nsl_block, family), 60) \
	X(OFF(nsl_block, pad), 62) \
	X(OFF(nsl_block, sport), 64) \
	X(OFF(nsl_block, dport), 66) \
	X(OFF(nsl_block, pad2), 68) \
	X(OFF(nsl_block, saddr), 72) \
	X(OFF(nsl_block, daddr), 88) \
	X(OFF(nsl_block, ndev), 104) \
	X(OFF(nsl_block, pad3), 105) \
	X(OFF(nsl_block, dev), 112) \
	X(OFF(nsl_block, rec), 208) \
	X(NSL_BLOCK_SIZE(0), 208) \
	X(NSL_BLOCK_SIZE(1), 264) \
	X(NSL_BLOCK_SIZE(NSL_MAX_RECORDS), SZ(nsl_block)) \
	\
	X(SZ(nsl_loss), 32) \
	X(OFF(nsl_loss, hdr), 0) \
	X(OFF(nsl_loss, lost), 8) \
	X(OFF(nsl_loss, first_seq), 16) \
	X(OFF(nsl_loss, tsc), 24) \
	X(SZ(nsl_ring_ctl), 128) \
	X(OFF(nsl_ring_ctl, magic), 0) \
	X(OFF(nsl_ring_ctl, cpu), 4) \
	X(OFF(nsl_ring_ctl, size), 8) \
	X(OFF(nsl_ring_ctl, head), 16) \
	X(OFF(nsl_ring_ctl, offered), 24) \
	X(OFF(nsl_ring_ctl, dropped), 32) \
	X(OFF(nsl_ring_ctl, lost), 40) \
	X(OFF(nsl_ring_ctl, watermark), 48) \
	X(OFF(nsl_ring_ctl, tail), 64) \
	\
	X(NSL_ITEM_EVENT, 3) \
	X(NSL_ITEM_SYSINFO, 4) \
	X(NSL_EV_UDP_SEND, 9) \
	X(NSL_EV_UDP_RECV, 10) \
	X(NSL_EV_MAX, 11) \
	X(SZ(nsl_tcp_state), 56) \
	X(OFF(nsl_tcp_state, snd_wnd), 0) \
	X(OFF(nsl_tcp_state, mss), 44) \
	X(OFF(nsl_tcp_state, sport), 48) \
	X(OFF(nsl_tcp_state, dport), 50) \
	X(OFF(nsl_tcp_state, state), 52) \
	X(OFF(nsl_tcp_state, ca_state), 53) \
	X(OFF(nsl_tcp_state, tcp_flags), 54) \
	X(SZ(nsl_ip_fields), 16) \
	X(OFF(nsl_ip_fields, id), 4) \
	X(OFF(nsl_ip_fields, frag_off), 6) \
	X(OFF(nsl_ip_fields, saddr), 8) \
	X(OFF(nsl_ip_fields, daddr), 12) \
	X(SZ(nsl_event_rec), 152) \
	X(OFF(nsl_event_rec, saddr6), 120) \
	X(OFF(nsl_event_rec, daddr6), 136) \
	X(NSL_EVF_ADDR6, 0x10) \
	X(OFF(nsl_event_rec, seq), OFF(nsl_block, seq)) \
	X(OFF(nsl_event_rec, tsc), 16) \
	X(OFF(nsl_event_rec, conn), 24) \
	X(OFF(nsl_event_rec, type), 32) \
	X(OFF(nsl_event_rec, bytes), 36) \
	X(OFF(nsl_event_rec, flags), 40) \
	X(OFF(nsl_event_rec, pad), 44) \
	X(OFF(nsl_event_rec, tcp), 48) \
	X(OFF(nsl_event_rec, ip), 104) \
	X(SZ(nsl_event_rec) <= SZ(nsl_block), 1) \
	X(SZ(nsl_sysinfo), 40) \
	X(OFF(nsl_sysinfo, abi_version), 8) \
	X(OFF(nsl_sysinfo, byte_order), 12) \
	X(OFF(nsl_sysinfo, tsc_khz), 16) \
	X(OFF(nsl_sysinfo, ncpus), 20) \
	X(OFF(nsl_sysinfo, ref_tsc), 24) \
	X(OFF(nsl_sysinfo, ref_realtime_ns), 32) \
	X(SZ(nsl_record_opts), 8) \
	X(OFF(nsl_record_opts, pad), 4) \
	\
	X(SZ(nsl_rcvbuf), 16) \
	X(OFF(nsl_rcvbuf, bytes), 0) \
	X(OFF(nsl_rcvbuf, flags), 8) \
	X(OFF(nsl_rcvbuf, pad), 12) \
	\
	X(SZ(nsl_state), 8) \
	X(OFF(nsl_state, state), 0) \
	X(OFF(nsl_state, flags), 4) \
	\
	X(SZ(nsl_event), 32) \
	X(OFF(nsl_event, type), 0) \
	X(OFF(nsl_event, flags), 4) \
	X(OFF(nsl_event, config), 8) \
	X(OFF(nsl_event, config1), 16) \
	X(OFF(nsl_event, config2), 24) \
	\
	X(SZ(nsl_events), 136) \
	X(OFF(nsl_events, nevents), 0) \
	X(OFF(nsl_events, flags), 4) \
	X(OFF(nsl_events, ev), 8) \
	\
	X(SZ(nsl_mode), 8) \
	X(OFF(nsl_mode, mode), 0) \
	X(OFF(nsl_mode, flags), 4) \
	\
	X(SZ(nsl_count), 8) \
	X(OFF(nsl_count, count), 0) \
	\
	X(SZ(nsl_info), 72) \
	X(OFF(nsl_info, abi_version), 0) \
	X(OFF(nsl_info, tsc_khz), 4) \
	X(OFF(nsl_info, block_size), 8) \
	X(OFF(nsl_info, ncpus), 12) \
	X(OFF(nsl_info, max_records), 16) \
	X(OFF(nsl_info, max_events), 20) \
	X(OFF(nsl_info, ring_bytes), 24) \
	X(OFF(nsl_info, ring_max), 32) \
	X(OFF(nsl_info, ref_tsc), 40) \
	X(OFF(nsl_info, ref_realtime_ns), 48) \
	X(OFF(nsl_info, emitted), 56) \
	X(OFF(nsl_info, nomem), 64) \
	\
	X(NSL_C_MAX, 6) \
	X(SZ(nsl_cost), 56) \
	X(OFF(nsl_cost, ticks), 0) \
	X(OFF(nsl_cost, min), 8) \
	X(OFF(nsl_cost, cv_ppm), 16) \
	X(OFF(nsl_cost, samples), 20) \
	X(OFF(nsl_cost, count), 24) \
	\
	X(SZ(nsl_calib), 352) \
	X(OFF(nsl_calib, cpu), 0) \
	X(OFF(nsl_calib, reps), 4) \
	X(OFF(nsl_calib, flags), 8) \
	X(OFF(nsl_calib, nevents), 12) \
	X(OFF(nsl_calib, cost), 16) \
	\
	X(NSIOCSRCVBUF, 0x4010B901UL) \
	X(NSIOCSSTATE, 0x4008B902UL) \
	X(NSIOCSEVENT, 0x4088B903UL) \
	X(NSIOCSEMODE, 0x4008B904UL) \
	X(NSIOCGPACKETS, 0x8008B905UL) \
	X(NSIOCGDROPS, 0x8008B906UL) \
	X(NSIOCGINFO, 0x8048B907UL) \
	X(NSIOCGCALIB, 0xC160B908UL) \
	X(NSIOCSRECORDS, 0x4008B909UL) \
	\
	X(SZ(nsl_filter), 16) \
	X(OFF(nsl_filter, len), 0) \
	X(OFF(nsl_filter, flags), 4) \
	X(OFF(nsl_filter, insns), 8) \
	X(NSL_FILTER_FLOW, 1) \
	X(NSIOCSFILTER, 0x4010B90AUL) \
	X(NSIOCGFILTERED, 0x8008B90BUL) \
	X(SZ(nsl_sample), 24) \
	X(OFF(nsl_sample, rate), 0) \
	X(OFF(nsl_sample, flags), 4) \
	X(OFF(nsl_sample, taken), 8) \
	X(OFF(nsl_sample, skipped), 16) \
	X(NSL_SAMPLE_FLOWS, 1) \
	X(NSL_SAMPLE_RATE_MAX, 0x1000000) \
	X(NSIOCSSAMPLE, 0x4018B90CUL) \
	X(NSL_AGG_BUCKETS, 256) \
	X(NSL_AGG_GROUPS, 16) \
	X(SZ(nsl_agg), 16) \
	X(OFF(nsl_agg, region), 4) \
	X(OFF(nsl_agg, threshold_ns), 8) \
	X(SZ(nsl_agg_head), 144) \
	X(OFF(nsl_agg_head, load_id), 8) \
	X(OFF(nsl_agg_head, tsc_khz), 24) \
	X(OFF(nsl_agg_head, nhist), 28) \
	X(OFF(nsl_agg_head, conf), 32) \
	X(OFF(nsl_agg_head, tau_o), 48) \
	X(OFF(nsl_agg_head, blocks), 64) \
	X(OFF(nsl_agg_head, other), 112) \
	X(SZ(nsl_agg_hist), 1048) \
	X(OFF(nsl_agg_hist, group), 6) \
	X(OFF(nsl_agg_hist, ifindex), 8) \
	X(OFF(nsl_agg_hist, netns), 12) \
	X(OFF(nsl_agg_hist, sum_ticks), 16) \
	X(OFF(nsl_agg_hist, bucket), 24) \
	X(SZ(nsl_agg_read), 16) \
	X(NSIOCSAGG, 0x4010B90EUL) \
	X(NSIOCGAGG, 0xC010B90FUL) \
	X(NSIOCGSAMPLE, 0x8018B90DUL)

/*
 * Two builds of this file, neither of which is ever run (a host that
 * cannot execute 32-bit binaries must still check the -m32 ABI):
 *
 *   cc -c            every row checked by the compiler against its value;
 *                    a wrong row stops the build (C90 has no
 *                    _Static_assert: a negative array size does it).
 *   cc -S -DABI_DUMP every row's value and the value it must have, as the
 *                    kernel's asm-offsets does: immediates in the assembly,
 *                    which run.sh reads and compares between -m32 and -m64.
 *                    No static checks here, so a wrong row is reported by
 *                    name rather than only as a compiler error.
 */
#ifndef ABI_DUMP
#define STATIC_CHECK(expr, want) \
	(void)sizeof(char[((unsigned long)(expr) == (unsigned long)(want)) ? 1 : -1]);

void abi_static_checks(void);
void abi_static_checks(void)
{
	ABI_CHECKS(STATIC_CHECK)
}
#else
/*
 * "@ABI <expr> = <got_hi> <got_lo> <want_hi> <want_lo>": 16-bit halves,
 * because the compiler prints a 32-bit immediate with its sign.
 */
#define HI(v)	(((unsigned long)(v) >> 16) & 0xffffUL)
#define LO(v)	((unsigned long)(v) & 0xffffUL)
#define DUMP_ROW(expr, want) \
	__asm__ __volatile__("\n@ABI " #expr " = %c0 %c1 %c2 %c3\n" \
			     : : "i" (HI(expr)), "i" (LO(expr)), \
			       "i" (HI(want)), "i" (LO(want)));

void abi_dump(void);
void abi_dump(void)
{
	ABI_CHECKS(DUMP_ROW)
}
#endif
