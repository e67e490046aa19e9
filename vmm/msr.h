/* SPDX-License-Identifier: BSD-2-Clause */
/* Guest MSR state kept by vmm/: the TSC and the hand-off to the APIC. */
#ifndef VMM_MSR_H
#define VMM_MSR_H

#include "vmm/vcpu.h"

/* SDM Vol. 3B, "Time-Stamp Counter": writing IA32_TSC moves
 * IA32_TSC_ADJUST by the same amount and vice versa. */
void vcpu_set_guest_tsc(struct vcpu *v, uint64_t tsc);
void vcpu_set_tsc_adjust(struct vcpu *v, uint64_t adjust);
uint64_t vcpu_guest_tsc(const struct vcpu *v);

/* IA32_MISC_ENABLE (SDM Vol. 4, "Architectural MSRs"), as tickvisor
 * offers it: see vmm/exit_msr.c for which bits and why. */
#define MISC_ENABLE_FAST_STRING    BIT(0)      /* R/W */
#define MISC_ENABLE_AUTO_THERMAL   BIT(3)      /* R/W */
#define MISC_ENABLE_PERFMON        BIT(7)      /* R: 0, CPUID 0xA shows no PMU */
#define MISC_ENABLE_BTS_UNAVAIL    BIT(11)     /* RO: 1 */
#define MISC_ENABLE_PEBS_UNAVAIL   BIT(12)     /* RO: 1 */
#define MISC_ENABLE_LIMIT_CPUID    BIT(22)     /* R/W: CPUID.0:EAX reads 2 */
#define MISC_ENABLE_XTPR_DISABLE   BIT(23)     /* R/W */
#define MISC_ENABLE_RESET (MISC_ENABLE_FAST_STRING | MISC_ENABLE_BTS_UNAVAIL | \
			   MISC_ENABLE_PEBS_UNAVAIL)

/* MSR bitmaps (SDM Vol. 3C, "MSR-Bitmap Address"): a new one exits on
 * everything but the MSRs whose guest values need no emulation. */
uint8_t *msr_bitmap_new(void);
void msr_bitmap_set(uint8_t *bm, uint32_t msr, bool read_exit, bool write_exit);

#endif
