/* SPDX-License-Identifier: BSD-2-Clause */
/* The two fixed costs around the guest on this CPU, measured once per
 * vCPU: they date timer expiries and register accesses (vmm/apic/vcpu_timer.c);
 * and the CPU's IF=0 errata, probed once per vCPU. */
#ifndef VMM_VCPU_CALIB_H
#define VMM_VCPU_CALIB_H

#include "vmm/vcpu.h"

/* The private page and EPT the calibration runs in (once, at boot). */
void vcpu_calib_init(void);
/* Measures the entry stub's wait-to-guest time (v->entry_tsc) and the
 * guest-to-exit time (v->exit_tsc) before the guest's own state is set up,
 * without touching guest memory. */
void vcpu_calib_measure(struct vcpu *v);

/* The IF=0 errata probes, on the same page: set v->kick_if0_erratum and
 * v->hlt_if0_erratum (the stop poll of vmm/apic/vcpu_timer.c guards against
 * them) and v->vid_if0_erratum (the interrupt window of vmm/apic/vapic_inject.c). */
void vcpu_calib_probe_if0(struct vcpu *v);

#endif
