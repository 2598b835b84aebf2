/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One term of a compound TAP check, named when it is the one that failed:
 *
 *	tap_ok(TAP_IS(a) && TAP_IS(b), "...");
 *
 * prints "# false: b (file.c:line)" before the "not ok", as
 * kselftest_harness.h's ASSERT_* name what they compared.  && stops at the
 * first false term, so that is the only one named.  A harness whose
 * output lines must not interleave (several threads) defines TAP_SAY, a
 * printf-like call that ends the line, before including this.
 */
#ifndef _NS_TAPTERM_H
#define _NS_TAPTERM_H

#include <stdbool.h>
#include <stdio.h>

#ifndef TAP_SAY
#define TAP_SAY(fmt, ...) printf(fmt "\n", __VA_ARGS__)
#endif

#define TAP_IS(e) ({							\
	bool v_ = (e);							\
	if (!v_)							\
		TAP_SAY("# false: %s (%s:%d)", #e, __FILE__, __LINE__);	\
	v_;								\
})

#endif /* _NS_TAPTERM_H */
