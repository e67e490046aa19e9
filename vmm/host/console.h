/* SPDX-License-Identifier: BSD-2-Clause */
/* The consoles after ExitBootServices, as console= asks (DESIGN.md, "Real machines"). */
#ifndef VMM_HOST_CONSOLE_H
#define VMM_HOST_CONSOLE_H

#include "vmm/host/boot_info.h"

/* Starts the screen console on the GOP framebuffer boot/ saved (the host
 * page tables must map it), or says why there is none; with
 * console=screen the serial port stops. */
void console_init(const struct boot_info *bi);

#endif
