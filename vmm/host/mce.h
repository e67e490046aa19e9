/* SPDX-License-Identifier: BSD-2-Clause */
/* Machine checks on the host's CPUs (issue 22.2): CR4.MCE on every CPU,
 * and the handler a #MC comes to, from root mode or as a VM exit. */
#ifndef VMM_HOST_MCE_H
#define VMM_HOST_MCE_H

#include "drivers/mce.h"

/* CR4.MCE on the calling CPU (where CPUID.1:EDX.MCE says #MC exists);
 * report: print what the machine-check architecture offers (the BSP). */
void mce_cpu_init(bool report);
/* Reads, logs and judges the banks of a #MC on this CPU; who names what
 * it interrupted (a guest, or "tickvisor"). Clears the banks and
 * MCG_STATUS.MCIP unless the verdict is MCE_FATAL (then the caller
 * panics; a second #MC with MCIP set shuts the CPU down, as the SDM says
 * it must). */
enum mce_verdict mce_handle(bool in_guest, const char *who);

#endif
