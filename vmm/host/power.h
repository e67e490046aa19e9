/* SPDX-License-Identifier: BSD-2-Clause */
/* Ending the run: the last serial line states the status, then power-off. */
#ifndef VMM_HOST_POWER_H
#define VMM_HOST_POWER_H

#include "vmm/host/boot_info.h"

void power_init(const struct boot_info *bi);
/* Prints "tickvisor: final status N" and powers the machine off. */
__noreturn void power_off(int status);

#endif
