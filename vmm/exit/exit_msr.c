// SPDX-License-Identifier: BSD-2-Clause
/*
 * RDMSR/WRMSR exits. A known set of MSRs is emulated here (or handed to
 * the virtual APIC and timer); every other MSR raises #GP in the guest,
 * as on a CPU that does not implement it.
 */
#include "drivers/apic.h"
#include "drivers/io.h"
#include "vmm/exit/exit.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/log.h"
#include "vmm/vcpu/msr_bitmap.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmm/vcpu/vcpu_tsc.h"
#include "vmx/vmx.h"

/*
 * IA32_MISC_ENABLE: the bits the SDM's architectural MSR table makes
 * read/write read back what was written: fast strings, automatic thermal
 * control, limit CPUID maxval, xTPR message disable; Enhanced SpeedStep
 * (16) and MONITOR FSM (18), which switch features tickvisor hides
 * (CPUID.1:ECX EIST, MONITOR), are kept without effect, as KVM keeps them
 * (kvm_set_msr_common stores the value; bit 18 alters CPUID only without
 * its default quirk KVM_X86_QUIRK_MISC_ENABLE_NO_MWAIT, and then #GPs it
 * without SSE3, as the SDM allows: so bit 18 needs SSE3 here). XD bit
 * disable (34) is read/write where the processor has NX, with the SDM's
 * effects: CPUID.80000001H:EDX[20] reads 0 while it is set
 * (vmm/exit/exit_cpuid.c) and EFER.NXE is then reserved, so EFER writes exit
 * while it is set (efer_write()). KVM stores bit 34 without effect;
 * Bochs has no IA32_MISC_ENABLE outside its configurable MSR table, so the
 * SDM alone defines the effects. Setting it leaves a set EFER.NXE as it is
 * (the SDM gives the bit no effect on EFER's value; the next EFER write
 * must clear NXE). The read-only bits (performance monitoring available,
 * BTS and PEBS unavailable) keep their value whatever is written, as KVM
 * keeps EMON (KVM #GPs a change of BTS/PEBS unavailable instead; the SDM
 * says only "RO"). The rest is reserved and a 1 in it raises #GP (Bochs's
 * configurable MSR table #GPs reserved bits the same way). Limit CPUID
 * maxval is honoured: the SDM defines it by its effect (CPUID.0:EAX
 * reads 2), which vmm/exit/exit_cpuid.c applies.
 */
#define MISC_ENABLE_RW (MISC_ENABLE_FAST_STRING | MISC_ENABLE_AUTO_THERMAL | MISC_ENABLE_EIST | \
			MISC_ENABLE_LIMIT_CPUID | MISC_ENABLE_XTPR_DISABLE)
#define MISC_ENABLE_RO (MISC_ENABLE_PERFMON | MISC_ENABLE_BTS_UNAVAIL | MISC_ENABLE_PEBS_UNAVAIL)

#define MSR_X2APIC_ICR LAPIC_MSR(LAPIC_ICR_LO)

/* x2apic=off (QEMU's -cpu ...,-x2apic): CPUID.1:ECX[21] reads 0, so
 * the x2APIC MSRs do not exist and IA32_APIC_BASE.EXTD is reserved (SDM
 * Vol. 3A, "x2APIC Initialization": EXTD is writable only where CPUID
 * shows x2APIC). */
static bool msr_x2apic_hidden(const struct vcpu *v, uint32_t msr, uint64_t val, bool write)
{
	if (v->cached_x2apic)
		return false;
	if (msr >= MSR_X2APIC_FIRST && msr <= MSR_X2APIC_LAST)
		return true;
	return write && msr == MSR_IA32_APIC_BASE && (val & APIC_BASE_EXTD);
}

/* Returns 0, or -1 to raise #GP. */
static int msr_read(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	switch (msr) {
	/* Locked with VMX off: no nested VMX. */
	case MSR_IA32_FEATURE_CONTROL: *val = FEATURE_CONTROL_LOCK; return 0;
	case MSR_IA32_PLATFORM_ID:
	case MSR_IA32_BIOS_SIGN_ID:
	case MSR_IA32_MCG_CAP:
	case MSR_IA32_MCG_STATUS:      *val = 0; return 0;
	case MSR_IA32_MISC_ENABLE:     *val = v->misc_enable; return 0;
	case MSR_IA32_TSC_ADJUST:      *val = v->tsc_adjust; return 0;
	default: break;
	}
	if (msr_x2apic_hidden(v, msr, 0, false))
		return -1;
	return vapic_msr_read(v, msr, val);
}

/* The read/write bits of IA32_MISC_ENABLE on this processor. */
static uint64_t misc_enable_rw(void)
{
	uint64_t rw = MISC_ENABLE_RW;

	if (cpuid(1, 0).ecx & CPUID_1_ECX_SSE3)
		rw |= MISC_ENABLE_MONITOR;
	if (cpuid(0x80000001, 0).edx & CPUID_80000001_EDX_NX)
		rw |= MISC_ENABLE_XD_DISABLE;
	return rw;
}

static int misc_enable_write(struct vcpu *v, uint64_t val)
{
	uint64_t rw = misc_enable_rw();
	bool xd_off = val & MISC_ENABLE_XD_DISABLE;

	if (val & ~(rw | MISC_ENABLE_RO))
		return -1;
	v->misc_enable = (val & rw) | (v->misc_enable & MISC_ENABLE_RO);
	/* EFER.NXE is reserved only while XD is disabled: only then do the
	 * guest's EFER writes need checking here. */
	msr_bitmap_set(v->msr_bitmap, MSR_EFER, false, xd_off);
	return 0;
}

/* IA32_EFER writes, which exit only while IA32_MISC_ENABLE disables XD:
 * the checks Bochs (SetEFER) and KVM (set_efer) make agree with the SDM
 * (Vol. 3A, "IA32_EFER", and WRMSR's #GP conditions): #GP for a reserved
 * bit (NXE without NX in CPUID, Intel has no bits above 11), for a change
 * of LME while paging is on; LMA is the processor's, writes leave it. */
static int efer_write(struct vcpu *v, uint64_t val)
{
	uint64_t old = vmread(VMCS_GUEST_EFER);
	uint64_t ok = EFER_SCE | EFER_LME | EFER_LMA;

	if (!(v->misc_enable & MISC_ENABLE_XD_DISABLE) &&
	    (cpuid(0x80000001, 0).edx & CPUID_80000001_EDX_NX))
		ok |= EFER_NXE;
	if (val & ~ok)
		return -1;
	if ((vcpu_cr0_guest(v) & CR0_PG) && ((val ^ old) & EFER_LME))
		return -1;
	vmwrite(VMCS_GUEST_EFER, (val & ~EFER_LMA) | (old & EFER_LMA));
	return 0;
}

/* 0, -1 to raise #GP, or EXIT_RESUMABLE (see exit_wrmsr). */
static int msr_write(struct vcpu *v, uint32_t msr, uint64_t val)
{
	switch (msr) {
	case MSR_IA32_BIOS_SIGN_ID:     /* microcode update handshake: no-op */
		return 0;
	case MSR_IA32_MISC_ENABLE:
		return misc_enable_write(v, val);
	case MSR_EFER:
		return efer_write(v, val);
	case MSR_IA32_TSC:
		vcpu_tsc_write(v, val);
		return 0;
	case MSR_IA32_TSC_ADJUST:
		vcpu_tsc_write_adjust(v, val);
		return 0;
	default: break;
	}
	if (msr_x2apic_hidden(v, msr, val, true))
		return -1;
	return vapic_msr_write(v, msr, val);
}

int exit_rdmsr(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr, val = 0;
	uint32_t msr = (uint32_t)g[GPR_RCX];

	if (msr_read(v, msr, &val)) {
		pr_debug("guest %s: vcpu%u: RDMSR %#x -> #GP", v->guest->spec->name, v->id, msr);
		vcpu_inject_gp(v);
		return 0;
	}
	g[GPR_RAX] = (uint32_t)val;
	g[GPR_RDX] = val >> 32;
	vcpu_skip_insn(v);
	return 0;
}

/* IA32_TSC_DEADLINE, which is no x2APIC MSR (x2apic=off keeps it) and
 * never raises #GP: msr_write() would hand it to vapic_msr_write() all
 * the same. */
static __attribute__((noinline)) int wrmsr_tsc_deadline(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr;

	/* RIP first, so that the write is a tail call: it reads no guest
	 * register and no instruction state. */
	vcpu_skip_insn(v);
	return vapic_deadline_write(v, (g[GPR_RDX] << 32) | (uint32_t)g[GPR_RAX]);
}

/* Every other write: msr_write(), #GP for what it refuses. */
static __attribute__((noinline)) int wrmsr_other(struct vcpu *v, uint32_t msr)
{
	uint64_t *g = v->regs.gpr;
	uint64_t val = (g[GPR_RDX] << 32) | (uint32_t)g[GPR_RAX];
	int r = msr_write(v, msr, val);

	if (r < 0) {
		pr_debug("guest %s: vcpu%u: WRMSR %#x <- %#lx -> #GP", v->guest->spec->name,
			 v->id, msr, (unsigned long)val);
		vcpu_inject_gp(v);
		return 0;
	}
	vcpu_skip_insn(v);
	return r;
}

/*
 * An x2APIC ICR write vlapic_x2apic_icr_fast() takes (a fixed IPI to
 * itself or one x2APIC ID) is resumable and skips the MSR dispatch: it is
 * on the path of every IPI, from the exit to the target's IRR. It leaves
 * intr_dirty alone, unlike vapic_msr_write(): an IPI changes this vCPU's
 * IRR only when it is its own target, and then vlapic_accept() notifies
 * it (op_notify). With x2apic=off the APIC is never in x2APIC mode, so
 * the fast path declines and the write raises #GP in wrmsr_other().
 */
static __attribute__((noinline)) int wrmsr_x2apic_icr(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr;

	if (!vlapic_x2apic_icr_fast(v->lapic, (g[GPR_RDX] << 32) | (uint32_t)g[GPR_RAX]))
		return wrmsr_other(v, MSR_X2APIC_ICR);
	vcpu_skip_insn(v);
	return EXIT_RESUMABLE;
}

/* The writes a guest makes per timer tick and per IPI are resumable
 * (vmm/exit/exit_fast.c) and come first; a dispatch without a frame
 * (tail calls), so that each path pays only for its own. Of the guest's
 * registers a WRMSR handler reads rax, rcx and rdx only, and it never
 * ends the guest: the entry stub saves no other GPR the C ABI keeps
 * before the hook (vmx/regs.h). */
int exit_wrmsr(struct vcpu *v)
{
	uint32_t msr = (uint32_t)v->regs.gpr[GPR_RCX];

	if (msr == MSR_IA32_TSC_DEADLINE)
		return wrmsr_tsc_deadline(v);
	if (msr == MSR_X2APIC_ICR)
		return wrmsr_x2apic_icr(v);
	return wrmsr_other(v, msr);
}
