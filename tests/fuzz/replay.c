// SPDX-License-Identifier: GPL-2.0
/*
 * Replays inputs into a libFuzzer target without libFuzzer, so that
 * `make check` needs no clang: every file named, and every file of every
 * directory named, goes once through LLVMFuzzerTestOneInput.  Built with
 * gcc's ASan and UBSan, which abort on a report: a crash is a non-zero
 * exit status.  Prints "replayed N inputs" at the end.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fuzz.h"

/* libFuzzer calls it first where a target has one */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *p = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		unsigned char *q = realloc(p, cap = cap * 2 + 4096);
		size_t n;

		if (!q)
			break;
		p = q;
		n = fread(p + *len, 1, cap - *len, f);
		*len += n;
		if (*len < cap)
			break;
	}
	if (ferror(f)) {
		free(p);
		p = NULL;
	}
	fclose(f);
	return p;
}

/* Exactly @len bytes, as libFuzzer gives them: ASan sees a read past. */
static int replay_file(const char *path)
{
	size_t len;
	unsigned char *p = slurp(path, &len), *exact;

	if (!p) {
		perror(path);
		return -1;
	}
	exact = malloc(len ? len : 1);
	if (!exact) {
		free(p);
		return -1;
	}
	memcpy(exact, p, len);
	free(p);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Inputs replayed from @path, a file or a directory of files; -1. */
static long replay_path(const char *path)
{
	struct dirent **names;
	struct stat st;
	long n = 0;
	int count;

	if (stat(path, &st)) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path) ? -1 : 1;
	count = scandir(path, &names, NULL, by_name);
	if (count < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < count; i++) {
		char file[4096];

		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && !stat(file, &st) &&
		    S_ISREG(st.st_mode)) {
			if (replay_file(file))
				n = -1;
			else if (n >= 0)
				n++;
		}
		free(names[i]);
	}
	free(names);
	return n;
}

int main(int argc, char **argv)
{
	long total = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		long n = replay_path(argv[i]);

		if (n < 0)
			return 1;
		printf("%s: %ld inputs\n", argv[i], n);
		total += n;
	}
	printf("replayed %ld inputs\n", total);
	return 0;
}
