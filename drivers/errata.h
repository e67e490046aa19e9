/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host timer errata (issue 22.4): CPUs whose TSC-deadline timer needs a
 * microcode update, and CPUs whose VMX-preemption timer does not count at
 * the rate IA32_VMX_MISC gives. Pure tables and lookups: the CPUID and MSR
 * reads are the caller's, so every row is unit-tested on the host.
 */
#ifndef DRIVERS_ERRATA_H
#define DRIVERS_ERRATA_H

#include "drivers/base.h"

/* CPUID.01H:EAX, "Version Information" (Intel SDM Vol. 2A, CPUID). */
#define CPUID1_STEPPING         BITS(3, 0)
#define CPUID1_MODEL            BITS(7, 4)
#define CPUID1_FAMILY           BITS(11, 8)
#define CPUID1_TYPE             BITS(13, 12)
#define CPUID1_EXT_MODEL        BITS(19, 16)
#define CPUID1_EXT_FAMILY       BITS(27, 20)

/* The microcode revision is IA32_BIOS_SIGN_ID[63:32], valid after writing
 * 0 to the MSR and executing CPUID.01H (SDM Vol. 3A, "Microcode Update
 * Facilities"). */
#define MSR_IA32_BIOS_SIGN_ID   0x8bu

struct cpu_sig {
	uint32_t family;        /* displayed family: base + extended when base is 0xf */
	uint32_t model;         /* displayed model: extended:base when base family is 6 or 0xf */
	uint32_t stepping;
};

/* Family, model and stepping from CPUID.01H:EAX, as the SDM computes the
 * displayed values. */
struct cpu_sig errata_decode_sig(uint32_t cpuid1_eax);

/*
 * NULL if the TSC-deadline timer of this Intel CPU (CPUID.01H:ECX[24]
 * set) can be trusted with this microcode revision; otherwise a one-line
 * reason naming the CPU and the first good revision. Intel only: the
 * caller checks the vendor. Like Linux, the caller should not ask when
 * CPUID.01H:ECX[31] (hypervisor present) is set: a guest's microcode
 * revision is its hypervisor's invention (KVM reports 1), and the host
 * below has made its own choice.
 */
const char *errata_tsc_deadline(uint32_t family, uint32_t model, uint32_t stepping,
				uint32_t microcode_rev);

/* NULL if the VMX-preemption timer of the CPU with this CPUID.01H:EAX
 * counts at the rate IA32_VMX_MISC[4:0] says; otherwise the reason. */
const char *errata_preempt_timer(uint32_t cpuid1_eax);

#endif
