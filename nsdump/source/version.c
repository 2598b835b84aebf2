// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "source/version.h"

void ns_build_info(struct ns_build *b)
{
	char why[8];

	b->version = NSDUMP_VERSION;
	b->abi = NSL_ABI_VERSION;
	b->file_format = NSF_VERSION;
	b->libpfm4 = ns_counters_available(why, sizeof(why));
	b->json_c = json_c_version();
	b->zlib = zlibVersion();
}

/*
 * file.c writes the records it knows; this one is laid out as file.h
 * says (nsf_record_crc()) and goes straight to the fd, nothing being
 * buffered before the first item.
 */
int ns_write_writer_record(struct nsf_writer *w)
{
	static const char text[] = "program=nsdump\nversion=" NSDUMP_VERSION "\n";
	unsigned char rec[sizeof(struct nsf_rec_hdr) + (sizeof(text) + 7) / 8 * 8];
	struct nsf_rec_hdr h = { .kind = NSF_WRITER, .len = sizeof(rec) };
	size_t done = 0;

	if (w->err)
		return -1;
	memset(rec, 0, sizeof(rec));
	memcpy(rec + sizeof(h), text, sizeof(text) - 1);
	h.crc = nsf_record_crc(&h, rec + sizeof(h), sizeof(rec) - sizeof(h));
	memcpy(rec, &h, sizeof(h));
	while (done < sizeof(rec)) {
		ssize_t n = write(w->fd, rec + done, sizeof(rec) - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->err = n < 0 ? errno : EIO;
			return -1;
		}
		done += n;
	}
	w->committed += sizeof(rec);
	return 0;
}
