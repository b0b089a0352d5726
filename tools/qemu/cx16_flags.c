// SPDX-License-Identifier: GPL-2.0
/*
 * cx16_flags - show QEMU 7.2 TCG's stale-flags CMPXCHG16B.
 *
 * QEMU 7.2's CMPXCHG16B helper computes the flags it leaves behind from
 * the condition-code state the translator last stored, not the one the
 * instructions before it set. Right after a POPF (or an IRET, which ends
 * a translation block the same way) a guest that does ADD then
 * CMPXCHG16B gets the ADD's source operand back as EFLAGS: reserved bits,
 * IOPL, NT, AC, all set at random. The guest kernel's SLUB fast path has
 * that shape; an interrupt taken right after it pushes the garbage and
 * IRET loads it, and the guest double-faults in kmalloc with EFLAGS equal
 * to (u32)RDI | 0x202. scripts/vm therefore boots its guests with
 * "-cpu max,-cx16" (the kernel then emulates the instruction).
 *
 * Build with gcc -O2; run it on real hardware, and in a guest started with
 * "scripts/vm --cpu max".
 * Exit status: 0 if no PUSHF after CMPXCHG16B showed a reserved EFLAGS
 * bit, 1 if one did, 132 (SIGILL) where the CPU has no CMPXCHG16B.
 */
#include <stdint.h>
#include <stdio.h>

/* Every bit of EFLAGS a CPU can ever report (bit 1 always reads 1). */
#define EFLAGS_DEFINED	0x3f7fd7ul
#define RUNS		100000ul

static uint64_t slot[2] __attribute__((aligned(16)));

int main(void)
{
	unsigned long bad = 0, first = 0, flags, i;

	for (i = 0; i < RUNS; i++) {
		uint64_t operand = 0x05270000ul | (i << 3), sum = 1;

		slot[0] = 0;
		slot[1] = 0;
		asm volatile("pushq $0x202\n\t"
			     "popfq\n\t"
			     "xorl %%eax, %%eax\n\t"
			     "xorl %%edx, %%edx\n\t"
			     "movq %%rdx, %%rbx\n\t"
			     "addq %%rdi, %%rcx\n\t"
			     "cmpxchg16b (%%rsi)\n\t"
			     "pushfq\n\t"
			     "popq %0\n\t"
			     : "=r"(flags), "+c"(sum)
			     : "D"(operand), "S"(slot)
			     : "rax", "rbx", "rdx", "memory", "cc");
		if (flags & ~EFLAGS_DEFINED) {
			if (!bad)
				first = flags;
			bad++;
		}
	}
	printf("cx16_flags: %lu of %lu reads of EFLAGS had undefined bits (first %#lx)\n",
	       bad, RUNS, first);
	return bad != 0;
}
