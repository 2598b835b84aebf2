// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "view/flags.h"

static void flag_names(uint32_t flags, const char *const *names, int nnames,
		       char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < 32 && used < len; i++) {
		if (!(flags & (1u << i)))
			continue;
		if (i < nnames && names[i])
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? "," : "", names[i]);
		else
			used += snprintf(buf + used, len - used, "%s0x%x",
					 used ? "," : "", 1u << i);
	}
}

void ns_block_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"RETRANS", "GSO", "NOXMIT", "TRUNC", "LOOPBACK", "RX", "ABSORBED",
		"RESENT", "FORWARDED", "COPY", "COALESCED", "DEVTRUNC",
	};

	flag_names(flags, names, (int)(sizeof(names) / sizeof(names[0])),
		   buf, len);
}

void ns_record_flags(uint32_t flags, char *buf, size_t len)
{
	static const char *const names[] = {
		"OPEN", "INVALID", "MIGRATED", "MERGED", "GAP", "SHARED",
	};

	flag_names(flags, names, (int)(sizeof(names) / sizeof(names[0])),
		   buf, len);
}
