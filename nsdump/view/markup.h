/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing HTML and SVG: text from a trace (event and CPU names, file
 * names) is escaped, after being made valid UTF-8, wherever it goes,
 * element content or attribute value; numbers go out in a short form.
 */
#ifndef _NS_MARKUP_H
#define _NS_MARKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The file a view writes, @path or stdout for "-": NULL with @why set.
 * Closed by ns_view_close(): 0, or -1 with @why set if anything failed
 * to reach it (a reader gone from a pipe is no error, as for the text).
 */
FILE *ns_view_open(const char *path, char *why, size_t len);
int ns_view_close(FILE *f, const char *path, char *why, size_t len);

/* @s, valid UTF-8, with & < > " ' as character references. */
void ns_ml_text(FILE *f, const char *s);
/* printf, then ns_ml_text() of the result (at most 1023 bytes). */
__attribute__((format(printf, 2, 3)))
void ns_ml_printf(FILE *f, const char *fmt, ...);

/*
 * A value for an axis label or a table: "0", "0.125", "2.5", "12.3",
 * "4500": about four significant digits, trailing zeros dropped.
 */
void ns_num_text(double v, char *buf, size_t len);

#endif /* _NS_MARKUP_H */
