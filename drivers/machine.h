/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Is this an emulator or a virtual machine, or a real PC? It decides how a
 * run ends with end=auto: an emulator powers off (its exit status and log
 * carry the result), a real machine keeps the summary on screen and waits
 * for a key.
 */
#ifndef DRIVERS_MACHINE_H
#define DRIVERS_MACHINE_H

#include "drivers/base.h"

/* What gave an emulator or hypervisor away ("QEMU fw_cfg", ...), or NULL
 * on what looks like bare hardware. Port I/O and CPUID only: callable
 * before and after ExitBootServices. */
const char *machine_emulated(void);

#endif
