/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A block's and a record's flags by name, as every view writes them
 * (the lines, JSON, the Chrome trace, the waterfall's titles):
 * "RETRANS,GSO", "OPEN,MERGED"; a bit without a name in hex; "" for none.
 */
#ifndef _NS_FLAGS_H
#define _NS_FLAGS_H

#include <stddef.h>
#include <stdint.h>

void ns_block_flags(uint32_t flags, char *buf, size_t len);
void ns_record_flags(uint32_t flags, char *buf, size_t len);

#endif /* _NS_FLAGS_H */
