/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text from outside (a trace file's event and CPU names, paths, libpfm4's
 * descriptions) made valid UTF-8 before it goes into JSON.
 */
#ifndef _NS_UTF8_H
#define _NS_UTF8_H

#include <stddef.h>

/* Bytes ns_utf8_repair() may write for @len bytes in, NUL included. */
#define NS_UTF8_REPAIRED(len)	(3 * (len) + 1)

/*
 * @in as valid UTF-8 (RFC 3629) into @out, NUL-terminated: each maximal
 * ill-formed subpart (Unicode 15, section 3.9) becomes one U+FFFD, as
 * Python's and most decoders' "replace" do.  @out must hold
 * NS_UTF8_REPAIRED(strlen(in)) bytes.  Returns the length written.
 */
size_t ns_utf8_repair(const char *in, char *out);

#endif /* _NS_UTF8_H */
