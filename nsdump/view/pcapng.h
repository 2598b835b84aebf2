/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump --export pcapng FILE: the capture as a pcapng file that
 * Wireshark, tshark, editcap and mergecap read.
 *
 *   section     one Section Header Block: nsdump's name and version, and
 *               a comment saying where the capture came from and how its
 *               values were corrected
 *   interfaces  an Interface Description Block, LINKTYPE_RAW (101), ns
 *               time stamps, for interface 0 "netslice" (event records,
 *               losses, blocks that name no device) and for every device
 *               the blocks name, written before the first packet that
 *               needs it; named as nsdump names devices (devname.h)
 *   packets     an Enhanced Packet Block per NetSlice block, on the
 *               interface of the first device it names: the IP and TCP
 *               or UDP headers the filter runs over (expr.h's made-up
 *               packet: flow, length, TCP sequence), the block's length
 *               as the packet's, its time stamp the NSI's TSC on the
 *               trace's wall clock (clock.h), the direction in
 *               epb_flags.  MAGNeT event records and loss markers are
 *               packets of their own on interface 0: an event record the
 *               made-up packet of its connection where its flow is known,
 *               else (and a loss) a bare IPv4 header of protocol 253
 *               (RFC 3692's experiment number), zero addresses
 *   latencies   each packet carries its item twice: a comment a person
 *               reads ("tx write 4.890us tcp 0.390us ...") and the
 *               NetSlice payload (pcapopt.h) as a custom option, code 2989
 *               (binary, copyable), Private Enterprise Number 32473
 *               (IANA's example PEN, RFC 5612); and the same payload again
 *               base64 in a second comment ("netslice1:..."), which
 *               Wireshark's Lua can read where it cannot read the option
 *               (contrib/wireshark/netslice.lua)
 *
 * Write errors (a full disk) stop the capture and are told at the end:
 * exit status 1, nothing dropped unsaid.
 */
#ifndef _NS_PCAPNG_H
#define _NS_PCAPNG_H

#include <stddef.h>
#include "netslice.h"
#include "stage/pipeline.h"

#define NS_PCAPNG_PEN		32473	/* IANA: for documentation, RFC 5612 */
#define NS_PCAPNG_OPT_CUSTOM	2989	/* binary, may be copied */

/*
 * A view writing @path ("-": stdout), as ns_chrome_open().  NULL with
 * @why set if the file cannot be created or memory ran out.
 */
struct ns_sink *ns_pcapng_open(const char *path, struct ns_pipeline *p,
			       const char *source, const struct nsl_info *info,
			       bool live, char *why, size_t len);

#endif /* _NS_PCAPNG_H */
