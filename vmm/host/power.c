// SPDX-License-Identifier: BSD-2-Clause
/*
 * The end of a run (end=). In an emulator or VM (drivers/machine.c) the
 * machine powers off, in order of preference: QEMU's isa-debug-exit (only
 * when fw_cfg says we run on QEMU; it carries the status to QEMU's exit
 * code), ACPI S5 through PM1a/PM1b_CNT with the DSDT's \_S5 values
 * (issue 22.7: no firmware code involved), the UEFI runtime
 * ResetSystem(EfiResetShutdown) (works on Bochs, QEMU and real hardware
 * while the identity map is kept), then halt.
 * Bochs always exits with status 1, so the serial line is the result. On
 * a real PC (end=auto there means wait) powering off at once would take
 * the summary off the screen before anybody read it.
 */
#include "drivers/fwcfg.h"
#include "drivers/io.h"
#include "drivers/machine.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"
#include "vmm/host/platform.h"
#include "vmm/host/power.h"

#define QEMU_DEBUG_EXIT_PORT 0xf4u
#define I8042_DATA           0x60u
#define I8042_STATUS         0x64u
#define   I8042_STATUS_OBF   BIT(0)     /* a byte waits in the output buffer */
#define   I8042_SCAN_RELEASE BIT(7)     /* scan code set 1: key released */

static void (*shutdown_fn)(int status);
static enum end_mode end_mode;

void power_init(const struct boot_info *bi)
{
	shutdown_fn = bi->efi_shutdown;
	end_mode = bi->cfg.opts.end;
}

enum end_mode power_end_mode(enum end_mode m, const char **why)
{
	*why = NULL;
	if (m != END_AUTO)
		return m;
	*why = machine_emulated();
	return *why ? END_POWEROFF : END_WAIT;
}

/* After ExitBootServices only the PS/2 controller is left to ask (a USB
 * keyboard reaches it where the firmware's legacy emulation goes on).
 * No controller (the status port floats to 0xFF): wait forever. */
static void wait_key(void)
{
	uint8_t st = inb(I8042_STATUS);

	if (st == 0xff) {
		pr_info("end=wait: no PS/2 keyboard controller; power the machine off by hand");
		log_flush();
		for (;;)
			halt();
	}
	pr_info("end=wait: press a key to power off");
	log_flush();
	while (inb(I8042_STATUS) & I8042_STATUS_OBF)
		(void)inb(I8042_DATA);          /* what was typed before */
	for (;;) {
		if ((inb(I8042_STATUS) & I8042_STATUS_OBF) &&
		    !(inb(I8042_DATA) & I8042_SCAN_RELEASE))
			return;
		cpu_relax();
	}
}

/* Soft-off by the ACPI fixed hardware (ACPI spec, "Sleeping/Wake
 * Control": SLP_TYPx in PM1x_CNT bits 12:10, then SLP_EN, bit 13), with
 * the \_S5 values of the DSDT: it needs nothing of the firmware, where
 * ResetSystem() on some PCs returns or touches boot-services memory long
 * reused. Returns when the machine is still on. */
#define PM1_SLP_TYP_SHIFT 10
#define PM1_SLP_TYP       (7u << PM1_SLP_TYP_SHIFT)
#define PM1_SLP_EN        BIT(13)

static void pm1_sleep(uint32_t port, uint8_t typ)
{
	uint16_t v = (uint16_t)(inw((uint16_t)port) & ~(PM1_SLP_TYP | PM1_SLP_EN));

	v |= (uint16_t)(typ << PM1_SLP_TYP_SHIFT);
	outw((uint16_t)port, v);
	outw((uint16_t)port, (uint16_t)(v | PM1_SLP_EN));
}

static void acpi_s5(void)
{
	const struct acpi_info *a = &platform.acpi;

	if (!a->has_s5 || !a->pm1a_cnt_port)
		return;
	if (a->pm1b_cnt_port)
		pm1_sleep(a->pm1b_cnt_port, a->s5_typb);
	pm1_sleep(a->pm1a_cnt_port, a->s5_typa);
	for (unsigned i = 0; i < 1000000; i++)  /* the power goes, or not */
		cpu_relax();
	pr_warn("ACPI S5 power-off did not take: asking the firmware");
	log_flush();
}

__noreturn void power_off(int status)
{
	const char *why;
	enum end_mode m = power_end_mode(end_mode, &why);

	pr_info("final status %d", status);
	irq_disable();
	log_flush();
	if (m == END_HALT) {
		pr_info("end=halt: stopped; reset the machine by hand");
		log_flush();
		for (;;)
			halt();
	}
	if (m == END_WAIT)
		wait_key();
	if (fwcfg_present())
		outl(QEMU_DEBUG_EXIT_PORT, (uint32_t)status);
	acpi_s5();
	if (shutdown_fn)
		shutdown_fn(status);
	pr_err("power-off failed: halting (reset the machine by hand)");
	for (;;)
		halt();
}
