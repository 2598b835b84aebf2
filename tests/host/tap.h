/* SPDX-License-Identifier: GPL-2.0 */
/* tests/tap.h, and the host tests' comparisons of values. */
#ifndef _NS_TAP_H
#define _NS_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "../tap.h"

/* Exact unsigned equality, naming both values on failure. */
#define TAP_EQ(got, want, ...) ({					\
	unsigned long long g_ = (got), w_ = (want);			\
	if (g_ != w_)							\
		printf("# got %llu, want %llu\n", g_, w_);		\
	tap_ok(g_ == w_, __VA_ARGS__);					\
})

/* Doubles agreeing to 1e-9 relative (hand-computed decimals). */
#define TAP_NEAR(got, want, ...) ({					\
	double g_ = (got), w_ = (want);					\
	bool ok_ = fabs(g_ - w_) <= 1e-9 * (fabs(w_) > 1 ? fabs(w_) : 1); \
	if (!ok_)							\
		printf("# got %.12g, want %.12g\n", g_, w_);		\
	tap_ok(ok_, __VA_ARGS__);					\
})

#endif /* _NS_TAP_H */
