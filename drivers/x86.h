/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Architectural constants of x86-64, spelled once (SDM Vol. 3A, "System
 * Architecture Overview" and "Control Registers"; Vol. 4, "Model-Specific
 * Registers"): MSR numbers, control-register, EFER and RFLAGS bits. Plain
 * C without inline assembly, at the bottom of the layers, so every room
 * and the host-compiled unit tests may include it; the privileged
 * instructions that use these numbers are in drivers/io.h.
 */
#ifndef DRIVERS_X86_H
#define DRIVERS_X86_H

#include "drivers/base.h"

/* Architectural MSRs (SDM Vol. 4, "Architectural MSRs"). The VMX
 * capability MSRs are with their decoding in vmx/caps.h. */
enum msr {
	MSR_IA32_TSC             = 0x010,
	MSR_IA32_PLATFORM_ID     = 0x017,
	MSR_IA32_APIC_BASE       = 0x01b,
	MSR_IA32_FEATURE_CONTROL = 0x03a,
	MSR_IA32_TSC_ADJUST      = 0x03b,
	MSR_IA32_SPEC_CTRL       = 0x048,
	MSR_IA32_BIOS_SIGN_ID    = 0x08b,
	MSR_IA32_MTRRCAP         = 0x0fe,
	MSR_IA32_SYSENTER_CS     = 0x174,
	MSR_IA32_SYSENTER_ESP    = 0x175,
	MSR_IA32_SYSENTER_EIP    = 0x176,
	MSR_IA32_MCG_CAP         = 0x179,
	MSR_IA32_MCG_STATUS      = 0x17a,
	MSR_IA32_MISC_ENABLE     = 0x1a0,
	MSR_IA32_PAT             = 0x277,
	MSR_IA32_MTRR_DEF_TYPE   = 0x2ff,
	MSR_IA32_TSC_DEADLINE    = 0x6e0,
	MSR_X2APIC_FIRST         = 0x800,
	MSR_X2APIC_LAST          = 0x8ff,
	MSR_EFER                 = 0xc0000080,
	MSR_STAR                 = 0xc0000081,
	MSR_LSTAR                = 0xc0000082,
	MSR_CSTAR                = 0xc0000083,
	MSR_SFMASK               = 0xc0000084,
	MSR_FS_BASE              = 0xc0000100,
	MSR_GS_BASE              = 0xc0000101,
	MSR_KERNEL_GS_BASE       = 0xc0000102,
	MSR_TSC_AUX              = 0xc0000103,
};

/* IA32_EFER (SDM Vol. 3A, "Extended Feature Enable Register"). */
#define EFER_SCE  BIT(0)
#define EFER_LME  BIT(8)
#define EFER_LMA  BIT(10)
#define EFER_NXE  BIT(11)

/* SDM Vol. 3A, "Control Registers". */
#define CR0_PE    BIT(0)
#define CR0_MP    BIT(1)
#define CR0_EM    BIT(2)
#define CR0_TS    BIT(3)
#define CR0_ET    BIT(4)
#define CR0_NE    BIT(5)
#define CR0_WP    BIT(16)
#define CR0_AM    BIT(18)
#define CR0_NW    BIT(29)
#define CR0_CD    BIT(30)
#define CR0_PG    BIT(31)

#define CR4_VME        BIT(0)
#define CR4_PSE        BIT(4)
#define CR4_PAE        BIT(5)
#define CR4_PGE        BIT(7)
#define CR4_OSFXSR     BIT(9)
#define CR4_OSXMMEXCPT BIT(10)
#define CR4_LA57       BIT(12)
#define CR4_VMXE       BIT(13)
#define CR4_FSGSBASE   BIT(16)
#define CR4_PCIDE      BIT(17)
#define CR4_OSXSAVE    BIT(18)

/* SDM Vol. 1, "EFLAGS Register". */
#define RFLAGS_FIXED   BIT(1)           /* reads 1 */
#define RFLAGS_TF      BIT(8)
#define RFLAGS_IF      BIT(9)
#define RFLAGS_DF      BIT(10)          /* string instructions count down */
#define RFLAGS_VM      BIT(17)

#endif
