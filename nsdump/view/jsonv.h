/* SPDX-License-Identifier: GPL-2.0 */
/*
 * JSON values as nsdump writes them, for every JSON it writes (json.c's
 * lines, chrome.c's trace): strings made valid UTF-8 first (json-c
 * writes a string's bytes as given), numbers in the text of a fixed
 * number of decimals.
 */
#ifndef _NS_JSONV_H
#define _NS_JSONV_H

#include <json-c/json.h>

/* NULL (JSON null) for NULL or no memory. */
struct json_object *ns_json_str(const char *s);
/* ["A", "B"] from "A,B" ("" gives []): the flags' names. */
struct json_object *ns_json_names(const char *names);
/* @v with @decimals after the point; null if it is not a finite number. */
struct json_object *ns_json_fixed(double v, int decimals);

#endif /* _NS_JSONV_H */
