/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Guest extended processor state (SDM Vol. 1, "Managing State Using the
 * XSAVE Feature Set"): the guest's XCR0, switched with the host's around
 * VM entry and exit, the XSETBV rules, and the reset of XCR0 and the
 * vector registers when a guest starts on a CPU.
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

/* Around vmx_run(): a guest that never wrote XCR0 costs one compare. The
 * guest's XCR0 is only in the CPU while the guest runs. */
static inline void vcpu_xcr0_load_guest(const struct vcpu *v)
{
	if (unlikely(v->xcr0 != XCR0_HOST))
		xcr0_write(v->xcr0);
}

static inline void vcpu_xcr0_load_host(const struct vcpu *v)
{
	if (unlikely(v->xcr0 != XCR0_HOST))
		xcr0_write(XCR0_HOST);
}

/* XSETBV of val to XCR xcr, as the instruction checks it (SDM Vol. 2C,
 * XSETBV): 0 when accepted, else the exception vector to raise. */
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
