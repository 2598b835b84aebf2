/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What nsdump says besides its output: errors (nsdump exits non-zero),
 * which under --json are {"error": "..."} lines as bpftool's -j makes
 * them, and notes (a warning: the capture goes on), always text on
 * stderr as tcpdump's.  Both start "nsdump: " as text.
 */
#ifndef _NS_MSG_H
#define _NS_MSG_H

#include <stdio.h>

/*
 * Under --json, where errors go: the JSON stream (stdout, or stderr when
 * stdout carries a file).  NULL: as text on stderr.
 */
void ns_msg_json(FILE *stream);

__attribute__((format(printf, 1, 2)))
void ns_error(const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void ns_note(const char *fmt, ...);

#endif /* _NS_MSG_H */
