/* SPDX-License-Identifier: BSD-2-Clause */
/* Ending the run: the last serial line states the status, then power-off. */
#ifndef VMM_HOST_POWER_H
#define VMM_HOST_POWER_H

#include "vmm/host/boot_info.h"

void power_init(const struct boot_info *bi);
/* end=auto resolved: poweroff where drivers/machine.c sees an emulator or
 * VM (*why names the sign), wait on anything else; other modes as given
 * (*why NULL). */
enum end_mode power_end_mode(enum end_mode m, const char **why);
/* Prints "tickvisor: final status N" and powers the machine off. */
__noreturn void power_off(int status);

#endif
