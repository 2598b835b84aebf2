// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include "msg.h"
#include "view/json.h"

static FILE *json_errors;

void ns_msg_json(FILE *stream)
{
	json_errors = stream;
}

void ns_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a stream that failed already cannot say why: stderr does */
	if (json_errors && !ferror(json_errors)) {
		ns_json_error(json_errors, msg);
		if (!fflush(json_errors))
			return;
	}
	fprintf(stderr, "nsdump: %s\n", msg);
}

void ns_note(const char *fmt, ...)
{
	va_list ap;

	fputs("nsdump: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
