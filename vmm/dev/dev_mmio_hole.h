/* SPDX-License-Identifier: BSD-2-Clause */
/* Unassigned guest-physical memory: reads all ones, writes dropped. */
#ifndef VMM_DEV_DEV_MMIO_HOLE_H
#define VMM_DEV_DEV_MMIO_HOLE_H

#include "vmm/vcpu.h"

/* An EPT violation at gpa (qual: its exit qualification) with nothing
 * behind it: emulated as on a PC, or the guest ended (mmio=strict, an
 * instruction fetch, an instruction tickvisor cannot decode). */
int mmio_hole_access(struct vcpu *v, uint64_t gpa, uint64_t qual);

#endif
