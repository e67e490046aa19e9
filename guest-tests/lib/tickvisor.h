/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Detecting tickvisor and talking to it.
 *
 * Detection: CPUID.1:ECX[31] (hypervisor present) and the vendor leaf
 * 0x40000000 with EBX:ECX:EDX = "tickvisor\0\0\0".
 *
 * Hypercall ABI (VMCALL): RAX = function, RBX/RCX/RDX = arguments; the
 * result is in RAX (more values in RBX/RCX/RDX); RAX = (uint64_t)-1 for an
 * unknown function. Natively VMCALL raises #UD; tv_hypercall() catches
 * that and returns TV_HC_ERROR too, but tests check tickvisor_present().
 *
 *   TV_HC_PING   -> RAX = TV_HC_PING_REPLY
 *   TV_HC_EXITS  RBX = basic exit reason (0..69) or TV_EXITS_TOTAL
 *                -> RAX = VM exits of that reason this guest took so far,
 *                   this VMCALL's own exit included
 *   TV_HC_INFO   -> RAX = TSC Hz, RBX = emulated APIC timer Hz,
 *                   RCX = TV_INFO_* flags, RDX = number of vCPUs
 *   TV_HC_HOST_NMI  RBX = vCPU index -> a host NMI to that vCPU's CPU;
 *                   RAX = host NMIs that CPU handled so far, or
 *                   TV_HC_ERROR (bad index, not handled within 1 ms)
 *   TV_HC_EXIT_COST -> RAX = TSC cycles of one VM entry plus one VM exit
 *                   as tickvisor measured them at this vCPU's start
 *                   (RBX entry, RCX exit; 0 if it could not measure)
 *   TV_HC_HPET_STRAYS -> only with the global option inject=hpet-strays:
 *                   stray HPET interrupts on this vCPU's CPU until its
 *                   I/O APIC input is masked; RAX = 0 then, else
 *                   TV_HC_ERROR (not injected, timer not on a level HPET
 *                   comparator)
 */
#ifndef GUEST_TICKVISOR_H
#define GUEST_TICKVISOR_H

#include "lib/bits.h"

#define TV_CPUID_SIGNATURE      "tickvisor\0\0\0"       /* 12 bytes */

enum tv_hypercall_nr {
	TV_HC_PING = 0,
	TV_HC_EXITS = 1,
	TV_HC_INFO = 2,
	TV_HC_HOST_NMI = 3,
	TV_HC_EXIT_COST = 4,
	TV_HC_HPET_STRAYS = 5,
};
#define TV_HC_PING_REPLY        UINT64_C(0x7469636b)   /* "tick" */
#define TV_HC_ERROR             (~UINT64_C(0))   /* unknown function */
#define TV_EXITS_TOTAL          (~UINT64_C(0))   /* TV_HC_EXITS: all reasons */

/* TV_HC_INFO RCX */
#define TV_INFO_APICV           BIT(0)
#define TV_INFO_TIMER           BITS(3, 1)
#define   TV_TIMER_PREEMPT          1u
#define   TV_TIMER_LAPIC            2u
#define   TV_TIMER_HPET             3u
#define   TV_TIMER_POSTED           4u      /* a housekeeping CPU posts it */
#define TV_INFO_X2APIC          BIT(4)  /* the config offers x2APIC (x2apic=on) */

/* Basic exit reasons (Intel SDM Vol. 3D, "VMX Basic Exit Reasons") that
 * tests count with tv_exits(). */
enum vmx_exit_reason {
	VMX_EXIT_EXT_INTR = 1, VMX_EXIT_TRIPLE_FAULT = 2, VMX_EXIT_INIT = 3,
	VMX_EXIT_SIPI = 4, VMX_EXIT_INTR_WINDOW = 7, VMX_EXIT_CPUID = 10,
	VMX_EXIT_HLT = 12, VMX_EXIT_RDPMC = 15, VMX_EXIT_VMCALL = 18, VMX_EXIT_VMXOFF = 26,
	VMX_EXIT_CR_ACCESS = 28, VMX_EXIT_IO = 30, VMX_EXIT_RDMSR = 31, VMX_EXIT_WRMSR = 32,
	VMX_EXIT_TPR_BELOW = 43, VMX_EXIT_APIC_ACCESS = 44, VMX_EXIT_EOI_INDUCED = 45,
	VMX_EXIT_EPT_VIOLATION = 48, VMX_EXIT_EPT_MISCONFIG = 49,
	VMX_EXIT_PREEMPT_TIMER = 52, VMX_EXIT_XSETBV = 55, VMX_EXIT_APIC_WRITE = 56,
	VMX_EXIT_NR = 70,
};

struct tv_info {
	uint64_t tsc_hz;
	uint64_t apic_timer_hz;
	uint64_t flags;                 /* TV_INFO_* */
	uint64_t nr_vcpus;
};

/* Some hypervisor sets CPUID.1:ECX[31]. */
bool hypervisor_present(void);
/* The 12-byte vendor signature of leaf 0x40000000, NUL-terminated in
 * buf; false (and buf "") without a hypervisor. */
bool hypervisor_name(char buf[13]);
bool tickvisor_present(void);

/* Returns RAX; out (may be NULL) gets RAX, RBX, RCX, RDX. */
uint64_t tv_hypercall(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t out[4]);
/* VM exits with basic reason `reason` (or TV_EXITS_TOTAL) so far. */
uint64_t tv_exits(uint64_t reason);
bool tv_get_info(struct tv_info *info);

#endif
