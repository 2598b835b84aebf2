// SPDX-License-Identifier: GPL-2.0
/*
 * Not glibc's iconv() or mbrtowc(): both take code points above U+10FFFF
 * (F4 90 80 80), which RFC 3629 forbids and JSON parsers refuse; and
 * json-c writes a string's bytes as given.  Unicode's Table 3-7 is
 * short enough to follow here.
 */
#include <stdint.h>
#include <string.h>
#include "view/utf8.h"

/* The well-formed sequences a lead byte starts: length, second byte. */
static int lead(uint8_t b, uint8_t *lo, uint8_t *hi)
{
	*lo = 0x80;
	*hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef) {
		if (b == 0xe0)
			*lo = 0xa0;	/* no overlong forms */
		else if (b == 0xed)
			*hi = 0x9f;	/* no surrogates */
		return 3;
	}
	if (b >= 0xf0 && b <= 0xf4) {
		if (b == 0xf0)
			*lo = 0x90;
		else if (b == 0xf4)
			*hi = 0x8f;	/* nothing above U+10FFFF */
		return 4;
	}
	return 0;
}

/* Bytes of the well-formed prefix of @p (its whole length if complete). */
static size_t valid_prefix(const uint8_t *p, int n, uint8_t lo, uint8_t hi)
{
	size_t j = 1;

	if (!(p[1] >= lo && p[1] <= hi))
		return 1;
	for (j = 2; j < (size_t)n; j++)
		if (p[j] < 0x80 || p[j] > 0xbf)
			break;
	return j;
}

size_t ns_utf8_repair(const char *in, char *out)
{
	const uint8_t *p = (const uint8_t *)in;
	size_t o = 0;

	while (*p) {
		uint8_t lo, hi;
		int n = *p < 0x80 ? 1 : lead(*p, &lo, &hi);
		size_t ok = n > 1 ? valid_prefix(p, n, lo, hi) : (size_t)n;

		if (n && ok == (size_t)n) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
			continue;
		}
		memcpy(out + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
		o += 3;
		p += ok ? ok : 1;
	}
	out[o] = 0;
	return o;
}
