/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nsdump's version: this line is the one place it is written.  --version
 * prints it; every trace file nsdump writes carries it (a WRITER record).
 */
#ifndef _NS_VERSION_H
#define _NS_VERSION_H

#include <stdbool.h>
#include "source/file.h"

#define NSDUMP_VERSION	"0.2.0"

/*
 * A trace file record that file.h does not list: nsdump's name and
 * version as "program=nsdump\nversion=0.2.0\n", NUL-padded to 8 bytes.
 * Readers skip kinds they do not know, by length.  The kind is far from
 * file.h's, which grow from 1.
 */
#define NSF_WRITER	64u

/* What this build is, for --version. */
struct ns_build {
	const char *version;
	unsigned int abi;		/* NSL_ABI_VERSION */
	unsigned int file_format;	/* NSF_VERSION */
	bool libpfm4;
	const char *json_c;
	const char *zlib;
};

void ns_build_info(struct ns_build *b);

/*
 * The WRITER record, after nsf_writer_open() and before any item; 0, or
 * -1 with w->err set.
 */
int ns_write_writer_record(struct nsf_writer *w);

#endif /* _NS_VERSION_H */
