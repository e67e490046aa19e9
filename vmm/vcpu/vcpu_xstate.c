// SPDX-License-Identifier: BSD-2-Clause
/*
 * Guest XCR0 and vector-register state. VMX neither loads nor saves XCR0
 * on VM entry and exit, and XSETBV exits unconditionally: tickvisor
 * checks the value as XSETBV would, keeps it in the vCPU for CPUID leaf
 * 0xD, and loads it into the CPU at once. The host itself uses no
 * extended state (-mgeneral-regs-only), so root mode simply runs with the
 * guest's XCR0 and the guest's vector registers stay in the CPU.
 *
 * Why not switch to a host value on exit: XCR0 must never drop a bit
 * while the guest's vector state is live (DESIGN.md). The SDM (Vol. 1
 * 13.3) keeps a cleared component's state but warns that clearing
 * XCR0[7:5] with AVX-512 state not initial makes later SSE/AVX slower;
 * KVM avoids it by keeping the host's XCR0 a superset of the guest's
 * (kvm_load_host_xsave_state). Equal is the cheapest superset: no XSETBV
 * on the exit path at all (each is serializing). guest-tests/xstate_exits
 * checks the registers across 1,000 exits.
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmx/vmx.h"

#define XSAVE_LEGACY_SIZE       512u
#define XSAVE_HEADER_SIZE       64u
/* Components a guest may enable: x87, SSE, AVX and AVX-512, which CPUID
 * leaf 7 can show. MPX, PKRU and AMX are hidden there, so their bits are
 * reserved for the guest. */
#define XCR0_GUEST_KNOWN        (XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_AVX512)
/* Sub-leaf 1 EAX: XSAVEOPT, XSAVEC, XGETBV with ECX=1 run in the guest
 * without help; XSAVES (IA32_XSS) and XFD (IA32_XFD) need MSRs that are
 * not emulated. */
#define CPUID_D1_EAX_KEEP       (CPUID_D_1_EAX_XSAVEOPT | CPUID_D_1_EAX_XSAVEC | CPUID_D_1_EAX_XGETBV1)

/* XRSTOR source that puts every component in its initial configuration:
 * XSTATE_BV = 0 in the header. MXCSR is loaded from the legacy area
 * whenever SSE or AVX is requested (SDM Vol. 1, "Operation of XRSTOR"),
 * so it holds the power-up value 0x1f80; FCW 0x37f (FINIT) and all-empty
 * tags serve FXRSTOR on CPUs without XSAVE. Read only, shared. */
static const uint8_t xstate_init_area[XSAVE_LEGACY_SIZE + XSAVE_HEADER_SIZE] __aligned(64) = {
	[0] = 0x7f, [1] = 0x03,         /* FCW */
	[24] = 0x80, [25] = 0x1f,       /* MXCSR */
};

static bool cpu_has_xsave(void)
{
	return cpuid(1, 0).ecx & CPUID_1_ECX_XSAVE;
}

uint64_t xstate_guest_mask(void)
{
	struct cpuid_regs d;

	if (!cpu_has_xsave())
		return 0;
	d = cpuid(0xd, 0);
	return (((uint64_t)d.edx << 32) | d.eax) & XCR0_GUEST_KNOWN;
}

/* Bytes an uncompacted (or, compact, compacted) XSAVE area needs for the
 * components in xcr0: the legacy area and header, then each component at
 * its CPUID offset, or packed in index order (SDM Vol. 1, "Compacted
 * Form of XSAVE Area"). */
static uint32_t xstate_size(uint64_t xcr0, bool compact)
{
	uint32_t size = XSAVE_LEGACY_SIZE + XSAVE_HEADER_SIZE;

	for (unsigned i = 2; i < 64; i++) {
		struct cpuid_regs c;

		if (!(xcr0 & BIT(i)))
			continue;
		c = cpuid(0xd, i);
		if (!compact) {
			size = MAX(size, c.ebx + c.eax);
			continue;
		}
		if (c.ecx & CPUID_D_N_ECX_ALIGN64)
			size = (uint32_t)ALIGN_UP(size, 64);
		size += c.eax;
	}
	return size;
}

/* Leaf 0xD (SDM Vol. 2A, CPUID): sub-leaf 0 describes XCR0 as the guest
 * may set it and sizes for the guest's XCR0, not the host's; sub-leaf 1
 * offers no XSAVES/IA32_XSS or XFD; components the guest cannot enable
 * read 0. */
void xstate_cpuid(const struct vcpu *v, uint32_t sub, struct cpuid_regs *r)
{
	uint64_t mask = xstate_guest_mask();

	if (!mask) {
		*r = (struct cpuid_regs){ 0 };
		return;
	}
	if (sub == 0) {
		r->eax = (uint32_t)mask;
		r->edx = (uint32_t)(mask >> 32);
		r->ebx = xstate_size(v->xcr0, false);
		r->ecx = xstate_size(mask, false);
	} else if (sub == 1) {
		r->eax &= (uint32_t)CPUID_D1_EAX_KEEP;
		r->ebx = xstate_size(v->xcr0, true);
		r->ecx = 0;
		r->edx = 0;
	} else if (sub >= 64 || !(mask & BIT(sub))) {
		*r = (struct cpuid_regs){ 0 };
	}
}

/* SDM Vol. 1, "Enabling the XSAVE Feature Set and XSAVE-Enabled
 * Features": x87 always on, AVX needs SSE, the three AVX-512 components
 * together and only with AVX; nothing the CPU lacks. */
static bool xcr0_valid(uint64_t val)
{
	uint64_t avx512 = val & XCR0_AVX512;

	if (!(val & XCR0_X87) || (val & ~xstate_guest_mask()))
		return false;
	if ((val & XCR0_AVX) && !(val & XCR0_SSE))
		return false;
	return !avx512 || (avx512 == XCR0_AVX512 && (val & XCR0_AVX));
}

int vcpu_xsetbv(struct vcpu *v, uint32_t xcr, uint64_t val)
{
	/* The CPU checks these before the VM exit; repeated here so that a
	 * CPU (or emulator) that exits first still gets the SDM's answer. */
	if (!(vcpu_cr4_guest(v) & CR4_OSXSAVE))
		return 6;       /* #UD */
	if (FIELD_GET(SEG_AR_DPL, vmread(VMCS_GUEST_SS_AR)) != 0)
		return 13;
	if (xcr != 0 || !xcr0_valid(val))
		return 13;
	v->xcr0 = val;
	/* As the guest's own XSETBV would: a bit it clears is its choice. */
	xcr0_write(val);
	return 0;
}

static void xstate_init_vector_regs(uint64_t mask)
{
	if (mask) {
		xcr0_write(mask);
		__asm__ volatile("xrstor %0" : : "m"(xstate_init_area), "a"((uint32_t)mask),
				 "d"((uint32_t)(mask >> 32)) : "memory");
		xcr0_write(XCR0_HOST);
		return;
	}
	/* No XSAVE: FXRSTOR of the same area (x87 FINIT state, XMM zero)
	 * with CR4.OSFXSR on so that it loads the XMM registers too. */
	write_cr4(read_cr4() | CR4_OSFXSR);
	__asm__ volatile("fxrstor %0" : : "m"(xstate_init_area) : "memory");
}

/* Leaves the CPU's XCR0 at the guest's power-up value: from here on the
 * CPU's XCR0 is always v->xcr0. */
void vcpu_xstate_reset(struct vcpu *v)
{
	uint64_t mask = xstate_guest_mask();

	if (mask && !(read_cr4() & CR4_OSXSAVE))
		write_cr4(read_cr4() | CR4_OSXSAVE);
	xstate_init_vector_regs(mask);
	v->xcr0 = XCR0_HOST;
}
