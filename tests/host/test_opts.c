// SPDX-License-Identifier: GPL-2.0
/*
 * nsdump's option table (opts.c) against what is written of the options
 * elsewhere: the man page's OPTIONS and the bash completion (doc/), as
 * cli.sh holds --help, which the table makes, against both.  A failing
 * check names the options that differ.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "tap.h"
#include "tests.h"

#define MAX_NAMES	64

struct names {
	unsigned int n;
	char name[MAX_NAMES][32];
};

static void add(struct names *s, const char *name, size_t len)
{
	if (s->n < MAX_NAMES && len < sizeof(s->name[0]))
		snprintf(s->name[s->n++], sizeof(s->name[0]), "%.*s",
			 (int)len, name);
}

static bool has(const struct names *s, const char *name)
{
	for (unsigned int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return true;
	return false;
}

/* The table's options as they are written: -x, --name. */
static void table_names(struct names *s)
{
	char buf[32];

	s->n = 0;
	for (unsigned int i = 0; i < ns_noptions; i++) {
		const struct ns_option *opt = &ns_options[i];

		if (opt->letter) {
			snprintf(buf, sizeof(buf), "-%c", opt->letter);
			add(s, buf, strlen(buf));
		}
		if (opt->name) {
			snprintf(buf, sizeof(buf), "--%s", opt->name);
			add(s, buf, strlen(buf));
		}
	}
}

/* Those of @a that @b lacks, after @what, into @buf ("" if none). */
static void lacking(const struct names *a, const struct names *b,
		    const char *what, char *buf, size_t len)
{
	size_t at = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < a->n && at < len; i++)
		if (!has(b, a->name[i]))
			at += snprintf(buf + at, len - at, "%s%s", at ? " " : what,
				       a->name[i]);
}

/* @doc names the table's options, no more: what differs on "# " lines. */
static void same_names(const struct names *table, const struct names *doc,
		       const char *doc_name)
{
	char missing[512], extra[512];

	lacking(table, doc, "missing: ", missing, sizeof(missing));
	lacking(doc, table, "not in the table: ", extra, sizeof(extra));
	if (missing[0])
		printf("# %s\n", missing);
	if (extra[0])
		printf("# %s\n", extra);
	tap_ok(!missing[0] && !extra[0],
	       "options: %s has the table's %u options, no more", doc_name,
	       table->n);
}

static char *read_doc(const char *name)
{
	char path[512];
	size_t len;
	char *text;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", NS_DOC_DIR, name);
	f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(1);
	}
	text = (char *)fd_bytes(fileno(f), &len);
	fclose(f);
	text = realloc(text, len + 1);
	text[len] = 0;
	return text;
}

/*
 * The man page's OPTIONS: the line after each .TP names an option
 * (".BR \-h \", \" \-\-help": two), each "\-" a '-'.
 */
static void man_names(const char *man, struct names *s)
{
	const char *p = strstr(man, "\n.SH OPTIONS\n");
	const char *end = p ? strstr(p + 1, "\n.SH ") : NULL;

	s->n = 0;
	while (p && (p = strstr(p, "\n.TP\n")) && (!end || p < end)) {
		const char *line = p + 5, *eol = strchr(line, '\n');

		for (const char *w = line; w < eol; w++) {
			char name[32];
			size_t n = 0;

			if (strncmp(w, "\\-", 2) || (w > line && w[-1] != ' '))
				continue;
			for (; w < eol && !strncmp(w, "\\-", 2); w += 2)
				name[n++] = '-';
			while (w < eol && n < sizeof(name) - 1 &&
			       (isalnum((unsigned char)*w) || !strncmp(w, "\\-", 2))) {
				name[n++] = *w == '\\' ? '-' : *w;
				w += *w == '\\' ? 2 : 1;
			}
			add(s, name, n);
		}
		p = eol;
	}
}

/* The completion's offered options: `local opts="..."`. */
static void completion_names(const char *bash, struct names *s)
{
	const char *p = strstr(bash, "local opts=\"");
	const char *end = p ? strchr(p + 12, '"') : NULL;

	s->n = 0;
	for (p = p ? p + 12 : NULL; p && p < end; ) {
		size_t n = strcspn(p, " \t\n\"");

		if (n)
			add(s, p, n);
		p += n ? n : 1;
	}
}

/*
 * The body of the completion's `case $prev in` arm whose patterns name
 * @opt, up to its ";;"; NULL if none does.
 */
static char *completion_arm(const char *bash, const char *opt)
{
	const char *p = strstr(bash, "case $prev in\n");
	const char *esac = p ? strstr(p, "\n\tesac\n") : NULL;

	for (; p && p < esac; p = strchr(p, '\n')) {
		const char *line = ++p, *eol = strchr(line, '\n');
		size_t len = strlen(opt);

		if (eol[-1] != ')' || line[0] != '\t' || line[1] == '\t')
			continue;
		for (const char *w = line + 1; w < eol; w += strcspn(w, "|)") + 1) {
			w += strspn(w, " ");
			if (!strncmp(w, opt, len) && strchr(" |)", w[len])) {
				const char *stop = strstr(eol, "\n\t\t;;");

				return strndup(eol + 1, stop - eol - 1);
			}
		}
	}
	return NULL;
}

/* What an arm offers, as the table says it should. */
static bool arm_offers(const char *arm, const struct ns_option *opt)
{
	char words[128];

	switch (opt->complete) {
	case NS_COMPLETE_NOTHING:
		return !strstr(arm, "compgen");
	case NS_COMPLETE_FILE:
		return strstr(arm, "compgen -f -- \"$cur\"");
	case NS_COMPLETE_DEVICE:
		return strstr(arm, "compgen -f -- \"${cur:-/dev/}\"");
	case NS_COMPLETE_INTERFACE:
		return strstr(arm, "/sys/class/net");
	case NS_COMPLETE_EVENTS:
		return strstr(arm, "nsdump -L");
	case NS_COMPLETE_WORDS:
		snprintf(words, sizeof(words), "compgen -W \"%s\"", opt->words);
		return strstr(arm, words);
	}
	return false;
}

/* Each argument completed as the table says; no arm for an option without. */
static void completion_arguments(const char *bash)
{
	char wrong[512];
	size_t at = 0;

	wrong[0] = 0;
	for (unsigned int i = 0; i < ns_noptions && at < sizeof(wrong); i++) {
		const struct ns_option *opt = &ns_options[i];
		char name[32];
		char *arm;

		if (opt->kind == NS_OPT_OPERAND)
			continue;
		if (opt->name)
			snprintf(name, sizeof(name), "--%s", opt->name);
		else
			snprintf(name, sizeof(name), "-%c", opt->letter);
		arm = completion_arm(bash, name);
		if (opt->arg ? !arm || !arm_offers(arm, opt) : arm != NULL)
			at += snprintf(wrong + at, sizeof(wrong) - at, " %s", name);
		free(arm);
	}
	if (wrong[0])
		printf("# not so:%s\n", wrong);
	tap_ok(!wrong[0], "options: the completion offers for each argument what the table says, nothing after an option without one");
}

void test_opts(void)
{
	struct names table, doc;
	char *text;

	table_names(&table);
	text = read_doc("nsdump.8");
	man_names(text, &doc);
	same_names(&table, &doc, "nsdump.8's OPTIONS");
	free(text);

	text = read_doc("nsdump.bash");
	completion_names(text, &doc);
	same_names(&table, &doc, "nsdump.bash's offered options");
	completion_arguments(text);
	free(text);
}
