/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic capture that looks like a real one, for the drawn views
 * (nsdump --html, --export chrome-trace) and their tests: mkblocks -V n.
 * gen_info()'s INFO (3 GHz, 2 CPUs), EVENTS cycles and instructions,
 * gen_calib()'s CALIB, a SYSINFO, then n blocks, block i of kind i % 8,
 * NSI at GEN_T0 + i * 5 us:
 *
 *   0-3  tcp 10.0.0.1.43210 > 10.0.0.2.5201 sent over a NIC, cpu 0:
 *        write [tcp (copy), sndq (GAP), tcp (header), ip, link [qdisc]],
 *        then nic; seq 1000 + 1448 k for the k-th of them
 *   4    its ACK received, cpu 1: rx-nic, rx-link, rx-ip, rx-tcp
 *        [sk-backlog]
 *   5    tcp 127.0.0.1.50000 > 127.0.0.1.7000 over loopback: the send
 *        part on cpu 0 (write [tcp, ip, link], nic), the receive part on
 *        cpu 1 (rx-link [backlog], rx-ip, rx-tcp, queue, copy), flags
 *        LOOPBACK and RX
 *   6    udp 10.0.0.1.5353 > 10.0.0.3.5353, cpu 0: write [udp (two
 *        intervals, MERGED), ip, link], nic
 *   7    the receive side of the segment sent by block i - 7 (same
 *        addresses, ports and sequence), cpu 1: rx-nic, rx-link, rx-ip,
 *        rx-tcp, as if the capture saw both ends
 *
 * Durations vary (a fixed pseudo-random sequence) with a tail: every
 * 50th block waits 20 times longer in sndq or the queue.  Block 10's nic
 * is OPEN; block 20 is a retransmission.  A loss item (3 lost) follows
 * block 150.  Each kind-0 block has MAGNeT's TCP_SEND, IP_SEND and
 * DEV_SEND event records and every fourth a SOCK_SEND of 4 segments.
 * Counter deltas: cycles = ticks, instructions = ticks * the region's
 * IPC (GENV_IPC).
 *
 * Block 0 is fixed, in ticks from NSI (start, length, depth):
 *   write 0 15000 0, tcp 150 1200 1, sndq 1500 6000 1 (GAP),
 *   tcp 7650 600 1, ip 8400 900 1, link 9450 5100 1, qdisc 9900 4200 2,
 *   nic 15300 24000 0
 */
#ifndef _NS_GENVIEWS_H
#define _NS_GENVIEWS_H

#define GENV_SPACING	15000ull	/* ticks between NSIs: 5 us */
#define GENV_LOSS_AFTER	150
#define GENV_LOST	3

/* A trace file of @n blocks; 0 or -1. */
int gen_views_file(unsigned int n, int fd);

#endif /* _NS_GENVIEWS_H */
