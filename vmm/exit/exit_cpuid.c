// SPDX-License-Identifier: BSD-2-Clause
/*
 * CPUID: the host's answer, minus what tickvisor does not virtualize
 * (VMX, SMX, MONITOR, performance monitoring, thermal and machine-check
 * MSRs, MTRRs...), plus the hypervisor leaves and the time base leaves
 * 0x15/0x16 that describe the emulated APIC timer exactly.
 */
#include "drivers/io.h"
#include "vmm/exit/exit.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/platform.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_xstate.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmx/vmx.h"

#define CPUID_TV_SIG_EBX 0x6b636974u     /* "tick" */
#define CPUID_TV_SIG_ECX 0x6f736976u     /* "viso" */
#define CPUID_TV_SIG_EDX 0x00000072u     /* "r\0\0\0" */
#define CPUID_TV_MAX     0x40000010u

/* Leaf 1: what tickvisor does not virtualize (debug store, MONITOR,
 * VMX, SMX, power and thermal management, xTPR, PDCM, DCA; OSXSAVE
 * follows the guest's CR4 in leaf1()). */
#define C1_ECX_DROP (CPUID_1_ECX_DTES64 | CPUID_1_ECX_MONITOR | CPUID_1_ECX_DS_CPL | \
		     CPUID_1_ECX_VMX | CPUID_1_ECX_SMX | CPUID_1_ECX_EIST | CPUID_1_ECX_TM2 | \
		     CPUID_1_ECX_SDBG | CPUID_1_ECX_XTPR | CPUID_1_ECX_PDCM | CPUID_1_ECX_DCA | \
		     CPUID_1_ECX_OSXSAVE)
#define C1_EDX_DROP (CPUID_1_EDX_MCE | CPUID_1_EDX_MTRR | CPUID_1_EDX_MCA | CPUID_1_EDX_PSN | \
		     CPUID_1_EDX_DS | CPUID_1_EDX_ACPI | CPUID_1_EDX_TM | CPUID_1_EDX_PBE)
/* Leaf 7.0: what is safe to expose (no SGX, PT, TSX control, PKS,
 * WAITPKG, speculation-control MSRs that are not emulated). */
#define C7_EBX_KEEP (CPUID_7_EBX_FSGSBASE | CPUID_7_EBX_BMI1 | CPUID_7_EBX_AVX2 | \
		     CPUID_7_EBX_SMEP | CPUID_7_EBX_BMI2 | CPUID_7_EBX_ERMS | CPUID_7_EBX_INVPCID | \
		     CPUID_7_EBX_AVX512F | CPUID_7_EBX_AVX512DQ | CPUID_7_EBX_RDSEED | \
		     CPUID_7_EBX_ADX | CPUID_7_EBX_SMAP | CPUID_7_EBX_AVX512IFMA | \
		     CPUID_7_EBX_CLFLUSHOPT | CPUID_7_EBX_CLWB | CPUID_7_EBX_AVX512PF | \
		     CPUID_7_EBX_AVX512ER | CPUID_7_EBX_AVX512CD | CPUID_7_EBX_SHA | \
		     CPUID_7_EBX_AVX512BW | CPUID_7_EBX_AVX512VL)
#define C7_ECX_KEEP (CPUID_7_ECX_AVX512VBMI | CPUID_7_ECX_AVX512VBMI2 | CPUID_7_ECX_GFNI | \
		     CPUID_7_ECX_VAES | CPUID_7_ECX_VPCLMULQDQ | CPUID_7_ECX_AVX512VNNI | \
		     CPUID_7_ECX_AVX512BITALG | CPUID_7_ECX_AVX512VPOPCNTDQ | CPUID_7_ECX_RDPID)
#define C7_EDX_KEEP (CPUID_7_EDX_AVX512_4VNNIW | CPUID_7_EDX_AVX512_4FMAPS | CPUID_7_EDX_FSRM | \
		     CPUID_7_EDX_AVX512_VP2INTERSECT | CPUID_7_EDX_MD_CLEAR)

/* The guest's registers get the answer, RIP moves past CPUID. Always
 * resumable: guest registers and RIP only (exit_fast_cpuid relies on it),
 * and of the registers only rax and rcx read, rax-rdx written (the entry
 * stub saves no other GPR the C ABI keeps before the hook). */
static inline __attribute__((always_inline)) int cpuid_answer(struct vcpu *v, struct cpuid_regs r)
{
	uint64_t *g = v->regs.gpr;

	g[GPR_RAX] = r.eax;
	g[GPR_RBX] = r.ebx;
	g[GPR_RCX] = r.ecx;
	g[GPR_RDX] = r.edx;
	vcpu_skip_insn(v);
	return EXIT_RESUMABLE;
}

static void leaf1(struct vcpu *v, struct cpuid_regs *r)
{
	uint64_t cr4 = vmread(VMCS_GUEST_CR4);

	r->ecx = (r->ecx & ~(uint32_t)(C1_ECX_DROP | CPUID_1_ECX_X2APIC)) |
		 CPUID_1_ECX_HV | CPUID_1_ECX_TSCDL;
	if (v->guest->spec->opts.x2apic)        /* option x2apic= (vmm/exit/exit_msr.c) */
		r->ecx |= CPUID_1_ECX_X2APIC;
	/* OSXSAVE mirrors the guest's CR4, not the host's. */
	if (cr4 & CR4_OSXSAVE)
		r->ecx |= CPUID_1_ECX_OSXSAVE;
	r->edx &= ~(uint32_t)C1_EDX_DROP;
	/* The APIC feature flag follows IA32_APIC_BASE.EN (SDM). */
	if (vlapic_mode(v->lapic) != VLAPIC_DISABLED)
		r->edx |= CPUID_1_EDX_APIC;
	else
		r->edx &= ~(uint32_t)CPUID_1_EDX_APIC;
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

	if (leaf == 0x15) {     /* TSC = crystal * EBX / EAX; crystal = APIC timer */
		struct timebase_leaf15 l = timebase_leaf15(tb);

		*r = (struct cpuid_regs){ l.eax, l.ebx, l.ecx, 0 };
	} else                    /* 0x16: base, max, bus (APIC timer) MHz */
		*r = (struct cpuid_regs){ (uint32_t)(tb->tsc_hz / 1000000),
					  (uint32_t)(tb->tsc_hz / 1000000),
					  (uint32_t)(tb->apic_hz / 1000000), 0 };
}

/*
 * The leaves tickvisor answers itself: the hypervisor leaves, thermal and
 * power, PMU, topology, XSAVE state (for the guest's XCR0) and the time
 * base. Out of line, and the end of the exit (a tail call from
 * exit_cpuid()): the calls some of them make would otherwise keep a
 * frame around every CPUID exit. Given only v (leaf and sub-leaf are
 * read again, and leaf 0xd, the one built on the host's answer, asks the
 * host again), the tail call moves no other register.
 */
static __attribute__((noinline)) int exit_cpuid_own(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr;
	uint32_t leaf = (uint32_t)g[GPR_RAX], sub = (uint32_t)g[GPR_RCX];
	struct cpuid_regs r;

	switch (leaf) {
	case 6: r = (struct cpuid_regs){ CPUID_6_EAX_ARAT, 0, 0, 0 }; break;
	case 0xa: r = (struct cpuid_regs){ 0 }; break;          /* no PMU */
	case 0xd: r = cpuid(leaf, sub); xstate_cpuid(v, sub, &r); break;
	case 0xb: case 0x1f: leaf_topology(v, sub, &r); break;
	case 0x15: case 0x16: leaf_timebase(leaf, &r); break;
	default: leaf_hypervisor(leaf, &r); break;              /* 0x40000000-0x4fffffff */
	}
	return cpuid_answer(v, r);
}

/*
 * The host's answer, then what differs; the leaves tickvisor answers
 * itself go to exit_cpuid_own(). CPUID runs first whatever the leaf, so
 * that the usual one meets no test before it: for the hypervisor range
 * too, whose host answer is dropped (CPUID has no side effects; a leaf
 * beyond the host's range returns data, never a fault).
 */
int exit_cpuid(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr;
	uint32_t leaf = (uint32_t)g[GPR_RAX], sub = (uint32_t)g[GPR_RCX];
	struct cpuid_regs r = cpuid(leaf, sub);

	switch (leaf) {
	case 0:
		/* IA32_MISC_ENABLE "Limit CPUID Maxval": leaf 0 reports 2. */
		if (v->misc_enable & MISC_ENABLE_LIMIT_CPUID)
			r.eax = 2;
		else
			r.eax = MAX(r.eax, 0x16u);          /* with 0x15/0x16 */
		break;
	case 1: leaf1(v, &r); break;
	case 7:
		if (sub == 0) {
			/* IA32_TSC_ADJUST is emulated whatever the host has. */
			r.ebx = (r.ebx & C7_EBX_KEEP) | CPUID_7_EBX_TSC_ADJUST;
			r.ecx &= C7_ECX_KEEP;
			r.edx &= C7_EDX_KEEP;
		} else {
			r = (struct cpuid_regs){ 0 };
		}
		break;
	case 6: case 0xa: case 0xb: case 0xd: case 0x15: case 0x16: case 0x1f:
		return exit_cpuid_own(v);
	case 0x80000001:
		/* IA32_MISC_ENABLE "XD Bit Disable" clears the NX flag. */
		if (v->misc_enable & MISC_ENABLE_XD_DISABLE)
			r.edx &= ~(uint32_t)CPUID_80000001_EDX_NX;
		break;
	default:
		if (leaf >= 0x40000000 && leaf <= 0x4fffffff)
			return exit_cpuid_own(v);
		break;
	}
	return cpuid_answer(v, r);
}
