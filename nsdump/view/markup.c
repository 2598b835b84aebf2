// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "view/markup.h"
#include "view/utf8.h"

static void escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			/* C0 controls are not allowed in HTML text: U+FFFD */
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputs("\xef\xbf\xbd", f);
			else
				fputc(*s, f);
		}
	}
}

void ns_ml_text(FILE *f, const char *s)
{
	char small[256], *fixed = small;
	size_t len = strlen(s);

	if (NS_UTF8_REPAIRED(len) > sizeof(small))
		fixed = malloc(NS_UTF8_REPAIRED(len));
	if (!fixed) {
		fputs("\xef\xbf\xbd", f);	/* no memory: not the raw bytes */
		return;
	}
	ns_utf8_repair(s, fixed);
	escaped(f, fixed);
	if (fixed != small)
		free(fixed);
}

void ns_ml_printf(FILE *f, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ns_ml_text(f, buf);
}

/* "12.500" to "12.5", "3.000" to "3" */
static void trim_zeros(char *buf)
{
	char *dot = strchr(buf, '.'), *end;

	if (!dot || strchr(buf, 'e'))
		return;
	end = buf + strlen(buf) - 1;
	while (end > dot && *end == '0')
		*end-- = 0;
	if (end == dot)
		*end = 0;
}

void ns_num_text(double v, char *buf, size_t len)
{
	double a = fabs(v);
	int decimals = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;

	if (a != 0 && a < 0.001)
		snprintf(buf, len, "%.2g", v);
	else
		snprintf(buf, len, "%.*f", decimals, v);
	trim_zeros(buf);
	if (!strcmp(buf, "-0"))
		snprintf(buf, len, "0");
}

FILE *ns_view_open(const char *path, char *why, size_t len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "we") : stdout;

	if (!f)
		snprintf(why, len, "%s: %s", path, strerror(errno));
	return f;
}

int ns_view_close(FILE *f, const char *path, char *why, size_t len)
{
	int err = fflush(f) == EOF ? errno : ferror(f) ? EIO : 0;

	if (f != stdout && fclose(f) && !err)
		err = errno;
	if (!err || err == EPIPE)
		return 0;
	snprintf(why, len, "%s: %s", path, strerror(err));
	return -1;
}
