// SPDX-License-Identifier: BSD-2-Clause
/* Architectural constants for NASM (see Makefile: x86.inc), taken from
 * drivers/x86.h so that the assembly stubs spell none of them again. Never
 * linked into the image: it is compiled to assembly and the markers are
 * extracted, as vmx/offsets.c is for struct offsets. */
#include "drivers/x86.h"

#define VALUE(name, v) \
	__asm__ volatile("\n->" #name " %0" : : "i"((long long)(v)))

void x86_inc(void);
void x86_inc(void)
{
	VALUE(X86_CR0_PE, CR0_PE);
	VALUE(X86_CR0_NE, CR0_NE);
	VALUE(X86_CR0_NW, CR0_NW);
	VALUE(X86_CR0_CD, CR0_CD);
	VALUE(X86_CR0_PG, CR0_PG);
	VALUE(X86_CR4_PAE, CR4_PAE);
	VALUE(X86_MSR_EFER, MSR_EFER);
	VALUE(X86_EFER_LME, EFER_LME);
}
