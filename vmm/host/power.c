// SPDX-License-Identifier: BSD-2-Clause
/*
 * The end of a run (end=). In an emulator or VM (drivers/machine.c) the
 * machine powers off, in order of preference: QEMU's isa-debug-exit (only
 * when fw_cfg says we run on QEMU; it carries the status to QEMU's exit
 * code), ACPI S5 through PM1a/PM1b_CNT with the DSDT's \_S5 values
 * (issue 22.7: no firmware code involved), the UEFI runtime
 * ResetSystem(EfiResetShutdown) (works on Bochs, QEMU and real hardware
 * while the identity map is kept), then halt.
 * end=reset resets instead, the ways drivers/reset.h orders, each given
 * RESET_TAKE_MS to take before the next is tried (issue 22.7).
 * Bochs always exits with status 1, so the serial line is the result. On
 * a real PC (end=auto there means wait) powering off at once would take
 * the summary off the screen before anybody read it.
 */
#include "drivers/fwcfg.h"
#include "drivers/io.h"
#include "drivers/machine.h"
#include "drivers/pci.h"
#include "drivers/reset.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"
#include "vmm/host/platform.h"
#include "vmm/host/power.h"

#define QEMU_DEBUG_EXIT_PORT 0xf4u
#define I8042_DATA           0x60u
#define I8042_STATUS         0x64u
#define   I8042_STATUS_OBF   BIT(0)     /* a byte waits in the output buffer */
#define   I8042_SCAN_RELEASE BIT(7)     /* scan code set 1: key released */

#define I8042_STATUS_IBF   BIT(1)     /* the controller has not taken our byte */
#define I8042_CMD_RESET    0xfeu      /* pulse output line 0: the CPU's reset */
#define CF9_PORT           0xcf9u
#define   CF9_SYS_RST      BIT(1)     /* 0 -> 1 of RST_CPU resets; 1: hard */
#define   CF9_RST_CPU      BIT(2)
#define   CF9_FULL_RST     BIT(3)     /* power cycled too */
#define RESET_TAKE_MS      200u

static void (*shutdown_fn)(int status);
static void (*reset_fn)(void);
static enum end_mode end_mode;

void power_init(const struct boot_info *bi)
{
	shutdown_fn = bi->efi_shutdown;
	reset_fn = bi->efi_reset;
	end_mode = bi->cfg.opts.end;
}

/* About `us` microseconds by the TSC; before it is known, a long loop. */
static void power_delay_us(uint64_t us)
{
	uint64_t hz = platform.tb.tsc_hz, t0 = rdtsc();

	if (!hz) {
		for (uint64_t i = 0; i < us * 1000; i++)
			cpu_relax();
		return;
	}
	while (rdtsc() - t0 < us * hz / 1000000)
		cpu_relax();
}

static void reset_fadt(const struct acpi_gas *g, uint8_t val)
{
	switch (g->space_id) {
	case ACPI_GAS_IO:
		outb((uint16_t)g->address, val);
		break;
	case ACPI_GAS_MEMORY:           /* identity-mapped, uncached (paging_build.c) */
		*(volatile uint8_t *)(uintptr_t)g->address = val;
		break;
	case ACPI_GAS_PCI_CFG:
		outl(PCI_CONFIG_ADDR, reset_pci_cf8(g->address));
		outb((uint16_t)(PCI_CONFIG_DATA + (g->address & 3)), val);
		break;
	}
}

static void reset_by(enum reset_method m)
{
	uint8_t v;

	switch (m) {
	case RESET_FADT:
		reset_fadt(&platform.acpi.reset_reg, platform.acpi.reset_value);
		break;
	case RESET_CF9:
		/* As Linux's reboot.c does: SYS_RST first, then the reset
		 * with RST_CPU's rising edge, a full (cold) one. */
		v = (uint8_t)(inb(CF9_PORT) & ~(CF9_SYS_RST | CF9_RST_CPU | CF9_FULL_RST));
		outb(CF9_PORT, (uint8_t)(v | CF9_SYS_RST));
		power_delay_us(50);
		outb(CF9_PORT, (uint8_t)(v | CF9_SYS_RST | CF9_RST_CPU | CF9_FULL_RST));
		break;
	case RESET_KBC:
		for (unsigned i = 0; i < 1000 && (inb(I8042_STATUS) & I8042_STATUS_IBF); i++)
			power_delay_us(10);
		outb(I8042_STATUS, I8042_CMD_RESET);
		break;
	case RESET_EFI:
		if (reset_fn)
			reset_fn();
		break;
	default:
		break;
	}
}

/* end=reset: each way in turn; one that returns gets RESET_TAKE_MS. */
static __noreturn void power_reset(void)
{
	const struct acpi_info *a = &platform.acpi;
	enum reset_method plan[RESET_METHODS];
	enum reset_method first = (enum reset_method)platform.inject.reset_from;
	unsigned n = reset_plan(a, first, plan);
	const char *why = reset_fadt_unusable(a);

	if (first != RESET_FADT)
		pr_info("inject=reset-from: %s first", reset_method_name(first));
	else if (why)
		pr_info("reset: the FADT reset register is not used: %s", why);
	for (unsigned i = 0; i < n; i++) {
		if (plan[i] == RESET_FADT)
			pr_info("reset: by the FADT reset register (%s %#lx <- %#x)",
				a->reset_reg.space_id == ACPI_GAS_IO ? "I/O" :
				a->reset_reg.space_id == ACPI_GAS_MEMORY ? "memory" : "PCI",
				(unsigned long)a->reset_reg.address, a->reset_value);
		else
			pr_info("reset: by the %s", reset_method_name(plan[i]));
		log_flush();
		reset_by(plan[i]);
		power_delay_us(RESET_TAKE_MS * 1000ull);
		pr_warn("reset: the %s did not take within %u ms", reset_method_name(plan[i]),
			RESET_TAKE_MS);
	}
	pr_err("reset failed: halting (reset the machine by hand)");
	log_flush();
	for (;;)
		halt();
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
	if (m == END_RESET)
		power_reset();
	if (fwcfg_present())
		outl(QEMU_DEBUG_EXIT_PORT, (uint32_t)status);
	acpi_s5();
	if (shutdown_fn)
		shutdown_fn(status);
	pr_err("power-off failed: halting (reset the machine by hand)");
	for (;;)
		halt();
}
