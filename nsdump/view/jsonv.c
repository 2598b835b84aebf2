// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "view/jsonv.h"
#include "view/utf8.h"

struct json_object *ns_json_str(const char *s)
{
	struct json_object *o;
	size_t len;
	char *fixed;

	if (!s)
		return NULL;	/* null */
	len = strlen(s);
	fixed = malloc(NS_UTF8_REPAIRED(len));
	if (!fixed)
		return NULL;
	o = json_object_new_string_len(fixed, ns_utf8_repair(s, fixed));
	free(fixed);
	return o;
}

struct json_object *ns_json_fixed(double v, int decimals)
{
	char text[64];

	if (!isfinite(v))
		return NULL;
	snprintf(text, sizeof(text), "%.*f", decimals, v);
	return json_object_new_double_s(v, text);
}

struct json_object *ns_json_names(const char *names)
{
	struct json_object *a = json_object_new_array();

	while (*names) {
		size_t n = strcspn(names, ",");

		json_object_array_add(a, json_object_new_string_len(names, n));
		names += n + (names[n] == ',');
	}
	return a;
}
