// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPUID: the host's answer, minus what tickvisor does not virtualize
 * (VMX, SMX, MONITOR, performance monitoring, thermal and machine-check
 * MSRs, MTRRs...), plus the hypervisor leaves and the time base leaves
 * 0x15/0x16 that describe the emulated APIC timer exactly.
 */
#include "drivers/io.h"
#include "vmm/exit.h"
#include "vmm/lapic_glue.h"
#include "vmm/msr.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu_run.h"
#include "vmm/vcpu_xstate.h"
#include "vmx/vmx.h"

#define CPUID_TV_SIG_EBX 0x6b636974u     /* "tick" */
#define CPUID_TV_SIG_ECX 0x6f736976u     /* "viso" */
#define CPUID_TV_SIG_EDX 0x00000072u     /* "r\0\0\0" */
#define CPUID_TV_MAX     0x40000010u

/* Leaf 1 */
#define C1_ECX_DROP (BIT(2) | BIT(3) | BIT(4) | BIT(5) | BIT(6) | BIT(7) | BIT(8) | \
		     BIT(11) | BIT(14) | BIT(15) | BIT(18) | BIT(27))
#define C1_ECX_X2APIC   BIT(21)
#define C1_ECX_TSCDL    BIT(24)
#define C1_ECX_OSXSAVE  BIT(27)
#define C1_ECX_HV       BIT(31)
#define C1_EDX_DROP (BIT(7) | BIT(12) | BIT(14) | BIT(18) | BIT(21) | BIT(22) | BIT(29) | BIT(31))
#define C1_EDX_APIC     BIT(9)
/* Leaf 7.0: what is safe to expose (no SGX, PT, TSX control, PKS,
 * WAITPKG, speculation-control MSRs that are not emulated). */
#define C7_EBX_KEEP (BIT(0) | BIT(3) | BIT(5) | BIT(7) | BIT(8) | BIT(9) | BIT(10) | \
		     BIT(16) | BIT(17) | BIT(18) | BIT(19) | BIT(20) | BIT(21) | BIT(23) | \
		     BIT(24) | BIT(26) | BIT(27) | BIT(28) | BIT(29) | BIT(30) | BIT(31))
#define C7_EBX_TSC_ADJUST BIT(1)
#define C7_ECX_KEEP (BIT(1) | BIT(6) | BIT(8) | BIT(9) | BIT(10) | BIT(11) | BIT(12) | \
		     BIT(14) | BIT(22))
#define C7_EDX_KEEP (BIT(2) | BIT(3) | BIT(4) | BIT(8) | BIT(10))
#define C6_EAX_ARAT BIT(2)

static void leaf1(struct vcpu *v, struct cpuid_regs *r)
{
	uint64_t cr4 = vmread(VMCS_GUEST_CR4);

	r->ecx = (r->ecx & ~(uint32_t)(C1_ECX_DROP | C1_ECX_X2APIC)) | C1_ECX_HV | C1_ECX_TSCDL;
	if (v->guest->spec->opts.x2apic)        /* option x2apic= (vmm/exit_msr.c) */
		r->ecx |= C1_ECX_X2APIC;
	/* OSXSAVE mirrors the guest's CR4, not the host's. */
	if (cr4 & CR4_OSXSAVE)
		r->ecx |= C1_ECX_OSXSAVE;
	r->edx &= ~(uint32_t)C1_EDX_DROP;
	/* The APIC feature flag follows IA32_APIC_BASE.EN (SDM). */
	if (vlapic_mode(v->lapic) != VLAPIC_DISABLED)
		r->edx |= C1_EDX_APIC;
	else
		r->edx &= ~(uint32_t)C1_EDX_APIC;
	r->ebx = (r->ebx & 0xffffu) | (v->guest->nvcpus << 16) | (v->id << 24);
}

static void leaf_topology(struct vcpu *v, uint32_t sub, struct cpuid_regs *r)
{
	uint32_t n = v->guest->nvcpus, shift = 0;

	while ((1u << shift) < n)
		shift++;
	/* One thread per core, n cores in one package. */
	if (sub == 0)
		*r = (struct cpuid_regs){ 0, 1, (1u << 8) | sub, v->id };
	else if (sub == 1)
		*r = (struct cpuid_regs){ shift, n, (2u << 8) | sub, v->id };
	else
		*r = (struct cpuid_regs){ 0, 0, sub, v->id };
}

static void leaf_hypervisor(uint32_t leaf, struct cpuid_regs *r)
{
	const struct timebase *tb = &platform.tb;

	if (leaf == 0x40000000)
		*r = (struct cpuid_regs){ CPUID_TV_MAX, CPUID_TV_SIG_EBX, CPUID_TV_SIG_ECX,
					  CPUID_TV_SIG_EDX };
	else if (leaf == 0x40000010)    /* TSC and APIC bus kHz, as other hypervisors */
		*r = (struct cpuid_regs){ (uint32_t)(tb->tsc_hz / 1000),
					  (uint32_t)(tb->apic_hz / 1000), 0, 0 };
	else
		*r = (struct cpuid_regs){ 0 };
}

static void leaf_timebase(uint32_t leaf, struct cpuid_regs *r)
{
	const struct timebase *tb = &platform.tb;

	if (leaf == 0x15)       /* TSC = crystal * EBX / EAX; crystal = APIC timer */
		*r = (struct cpuid_regs){ 1, tb->apic_div, (uint32_t)tb->apic_hz, 0 };
	else                    /* 0x16: base, max, bus (APIC timer) MHz */
		*r = (struct cpuid_regs){ (uint32_t)(tb->tsc_hz / 1000000),
					  (uint32_t)(tb->tsc_hz / 1000000),
					  (uint32_t)(tb->apic_hz / 1000000), 0 };
}

static void guest_cpuid(struct vcpu *v, uint32_t leaf, uint32_t sub, struct cpuid_regs *r)
{
	if (leaf >= 0x40000000 && leaf <= 0x4fffffff) {
		leaf_hypervisor(leaf, r);
		return;
	}
	if (leaf == 0x15 || leaf == 0x16) {
		leaf_timebase(leaf, r);
		return;
	}
	*r = cpuid(leaf, sub);
	switch (leaf) {
	case 0:
		/* IA32_MISC_ENABLE "Limit CPUID Maxval": leaf 0 reports 2. */
		if (v->misc_enable & MISC_ENABLE_LIMIT_CPUID)
			r->eax = 2;
		else
			r->eax = MAX(r->eax, 0x16u);        /* with 0x15/0x16 */
		break;
	case 1: leaf1(v, r); break;
	case 6: *r = (struct cpuid_regs){ C6_EAX_ARAT, 0, 0, 0 }; break;
	case 7:
		if (sub == 0) {
			/* IA32_TSC_ADJUST is emulated whatever the host has. */
			r->ebx = (r->ebx & C7_EBX_KEEP) | C7_EBX_TSC_ADJUST;
			r->ecx &= C7_ECX_KEEP;
			r->edx &= C7_EDX_KEEP;
		} else {
			*r = (struct cpuid_regs){ 0 };
		}
		break;
	case 0xa: *r = (struct cpuid_regs){ 0 }; break;   /* no PMU */
	case 0xd: xstate_cpuid(v, sub, r); break;
	case 0xb: case 0x1f: leaf_topology(v, sub, r); break;
	default: break;
	}
}

int exit_cpuid(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr;
	struct cpuid_regs r;

	guest_cpuid(v, (uint32_t)g[GPR_RAX], (uint32_t)g[GPR_RCX], &r);
	g[GPR_RAX] = r.eax;
	g[GPR_RBX] = r.ebx;
	g[GPR_RCX] = r.ecx;
	g[GPR_RDX] = r.edx;
	vcpu_skip_insn(v);
	return 0;
}
