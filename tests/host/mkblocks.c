// SPDX-License-Identifier: GPL-2.0
/*
 * mkblocks: synthetic NetSlice data for tests (see gen.h for its values).
 *   mkblocks [-n blocks] [-l loss_every] [-o open_every] [-i invalid_every]
 *            [-e nevents] [-C] [-N] [-P] [-Q] [-f [-Z]] [-W netns]
 *            [-R [-K] | -D] [file]
 * Writes a trace file, or with -R the raw item stream /dev/ns would give
 * (an ABI 3 module's whole blocks; -K: an ABI 4 module's compact ones),
 * to @file or stdout; -C adds a CALIB record, -N an EVENTS record; -P
 * makes the blocks a ping-pong of two connections; -Q names the events
 * and the CPU with gen.h's GEN_NASTY_* strings; -f gives the blocks
 * gen.h's flows in turn (-Z: without addresses); -W the devices of gen.h's
 * paths, "ours" in namespace netns (ABI 6).  -D lists each block's
 * flow instead, a JSON object a line, as the blocks hold it.
 *
 *   mkblocks -F writes [-G reads] [-T] [-A] [-S] [-X loss_at] [-R] [file]
 *   mkblocks -V blocks [file]
 * MAGNeT's FTP example instead (gen.h): -F conn 0x2a's writes, -G conn
 * 0x2b's bursts, -T TSO, -A addresses on the socket events, -S a SYSINFO
 * first, -X a loss item after item loss_at.  -V: a capture that looks
 * like a real one instead (genviews.h), for the drawn views.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gen.h"
#include "genviews.h"

/* -D: block i's flow, from the block gen_block() makes. */
static void list_flow(const struct gen_opts *g, unsigned int i, FILE *f)
{
	unsigned char buf[sizeof(struct nsl_block)];
	struct nsl_block b;
	char s[INET6_ADDRSTRLEN] = "", d[INET6_ADDRSTRLEN] = "";
	static const unsigned char zero[16];

	gen_block(g, i, buf);
	memcpy(&b, buf, sizeof(b));
	if (b.family && memcmp(b.saddr, zero, 16))
		inet_ntop(b.family, b.saddr, s, sizeof(s));
	if (b.family && memcmp(b.daddr, zero, 16))
		inet_ntop(b.family, b.daddr, d, sizeof(d));
	fprintf(f, "{\"i\": %u, \"family\": %u, \"proto\": %u, \"saddr\": \"%s\", \"daddr\": \"%s\", \"sport\": %u, \"dport\": %u, \"dir\": \"%s\", \"ifindex\": %u, \"len\": %u, \"conn\": %llu}\n",
		i, b.family, b.proto, s, d, b.sport, b.dport,
		b.dir == NSL_DIR_RX ? "rx" : "tx", b.ifindex, b.len,
		(unsigned long long)b.conn);
}

int main(int argc, char **argv)
{
	struct gen_opts g = { .n = 10 };
	struct gen_magnet m = { 0 };
	int c, fd = 1, raw = 0, compact = 0, list = 0, views = -1;
	bool magnet = false;

	while ((c = getopt(argc, argv, "n:l:o:i:e:CNPQRKF:G:TASX:fZDV:W:")) != -1) {
		switch (c) {
		case 'n': g.n = atoi(optarg); break;
		case 'l': g.loss_every = atoi(optarg); break;
		case 'o': g.open_every = atoi(optarg); break;
		case 'i': g.invalid_every = atoi(optarg); break;
		case 'e': g.nevents = atoi(optarg); break;
		case 'C': g.calib = true; break;
		case 'N': g.named = true; break;
		case 'P': g.pingpong = true; break;
		case 'Q': g.nasty = true; break;
		case 'R': raw = 1; break;
		case 'K': compact = 1; break;
		case 'f': g.flows = true; break;
		case 'Z': g.no_addr = true; break;
		case 'D': list = 1; break;
		case 'F': m.writes = atoi(optarg); magnet = true; break;
		case 'G': m.reads = atoi(optarg); magnet = true; break;
		case 'T': m.tso = true; break;
		case 'A': m.addr = true; break;
		case 'S': m.sysinfo = true; break;
		case 'X': m.loss_at = atoi(optarg); break;
		case 'V': views = atoi(optarg); break;
		case 'W': g.dev_netns = strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: mkblocks [-n blocks] [-l loss_every] [-o open_every] [-i invalid_every] [-e nevents] [-C] [-N] [-P] [-Q] [-f [-Z]] [-W netns] [-R | -D] [file]\n       mkblocks -F writes [-G reads] [-T] [-A] [-S] [-X loss_at] [-R] [file]\n       mkblocks -V blocks [file]\n");
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
	if (views >= 0) {
		if (gen_views_file(views, fd)) {
			perror("mkblocks");
			return 1;
		}
		return 0;
	}
	if (list) {
		FILE *f = fdopen(fd, "w");

		for (unsigned int i = 0; f && i < g.n; i++)
			list_flow(&g, i, f);
		return !f || fclose(f) ? 1 : 0;
	}
	if (raw) {
		size_t len;
		unsigned char *p = magnet ? gen_magnet_stream(&m, &len) :
					    gen_stream(&g, &len);

		if (p && compact)
			len = gen_compact(p, len);
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
