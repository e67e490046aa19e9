/* SPDX-License-Identifier: BSD-2-Clause */
/* Starting the application processors and giving them work. */
#ifndef VMM_HOST_SMP_H
#define VMM_HOST_SMP_H

#include "drivers/base.h"

/* Holds every other CPU in INIT (wait-for-SIPI), where it executes
 * nothing: call before tickvisor builds anything an AP in the firmware
 * could disturb. Needs the calibrated TSC (platform_init()). */
void smp_park_aps(void);
/* Starts every AP the firmware listed, undoes its IA32_TSC_ADJUST and
 * checks its TSC against the BSP's (vmm/host/tsc_sync.h); with vmx each
 * enters VMX operation, without it just waits in tickvisor's loop (the
 * platform report of a machine tickvisor refuses). Returns how many CPUs
 * are up (BSP included). CPU indices are dense: cpus[0..n-1]. */
uint32_t smp_start_aps(bool vmx);
/* Runs fn(arg) on CPU `cpu` (> 0) and returns at once. */
void smp_run_on(uint32_t cpu, void (*fn)(void *), void *arg);
/* Waits until that work has returned; false after timeout_us. */
bool smp_wait(uint32_t cpu, uint64_t timeout_us);

#endif
