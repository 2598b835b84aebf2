/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instruction a guest executes to have insncount.so take a snapshot:
 * nopl 0x4e534c4d(%rax), a 7-byte NOP whose displacement ("MLSN") no
 * compiler emits, so that the plugin can recognise it by its bytes alone.
 * Elsewhere than on x86 nsl_insn_mark() does nothing.
 */
#ifndef NSL_MARK_H
#define NSL_MARK_H

#define NSL_MARK_BYTES	0x0f, 0x1f, 0x80, 0x4d, 0x4c, 0x53, 0x4e

static inline void nsl_insn_mark(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x4d, 0x4c, 0x53, 0x4e"
			 ::: "memory");
#endif
}

#endif
