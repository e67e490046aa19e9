/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Interrupts and exceptions: the IDT, handlers, and kvm-unit-tests style
 * expected-exception helpers.
 *
 * Every vector has a gate (isr.asm). An interrupt or exception goes, in
 * this order, to: an exception fixup (ASM_TRY and the *_safe helpers),
 * the handler installed with handle_irq(), or the fatal report, which
 * prints "FAIL: unexpected exception ...", the registers and the summary,
 * then exits with status 1.
 */
#ifndef GUEST_DESC_H
#define GUEST_DESC_H

#include "lib/bits.h"

enum exception_vector_nr {
	DE_VECTOR = 0, DB_VECTOR = 1, NMI_VECTOR = 2, BP_VECTOR = 3,
	OF_VECTOR = 4, BR_VECTOR = 5, UD_VECTOR = 6, NM_VECTOR = 7,
	DF_VECTOR = 8, TS_VECTOR = 10, NP_VECTOR = 11, SS_VECTOR = 12,
	GP_VECTOR = 13, PF_VECTOR = 14, MF_VECTOR = 16, AC_VECTOR = 17,
	MC_VECTOR = 18, XM_VECTOR = 19, VE_VECTOR = 20, CP_VECTOR = 21,
	NR_EXCEPTIONS = 32,
	NR_VECTORS = 256,
};

/* What isr.asm saves, lowest address first (see isr.asm). */
struct ex_regs {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector;
	uint64_t error_code;            /* 0 where the CPU pushes none */
	uint64_t rip, cs, rflags, rsp, ss;      /* the CPU's frame */
};

typedef void (*irq_handler_fn)(struct ex_regs *regs);

/* Installs fn for vector (NULL: none); returns the previous handler. An
 * interrupt handler sends its own EOI. */
irq_handler_fn handle_irq(unsigned vector, irq_handler_fn fn);

/* "GP" for 13 and so on; "??" for reserved vectors, "" above 31. */
const char *exception_mnemonic(unsigned vector);

void idt_init(void);                    /* once, on the BSP */
void idt_load(void);                    /* on every CPU */

/*
 * Exception fixup: ASM_TRY(fixup) marks the instruction that follows it;
 * if that instruction raises an exception, execution resumes at the
 * label `fixup` and exception_vector() returns the vector. Example:
 *
 *	exception_clear();
 *	asm volatile(ASM_TRY("1f") "mov (%1), %0\n1:" : "=r"(v) : "r"(p) : "memory");
 *	if (exception_vector() == GP_VECTOR) ...
 */
#define ASM_TRY(fixup)							\
	"1111:\n\t"							\
	".pushsection .extable, \"a\"\n\t"				\
	".balign 8\n\t"							\
	".quad 1111b, " fixup "\n\t"					\
	".popsection\n\t"

struct extable_entry {
	uint64_t insn;                  /* address of the faulting instruction */
	uint64_t fixup;                 /* where to resume */
};

/* Vector of the last exception fixed up on this CPU, 0 if none since
 * exception_clear() (0 is #DE, which fixups of MSRs and I/O never see). */
int exception_vector(void);
/* Its error code (0 where the CPU pushes none) and the RFLAGS image its
 * frame holds (RF shows whether it came as a fault). */
uint64_t exception_error_code(void);
uint64_t exception_rflags(void);
void exception_clear(void);

/* These return the vector the instruction raised, or 0. */
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);

/* Prints the unexpected-exception report and exits with status 1. */
void __noreturn exception_fatal(struct ex_regs *regs);

#endif
