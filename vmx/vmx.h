/* SPDX-License-Identifier: BSD-2-Clause */
/* VMX operation on one CPU and the VMCS mechanism. Memory comes from the
 * caller (vmx/ sits below the memory pool in vmm/). */
#ifndef VMX_VMX_H
#define VMX_VMX_H

#include "vmx/caps.h"
#include "vmx/vmx_exit.h"
#include "vmx/vmx_insn.h"
#include "vmx/regs.h"
#include "vmx/vmcs.h"

/* Honours the CR0/CR4 fixed bits, sets CR4.VMXE and executes VMXON with
 * the given zeroed, page-aligned region. False if VMXON failed. */
bool vmx_cpu_on(const struct vmx_caps *c, void *vmxon_region);
/* Prepares a zeroed page as a VMCS region and makes it current (VMCLEAR
 * then VMPTRLD). False on failure. */
bool vmcs_init(const struct vmx_caps *c, void *vmcs);

/* Control words: `want` bits set where the CPU allows them, `need` bits
 * must be allowed or the call fails naming the first missing one. */
struct vmx_ctls {
	uint32_t pin, proc, proc2, exit, entry;
};
bool vmx_ctls_fit(const struct vmx_caps *c, const struct vmx_ctls *want,
		  const struct vmx_ctls *need, struct vmx_ctls *out, char *err, size_t errlen);
void vmx_ctls_write(const struct vmx_ctls *ctls);

/* Host state of the calling CPU, restored on every VM exit. */
struct vmx_host_state {
	uint64_t gdt_base, idt_base, tr_base, gs_base;
	uint16_t cs, ds, tr;
	uint64_t rip;           /* vmx_exit */
};
void vmx_write_host_state(const struct vmx_host_state *h);

enum vmx_seg { SEG_ES, SEG_CS, SEG_SS, SEG_DS, SEG_FS, SEG_GS, SEG_LDTR, SEG_TR, SEG_NR };
/* Segment access rights as the VMCS holds them: the descriptor's
 * (SEG_AR_* of drivers/x86.h) plus VMX's own "segment unusable". */
#define SEG_AR_UNUSABLE BIT(16)
void vmx_write_seg(enum vmx_seg s, uint16_t sel, uint64_t base, uint32_t limit, uint32_t ar);
void vmx_read_seg(enum vmx_seg s, uint16_t *sel, uint64_t *base, uint32_t *limit, uint32_t *ar);

#endif
