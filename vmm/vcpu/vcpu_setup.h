/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VCPU_SETUP_H
#define VMM_VCPU_SETUP_H

#include "vmm/vcpu.h"
#include "vmx/vmx.h"

/* Sets or clears one bit of a VMCS control field through its cached copy
 * in the vCPU (v->cached_pin_ctls, v->cached_proc_ctls): a VMWRITE only when the bit
 * changes. Not for the entry controls where VM exits store EFER.LMA into
 * them (v->lma_by_hw): there the copy can be stale. */
static inline void vcpu_set_ctl(uint32_t *cached, uint64_t field, unsigned bit, bool on)
{
	if (on ? (*cached & BIT(bit)) : !(*cached & BIT(bit)))    /* every entry asks: keep it cheap */
		return;
	*cached ^= (uint32_t)BIT(bit);
	vmwrite(field, *cached);
}

/* IA32_MISC_ENABLE (SDM Vol. 4, "Architectural MSRs"), as tickvisor
 * offers it: see vmm/exit/exit_msr.c for which bits and why. */
#define MISC_ENABLE_FAST_STRING    BIT(0)      /* R/W */
#define MISC_ENABLE_AUTO_THERMAL   BIT(3)      /* R/W */
#define MISC_ENABLE_PERFMON        BIT(7)      /* R: 0, CPUID 0xA shows no PMU */
#define MISC_ENABLE_BTS_UNAVAIL    BIT(11)     /* RO: 1 */
#define MISC_ENABLE_PEBS_UNAVAIL   BIT(12)     /* RO: 1 */
#define MISC_ENABLE_EIST           BIT(16)     /* R/W, no effect */
#define MISC_ENABLE_MONITOR        BIT(18)     /* R/W with SSE3, no effect */
#define MISC_ENABLE_LIMIT_CPUID    BIT(22)     /* R/W: CPUID.0:EAX reads 2 */
#define MISC_ENABLE_XTPR_DISABLE   BIT(23)     /* R/W */
#define MISC_ENABLE_XD_DISABLE     BIT(34)     /* R/W with NX: hides NX, EFER.NXE #GP */
#define MISC_ENABLE_RESET (MISC_ENABLE_FAST_STRING | MISC_ENABLE_BTS_UNAVAIL | \
			   MISC_ENABLE_PEBS_UNAVAIL)

/* Allocates and fills the vCPU's VMCS and leaves it current. */
bool vcpu_setup_vmcs(struct vcpu *v, char *err, size_t errlen);
/* Start state for a Multiboot kernel (32-bit protected mode, paging off). */
void vcpu_reset_multiboot(struct vcpu *v, uint32_t entry, uint32_t mbi);
/* The Linux "32-bit Boot Protocol" start: CS/DS from the loader's GDT,
 * ESI = boot_params (vmm/loader/linux.h). */
void vcpu_reset_linux(struct vcpu *v, uint32_t entry, uint32_t boot_params, uint32_t gdt);
/* Start state of an AP at a SIPI: real mode at the vector's page. */
void vcpu_reset_sipi(struct vcpu *v, uint8_t vector);
/* Guest CR0/CR4 as the guest sees them -> the value VMX runs with. */
uint64_t vcpu_cr0_real(const struct vcpu *v, uint64_t guest_cr0);
uint64_t vcpu_cr4_real(const struct vcpu *v, uint64_t guest_cr4);
/* CR0/CR4 as the guest reads them. */
uint64_t vcpu_cr0_guest(const struct vcpu *v);
uint64_t vcpu_cr4_guest(const struct vcpu *v);
/* CR4 bits a guest may set: what VMX allows, minus VMXE (no nested VMX). */
uint64_t vcpu_cr4_allowed(void);
void vcpu_set_cr0(struct vcpu *v, uint64_t cr0);
void vcpu_set_cr4(struct vcpu *v, uint64_t cr4);

#endif
