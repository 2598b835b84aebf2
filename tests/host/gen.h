/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic NetSlice items for the tests and mkblocks.  Block i (from 0):
 * cpu i % 2, seq i / 2, tsc0 T0 + i * 3000, tx, len 1448, regions
 *   write  3000 * (i % 10 + 1) ticks   (1..10 us at 3 GHz)
 *   tcp    300 + 120                   (two records: 0.140 us)
 *   ip     600, link 1500, nic 30000   (0.2, 0.5, 10 us)
 * An OPEN nic record every open_every blocks, a loss item (lost 5) before
 * every loss_every-th block, counter deltas when nevents > 0.
 */
#ifndef _NS_GEN_H
#define _NS_GEN_H

#include <stddef.h>
#include <stdint.h>
#include "netslice.h"

#define GEN_TSC_KHZ	3000000u
#define GEN_T0		1000000000ull
#define GEN_LOST	5

struct gen_opts {
	unsigned int n;		/* blocks */
	unsigned int loss_every;	/* 0: none */
	unsigned int open_every;	/* 0: none */
	unsigned int nevents;
};

void gen_info(struct nsl_info *info);
/* Item i of the stream into @buf; returns its size, 0 past the end. */
size_t gen_block(const struct gen_opts *g, unsigned int i, void *buf);
size_t gen_loss(unsigned int i, void *buf);
/* The whole stream (raw ABI items) into malloc'd memory. */
unsigned char *gen_stream(const struct gen_opts *g, size_t *len);
/* A trace file; 0 or -1. */
int gen_file(const struct gen_opts *g, int fd);

#endif /* _NS_GEN_H */
