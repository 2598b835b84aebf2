// SPDX-License-Identifier: GPL-2.0
/*
 * mkblocks: synthetic NetSlice data for tests (see gen.h for its values).
 *   mkblocks [-n blocks] [-l loss_every] [-o open_every] [-i invalid_every]
 *            [-e nevents] [-C] [-N] [-P] [-R] [file]
 * Writes a trace file, or with -R the raw item stream /dev/ns would give,
 * to @file or stdout; -C adds a CALIB record, -N an EVENTS record; -P
 * makes the blocks a ping-pong of two connections.
 *
 *   mkblocks -F writes [-G reads] [-T] [-A] [-S] [-X loss_at] [-R] [file]
 * MAGNeT's FTP example instead (gen.h): -F conn 0x2a's writes, -G conn
 * 0x2b's bursts, -T TSO, -A addresses on the socket events, -S a SYSINFO
 * first, -X a loss item after item loss_at.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gen.h"

int main(int argc, char **argv)
{
	struct gen_opts g = { .n = 10 };
	struct gen_magnet m = { 0 };
	int c, fd = 1, raw = 0;
	bool magnet = false;

	while ((c = getopt(argc, argv, "n:l:o:i:e:CNPRF:G:TASX:")) != -1) {
		switch (c) {
		case 'n': g.n = atoi(optarg); break;
		case 'l': g.loss_every = atoi(optarg); break;
		case 'o': g.open_every = atoi(optarg); break;
		case 'i': g.invalid_every = atoi(optarg); break;
		case 'e': g.nevents = atoi(optarg); break;
		case 'C': g.calib = true; break;
		case 'N': g.named = true; break;
		case 'P': g.pingpong = true; break;
		case 'R': raw = 1; break;
		case 'F': m.writes = atoi(optarg); magnet = true; break;
		case 'G': m.reads = atoi(optarg); magnet = true; break;
		case 'T': m.tso = true; break;
		case 'A': m.addr = true; break;
		case 'S': m.sysinfo = true; break;
		case 'X': m.loss_at = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: mkblocks [-n blocks] [-l loss_every] [-o open_every] [-i invalid_every] [-e nevents] [-C] [-N] [-P] [-R] [file]\n       mkblocks -F writes [-G reads] [-T] [-A] [-S] [-X loss_at] [-R] [file]\n");
			return 2;
		}
	}
	if (g.nevents > NSL_MAX_EVENTS) {
		fprintf(stderr, "mkblocks: -e at most %d\n", NSL_MAX_EVENTS);
		return 2;
	}
	if (optind < argc) {
		fd = open(argv[optind], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			perror(argv[optind]);
			return 1;
		}
	}
	if (raw) {
		size_t len;
		unsigned char *p = magnet ? gen_magnet_stream(&m, &len) :
					    gen_stream(&g, &len);

		if (!p || write(fd, p, len) != (ssize_t)len) {
			perror("mkblocks");
			return 1;
		}
		free(p);
		return close(fd) ? 1 : 0;
	}
	if (magnet ? gen_magnet_file(&m, fd) : gen_file(&g, fd)) {
		perror("mkblocks");
		return 1;
	}
	return 0;
}
