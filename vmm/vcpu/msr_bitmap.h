/* SPDX-License-Identifier: BSD-2-Clause */
/* MSR bitmaps: which guest MSR accesses exit. Part of a vCPU's VMCS
 * set-up (vcpu_setup.c points the VMCS at it), below the exit handlers
 * (EFER, exit_msr.c) and the APIC glue (the x2APIC range, vapic.c) that
 * change its bits. */
#ifndef VMM_MSR_BITMAP_H
#define VMM_MSR_BITMAP_H

#include "drivers/base.h"

/* MSR bitmaps (SDM Vol. 3C, "MSR-Bitmap Address"): a new one exits on
 * everything but the MSRs whose guest values need no emulation. */
uint8_t *msr_bitmap_new(void);
void msr_bitmap_set(uint8_t *bm, uint32_t msr, bool read_exit, bool write_exit);

#endif
