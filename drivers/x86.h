/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Architectural constants of x86-64, spelled once (SDM Vol. 3A, "System
 * Architecture Overview" and "Control Registers"; Vol. 4, "Model-Specific
 * Registers"): MSR numbers, segment attributes, control-register, EFER,
 * RFLAGS and XCR0 bits, CPUID feature bits. Plain C without inline
 * assembly, at the bottom of the layers, so every room and the
 * host-compiled unit tests may include it; the privileged instructions
 * that use these numbers are in drivers/io.h.
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

/*
 * Segment descriptor attributes (SDM Vol. 3A, "Segment Descriptors"):
 * descriptor bits 55:40, which is also the access-rights format of the
 * VMCS (SDM Vol. 3C, "Guest Register State"; there bits 11:8, the limit's
 * 19:16 in a descriptor, are 0 and bit 16 is VMX's "unusable").
 */
#define SEG_AR_TYPE     BITS(3, 0)
#define   SEG_TYPE_LDT          0x2u
#define   SEG_TYPE_DATA_RWA     0x3u    /* data, read/write, accessed */
#define   SEG_TYPE_TSS_AVAIL    0x9u    /* 32-bit or 64-bit TSS, available */
#define   SEG_TYPE_CODE_RXA     0xbu    /* code, execute/read, accessed */
#define   SEG_TYPE_TSS_BUSY     0xbu    /* 32-bit or 64-bit TSS, busy */
#define SEG_AR_S        BIT(4)          /* code or data (else system) */
#define SEG_AR_DPL      BITS(6, 5)
#define SEG_AR_P        BIT(7)
#define SEG_AR_L        BIT(13)         /* 64-bit code */
#define SEG_AR_DB       BIT(14)         /* default operation size 32 */
#define SEG_AR_G        BIT(15)         /* limit in 4-KiByte units */

/* The ring-0 segments tickvisor builds: flat 4 GiB code and data (host
 * GDT, AP trampoline, a Multiboot guest's start state), 64-bit code, the
 * real-mode segments of an INIT/SIPI start, and the system segments. */
#define SEG_AR_CODE64   (SEG_AR_G | SEG_AR_L | SEG_AR_P | SEG_AR_S | SEG_TYPE_CODE_RXA)
#define SEG_AR_CODE32   (SEG_AR_G | SEG_AR_DB | SEG_AR_P | SEG_AR_S | SEG_TYPE_CODE_RXA)
#define SEG_AR_DATA32   (SEG_AR_G | SEG_AR_DB | SEG_AR_P | SEG_AR_S | SEG_TYPE_DATA_RWA)
#define SEG_AR_CODE16   (SEG_AR_P | SEG_AR_S | SEG_TYPE_CODE_RXA)
#define SEG_AR_DATA16   (SEG_AR_P | SEG_AR_S | SEG_TYPE_DATA_RWA)
#define SEG_AR_TSS_BUSY (SEG_AR_P | SEG_TYPE_TSS_BUSY)
#define SEG_AR_TSS_AVAIL (SEG_AR_P | SEG_TYPE_TSS_AVAIL)
#define SEG_AR_LDT      (SEG_AR_P | SEG_TYPE_LDT)

/* An 8-byte segment descriptor from access rights, base and a 20-bit limit. */
#define SEG_DESC(ar, base, limit) \
	(((uint64_t)(limit) & 0xffffu) | (((uint64_t)(base) & 0xffffffu) << 16) | \
	 ((uint64_t)(ar) << 40) | ((((uint64_t)(limit) >> 16) & 0xfu) << 48) | \
	 ((((uint64_t)(base) >> 24) & 0xffu) << 56))
#define SEG_DESC_FLAT(ar) SEG_DESC(ar, 0, 0xfffffu)

/* IA32_FEATURE_CONTROL (SDM Vol. 3C, "Enabling and Entering VMX Operation"). */
#define FEATURE_CONTROL_LOCK          BIT(0)
#define FEATURE_CONTROL_VMX_IN_SMX    BIT(1)
#define FEATURE_CONTROL_VMX_OUT_SMX   BIT(2)

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
#define CR0_MSW_LMSW (CR0_PE | CR0_MP | CR0_EM | CR0_TS)   /* the bits LMSW loads */
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
#define CR4_MCE        BIT(6)
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
#define RFLAGS_RF      BIT(16)          /* resume: no instruction breakpoint */
#define RFLAGS_VM      BIT(17)
#define RFLAGS_RSVD    (BITS(63, 22) | BIT(15) | BIT(5) | BIT(3))      /* read 0 */

/* SDM Vol. 3B, "Debug Status Register (DR6)" and "IA32_DEBUGCTL MSR". */
#define DR6_BS         BIT(14)          /* single-step trap */
#define DEBUGCTL_BTF   BIT(1)           /* single-step on branches */

/* XCR0 state components (SDM Vol. 1, "Enabling the XSAVE Feature Set and
 * XSAVE-Enabled Features"). AVX-512 is three components enabled together. */
#define XCR0_X87        BIT(0)
#define XCR0_SSE        BIT(1)
#define XCR0_AVX        BIT(2)
#define XCR0_OPMASK     BIT(5)
#define XCR0_ZMM_HI256  BIT(6)
#define XCR0_HI16_ZMM   BIT(7)
#define XCR0_AVX512     (XCR0_OPMASK | XCR0_ZMM_HI256 | XCR0_HI16_ZMM)

/*
 * CPUID feature bits (SDM Vol. 2A, "CPUID", tables "Feature Information
 * Returned in the ECX/EDX Register" and "Information Returned by CPUID").
 * Named CPUID_<leaf>[_<sub-leaf>]_<register>_<feature>.
 */
#define CPUID_1_ECX_SSE3        BIT(0)
#define CPUID_1_ECX_DTES64      BIT(2)
#define CPUID_1_ECX_MONITOR     BIT(3)
#define CPUID_1_ECX_DS_CPL      BIT(4)
#define CPUID_1_ECX_VMX         BIT(5)
#define CPUID_1_ECX_SMX         BIT(6)
#define CPUID_1_ECX_EIST        BIT(7)
#define CPUID_1_ECX_TM2         BIT(8)
#define CPUID_1_ECX_SDBG        BIT(11)
#define CPUID_1_ECX_XTPR        BIT(14)
#define CPUID_1_ECX_PDCM        BIT(15)
#define CPUID_1_ECX_DCA         BIT(18)
#define CPUID_1_ECX_X2APIC      BIT(21)
#define CPUID_1_ECX_TSCDL       BIT(24)
#define CPUID_1_ECX_HYPERVISOR  BIT(31)      /* a hypervisor is present */
#define CPUID_1_ECX_XSAVE       BIT(26)
#define CPUID_1_ECX_OSXSAVE     BIT(27)
#define CPUID_1_ECX_HV          BIT(31)         /* a hypervisor is present */

#define CPUID_1_EDX_MCE         BIT(7)
#define CPUID_1_EDX_APIC        BIT(9)
#define CPUID_1_EDX_MTRR        BIT(12)
#define CPUID_1_EDX_MCA         BIT(14)
#define CPUID_1_EDX_PSN         BIT(18)
#define CPUID_1_EDX_DS          BIT(21)
#define CPUID_1_EDX_ACPI        BIT(22)         /* thermal monitor MSRs */
#define CPUID_1_EDX_TM          BIT(29)
#define CPUID_1_EDX_PBE         BIT(31)

#define CPUID_6_EAX_ARAT        BIT(2)          /* APIC timer always running */

#define CPUID_7_EBX_FSGSBASE    BIT(0)
#define CPUID_7_EBX_TSC_ADJUST  BIT(1)
#define CPUID_7_EBX_BMI1        BIT(3)
#define CPUID_7_EBX_AVX2        BIT(5)
#define CPUID_7_EBX_SMEP        BIT(7)
#define CPUID_7_EBX_BMI2        BIT(8)
#define CPUID_7_EBX_ERMS        BIT(9)
#define CPUID_7_EBX_INVPCID     BIT(10)
#define CPUID_7_EBX_AVX512F     BIT(16)
#define CPUID_7_EBX_AVX512DQ    BIT(17)
#define CPUID_7_EBX_RDSEED      BIT(18)
#define CPUID_7_EBX_ADX         BIT(19)
#define CPUID_7_EBX_SMAP        BIT(20)
#define CPUID_7_EBX_AVX512IFMA  BIT(21)
#define CPUID_7_EBX_CLFLUSHOPT  BIT(23)
#define CPUID_7_EBX_CLWB        BIT(24)
#define CPUID_7_EBX_AVX512PF    BIT(26)
#define CPUID_7_EBX_AVX512ER    BIT(27)
#define CPUID_7_EBX_AVX512CD    BIT(28)
#define CPUID_7_EBX_SHA         BIT(29)
#define CPUID_7_EBX_AVX512BW    BIT(30)
#define CPUID_7_EBX_AVX512VL    BIT(31)

#define CPUID_7_ECX_AVX512VBMI  BIT(1)
#define CPUID_7_ECX_AVX512VBMI2 BIT(6)
#define CPUID_7_ECX_GFNI        BIT(8)
#define CPUID_7_ECX_VAES        BIT(9)
#define CPUID_7_ECX_VPCLMULQDQ  BIT(10)
#define CPUID_7_ECX_AVX512VNNI  BIT(11)
#define CPUID_7_ECX_AVX512BITALG BIT(12)
#define CPUID_7_ECX_AVX512VPOPCNTDQ BIT(14)
#define CPUID_7_ECX_RDPID       BIT(22)

#define CPUID_7_EDX_AVX512_4VNNIW BIT(2)
#define CPUID_7_EDX_AVX512_4FMAPS BIT(3)
#define CPUID_7_EDX_FSRM        BIT(4)
#define CPUID_7_EDX_AVX512_VP2INTERSECT BIT(8)
#define CPUID_7_EDX_MD_CLEAR    BIT(10)

#define CPUID_D_1_EAX_XSAVEOPT  BIT(0)
#define CPUID_D_1_EAX_XSAVEC    BIT(1)
#define CPUID_D_1_EAX_XGETBV1   BIT(2)          /* XGETBV with ECX = 1 */
/* Sub-leaf n > 1: the component is 64-byte aligned in the compacted form. */
#define CPUID_D_N_ECX_ALIGN64   BIT(1)

#define CPUID_80000001_EDX_NX      BIT(20)      /* execute disable (EFER.NXE) */
#define CPUID_80000001_EDX_PDPE1GB BIT(26)
#define CPUID_80000001_EDX_RDTSCP  BIT(27)
#define CPUID_80000007_EDX_INVTSC  BIT(8)       /* invariant TSC */

#endif
