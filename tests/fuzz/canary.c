// SPDX-License-Identifier: GPL-2.0
/*
 * A target with a planted bug, for the replay's own test: an input that
 * starts with "overflow" is read one byte past its end.  Replaying it
 * must fail, or the replay could not catch a real crash either.
 */
#include <string.h>
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile uint8_t past = 0;

	if (size >= 8 && !memcmp(data, "overflow", 8))
		past = data[size];
	(void)past;
	return 0;
}
