/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump --export chrome-trace FILE: the capture in the Trace Event
 * Format (a JSON object with "traceEvents"), which Perfetto and
 * chrome://tracing open.
 *
 *   processes   1 the send path, 2 the receive path, 3 markers (MAGNeT
 *               event records, losses); metadata events name them
 *   threads     a track per CPU (the CPU a part's first record started
 *               on), and more for that CPU where packets overlap in time:
 *               slices of one thread must nest, and two packets in flight
 *               at once do not
 *   slices      each record a complete event ("X"), nested as nest.h
 *               lays them out; a block split into its send and receive
 *               parts (loopback, veth), each on its own path's process.
 *               A record's args name its device ("dev": "eth0/tx") and
 *               an outermost slice's the packet's path ("dev_path":
 *               "eth0.9/tx>eth0/tx"), as devname.h names them, where the
 *               block has devices (ABI 6); older blocks have neither
 *   arrows      flow events ("s", then "f" with "bp":"e") from a send
 *               part to the receive part of the same packet: within a
 *               block, and between a tx and an rx block of one TCP
 *               segment, matched by the segment's addresses, ports and
 *               sequence number (not by conn: that is the socket cookie
 *               of the block's own socket, the sender's on one side and
 *               the receiver's on the other)
 *   time        "ts" and "dur" in µs, to the ns, from the TSC at the
 *               file's clock reference (INFO: its TSC and wall clock read
 *               together), whose wall-clock time "otherData" gives: µs
 *               since the epoch would need 17 digits, more than a double
 *               holds to the ns
 *
 * Events are written as they come (memory does not grow with the trace
 * but for one word per track); metadata at the end.
 */
#ifndef _NS_CHROME_H
#define _NS_CHROME_H

#include <stddef.h>
#include "netslice.h"
#include "stage/pipeline.h"

/* Tracks one CPU may get before a part is left out (and counted). */
#define NS_CHROME_LANES		256
/* Send ends waiting for their receive end (or the other way round). */
#define NS_CHROME_PENDING	(1u << 16)

/*
 * A view writing @path ("-": stdout), as ns_html_open() (@live: devices
 * by name where they resolve).  NULL with @why set if the file cannot be
 * created or memory ran out.
 */
struct ns_sink *ns_chrome_open(const char *path, struct ns_pipeline *p,
			       const char *source, const struct nsl_info *info,
			       bool live, char *why, size_t len);

#endif /* _NS_CHROME_H */
