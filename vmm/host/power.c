// SPDX-License-Identifier: BSD-2-Clause
/*
 * Power-off, in order of preference: QEMU's isa-debug-exit (only when
 * fw_cfg says we run on QEMU; it carries the status to QEMU's exit code),
 * the UEFI runtime ResetSystem(EfiResetShutdown) (works on Bochs, QEMU
 * and real hardware while the identity map is kept), then halt. Bochs
 * always exits with status 1, so the serial line is the result.
 */
#include "drivers/fwcfg.h"
#include "drivers/io.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"
#include "vmm/host/power.h"

#define QEMU_DEBUG_EXIT_PORT 0xf4u

static void (*shutdown_fn)(int status);

void power_init(const struct boot_info *bi)
{
	shutdown_fn = bi->efi_shutdown;
}

__noreturn void power_off(int status)
{
	pr_info("final status %d", status);
	irq_disable();
	log_flush();
	if (fwcfg_present())
		outl(QEMU_DEBUG_EXIT_PORT, (uint32_t)status);
	if (shutdown_fn)
		shutdown_fn(status);
	pr_err("power-off failed: halting (reset the machine by hand)");
	for (;;)
		halt();
}
