/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * VMX capability probing (SDM Vol. 3D, appendix "VMX Capability Reporting
 * Facility"). Control words are kept as read: allowed-0 settings in the
 * low 32 bits, allowed-1 settings in the high 32 bits.
 */
#ifndef VMX_CAPS_H
#define VMX_CAPS_H

#include "drivers/base.h"

enum vmx_msr {
	MSR_VMX_BASIC          = 0x480,
	MSR_VMX_PINBASED       = 0x481,
	MSR_VMX_PROCBASED      = 0x482,
	MSR_VMX_EXIT           = 0x483,
	MSR_VMX_ENTRY          = 0x484,
	MSR_VMX_MISC           = 0x485,
	MSR_VMX_CR0_FIXED0     = 0x486,
	MSR_VMX_CR0_FIXED1     = 0x487,
	MSR_VMX_CR4_FIXED0     = 0x488,
	MSR_VMX_CR4_FIXED1     = 0x489,
	MSR_VMX_PROCBASED2     = 0x48b,
	MSR_VMX_EPT_VPID_CAP   = 0x48c,
	MSR_VMX_TRUE_PINBASED  = 0x48d,
	MSR_VMX_TRUE_PROCBASED = 0x48e,
	MSR_VMX_TRUE_EXIT      = 0x48f,
	MSR_VMX_TRUE_ENTRY     = 0x490,
};

#define VMX_BASIC_REVISION    BITS(30, 0)
#define VMX_BASIC_VMCS_SIZE   BITS(44, 32)
#define VMX_BASIC_MEMTYPE     BITS(53, 50)
#define VMX_BASIC_TRUE_CTLS   BIT(55)
#define VMX_MEMTYPE_WB        6u
#define VMX_MISC_PREEMPT_RATE BITS(4, 0)
/* VM exits store EFER.LMA in the "IA-32e mode guest" entry control. */
#define VMX_MISC_EXIT_SAVES_LMA BIT(5)
#define VMX_MISC_ACT_HLT      BIT(6)
#define VMX_MISC_ACT_SHUTDOWN BIT(7)
#define VMX_MISC_ACT_WFS      BIT(8)

struct vmx_caps {
	bool vmx;                       /* CPUID.1:ECX[5] */
	const char *unusable;           /* why tickvisor cannot use VMX, or NULL */
	bool locked_by_us;              /* we set IA32_FEATURE_CONTROL */
	uint32_t revision;
	uint32_t vmcs_size;
	bool true_ctls;
	uint64_t pin, proc, proc2, exit, entry;  /* allowed-0 | allowed-1 << 32 */
	uint64_t misc, ept_vpid;
	uint64_t cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1;
	bool preempt_timer;
	unsigned preempt_rate;          /* timer counts once per 2^rate TSC ticks */
	bool ept, ept_2m, ept_1g, ept_wb, ept_walk4, vpid, invept, unrestricted;
	unsigned vmcs_memtype;          /* IA32_VMX_BASIC[53:50]: 6 write-back */
	const char *preempt_erratum;    /* why a preemption timer is not used, or NULL */
	bool tpr_shadow, apic_access, apic_reg_virt, vid, x2apic_virt, posted_intr;
	bool act_hlt, act_wfs;
};

/* Reads every capability of the calling CPU and enables VMX in
 * IA32_FEATURE_CONTROL when the firmware left it unlocked. Returns true
 * when tickvisor can run guests (EPT + unrestricted guest are required);
 * otherwise c->unusable names the reason. */
bool vmx_probe(struct vmx_caps *c);

/* Whether a CPU with capabilities `ap` can run what tickvisor set up
 * from `bsp`'s (vmx/caps_cmp.c); if not, `why` names the first thing the
 * AP lacks. */
bool vmx_caps_compatible(const struct vmx_caps *bsp, const struct vmx_caps *ap, char *why,
			 size_t n);

/* May `bit` of a control be 1 / must it be 1? */
static inline bool vmx_ctl_allowed1(uint64_t ctl, uint32_t bit) { return ctl & BIT(32 + bit); }

#endif
