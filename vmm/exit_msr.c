// SPDX-License-Identifier: BSD-2-Clause
/*
 * RDMSR/WRMSR exits. A known set of MSRs is emulated here (or handed to
 * the virtual APIC and timer); every other MSR raises #GP in the guest,
 * as on a CPU that does not implement it.
 */
#include "drivers/io.h"
#include "vmm/exit.h"
#include "vmm/lapic_glue.h"
#include "vmm/log.h"
#include "vmm/msr.h"
#include "vmm/vcpu_run.h"
#include "vmx/vmx.h"

#define FEATURE_CONTROL_LOCKED 0x1ull   /* locked, VMX off: no nested VMX */
#define MISC_ENABLE_FAST_STRING BIT(0)
#define MISC_ENABLE_BTS_UNAVAIL BIT(11)
#define MISC_ENABLE_PEBS_UNAVAIL BIT(12)
#define MSR_IA32_PLATFORM_ID 0x17u
#define MSR_IA32_MCG_CAP     0x179u
#define MSR_IA32_MCG_STATUS  0x17au

/* Returns 0, or -1 to raise #GP. */
static int msr_read(struct vcpu *v, uint32_t msr, uint64_t *val)
{
	switch (msr) {
	case MSR_IA32_FEATURE_CONTROL: *val = FEATURE_CONTROL_LOCKED; return 0;
	case MSR_IA32_PLATFORM_ID:
	case MSR_IA32_BIOS_SIGN_ID:
	case MSR_IA32_MCG_CAP:
	case MSR_IA32_MCG_STATUS:      *val = 0; return 0;
	case MSR_IA32_MISC_ENABLE:
		*val = MISC_ENABLE_FAST_STRING | MISC_ENABLE_BTS_UNAVAIL | MISC_ENABLE_PEBS_UNAVAIL;
		return 0;
	case MSR_IA32_TSC_ADJUST:      *val = v->tsc_adjust; return 0;
	default: break;
	}
	return vcpu_msr_read_apic(v, msr, val);
}

static int msr_write(struct vcpu *v, uint32_t msr, uint64_t val)
{
	switch (msr) {
	case MSR_IA32_BIOS_SIGN_ID:     /* microcode update handshake: no-op */
		return 0;
	case MSR_IA32_MISC_ENABLE:      /* keeps its fixed value */
		return 0;
	case MSR_IA32_TSC:
		vcpu_set_guest_tsc(v, val);
		return 0;
	case MSR_IA32_TSC_ADJUST:
		vcpu_set_tsc_adjust(v, val);
		return 0;
	default: break;
	}
	return vcpu_msr_write_apic(v, msr, val);
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

int exit_wrmsr(struct vcpu *v)
{
	uint64_t *g = v->regs.gpr;
	uint32_t msr = (uint32_t)g[GPR_RCX];
	uint64_t val = (g[GPR_RDX] << 32) | (uint32_t)g[GPR_RAX];

	if (msr_write(v, msr, val)) {
		pr_debug("guest %s: vcpu%u: WRMSR %#x <- %#lx -> #GP", v->guest->spec->name,
			 v->id, msr, (unsigned long)val);
		vcpu_inject_gp(v);
		return 0;
	}
	vcpu_skip_insn(v);
	return 0;
}
