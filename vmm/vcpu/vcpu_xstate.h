/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest extended processor state (SDM Vol. 1, "Managing State Using the
 * XSAVE Feature Set"): the guest's XCR0, the XSETBV rules, and the reset
 * of XCR0 and the vector registers when a guest starts on a CPU. The CPU
 * holds the guest's XCR0 in root mode too: tickvisor uses no extended
 * state, so nothing is switched around entries and exits.
 */
#ifndef VMM_VCPU_XSTATE_H
#define VMM_VCPU_XSTATE_H

#include "vmm/vcpu.h"

/* XCR0 in root mode, and a guest's at power-up (SDM Vol. 1, "Enabling
 * the XSAVE Feature Set": XCR0 = 1 after reset). INIT leaves XCR0 as it
 * is, as KVM's kvm_vcpu_reset() does (XCR0 only when !init_event). */
#define XCR0_HOST       XCR0_X87

static inline void xcr0_write(uint64_t val)
{
	__asm__ volatile("xsetbv" : : "c"(0), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)));
}

/* XSETBV of val to XCR xcr, as the instruction checks it (SDM Vol. 2C,
 * XSETBV): 0 when accepted and loaded into the CPU, else the exception
 * vector to raise. */
int vcpu_xsetbv(struct vcpu *v, uint32_t xcr, uint64_t val);
/* XCR0 bits a guest may set: the host CPU's, as far as CPUID shows them. */
uint64_t xstate_guest_mask(void);
/* CPUID leaf 0xD as the guest sees it, given its XCR0. */
void xstate_cpuid(const struct vcpu *v, uint32_t sub, struct cpuid_regs *r);
/* On the vCPU's CPU before its VMCS host state is written: host CR4.OSXSAVE
 * (so root mode can switch XCR0), and the guest's XCR0, x87/SSE/AVX
 * registers in their power-up state, whatever the last guest left. */
void vcpu_xstate_reset(struct vcpu *v);

#endif
