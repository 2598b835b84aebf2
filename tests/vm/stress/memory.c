// SPDX-License-Identifier: GPL-2.0
/* stress: bad memory */
#include "stress.h"

int stress_bufs_init(struct bufs *b)
{
	uint8_t *p = mmap(NULL, (RW_PAGES + 1) * stress_page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	b->rw = p;
	b->rw_len = RW_PAGES * stress_page;
	b->hole = p + b->rw_len;
	if (munmap(b->hole, stress_page))
		return -1;
	b->ro = mmap(NULL, stress_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return b->ro == MAP_FAILED ? -1 : 0;
}

bool stress_hole_still_unmapped(const struct bufs *b)
{
	return msync(b->hole, stress_page, MS_ASYNC) == -1 && errno == ENOMEM;
}

const char *const stress_ptr_name[P_MAX] = {
	"writable", "read-only", "ends on an unmapped page", "NULL",
	"first page", "unmapped", "kernel address", "non-canonical",
	"top of the address space",
};

enum ptr stress_pick_ptr(uint64_t *r)
{
	unsigned int x = stress_below(r, 100);

	if (x < 62)
		return P_RW;
	if (x < 72)
		return P_RO;
	if (x < 80)
		return P_EDGE;
	return P_NULL + stress_below(r, P_MAX - P_NULL);
}

/* The address of an argument of @size bytes, @content, of class @p. */
void *stress_place(struct bufs *b, uint64_t *r, enum ptr p,
		   const void *content, size_t size)
{
	size_t off, k;

	switch (p) {
	case P_RW:
		off = stress_below(r, 64);	/* unaligned too */
		memcpy(b->rw + off, content, size);
		return b->rw + off;
	case P_RO:
		off = stress_below(r, stress_page - size + 1);
		mprotect(b->ro, stress_page, PROT_READ | PROT_WRITE);
		memcpy(b->ro + off, content, size);
		mprotect(b->ro, stress_page, PROT_READ);
		return b->ro + off;
	case P_EDGE:
		/* all but the last 1..size-1 bytes readable */
		k = 1 + stress_below(r, size - 1);
		memcpy(b->hole - k, content, k);
		return b->hole - k;
	case P_NULL:
		return NULL;
	case P_LOW:
		return (void *)(uintptr_t)(8 + stress_below(r, 2048));
	case P_HOLE:
		return b->hole + stress_below(r, stress_page - size + 1);
	case P_KERNEL:
		return (void *)(uintptr_t)(0xffffffff81000000ULL +
					   8 * stress_below(r, 4096));
	case P_NONCANON:
		return (void *)(uintptr_t)(0x8000000000000000ULL |
					   stress_below(r, 1ULL << 40));
	case P_TOP:
		return (void *)(uintptr_t)(-8 - 8 * stress_below(r, 16));
	case P_MAX:
		break;
	}
	return NULL;
}

bool stress_ptr_readable(enum ptr p)
{
	return p == P_RW || p == P_RO;
}
