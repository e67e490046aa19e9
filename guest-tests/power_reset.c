// SPDX-License-Identifier: BSD-2-Clause
/*
 * power_reset how=kbc|kbc-outport|cf9|acpi-s5: the guest asks the
 * platform to reset or power off, the way Linux's reboot and power-off
 * paths do (arch/x86/kernel/reboot.c: kb_wait() then 0xfe to the 8042,
 * and reboot=pci's 0xcf9 sequence; the ACPI reset register points at
 * 0xcf9 with value 6; drivers/acpi/acpica/hwesleep.c for the hardware-
 * reduced sleep registers), after checking what those paths read first.
 * tickvisor ends the guest: status 249 (GUEST_STATUS_RESET) for a reset,
 * 0 for the power-off. Still running afterwards is a failure (status 1).
 * Ports and values: vmm/dev/dev_power.h, where the guest's FADT and DSDT
 * take them from.
 */
#include "lib/guest.h"
#include "lib/tsc.h"

#define KBC_DATA        0x60u
#define KBC_STATUS      0x64u
#define KBC_STATUS_IBF  0x02u           /* input buffer full */
#define KBC_STATUS_OBF  0x01u
#define KBC_STATUS_SYS  0x04u
#define KBC_PULSE_RESET 0xfeu
#define KBC_WRITE_OUT   0xd1u
#define RST_CNT         0xcf9u
#define RST_SYS_RST     0x02u
#define RST_CPU         0x04u
#define SLEEP_CONTROL   0x600u
#define SLEEP_STATUS    0x601u
#define SLP_EN          0x20u
#define SLP_TYP_SHIFT   2u
#define SLP_TYP_S5      5u
#define WAK_STS         0x80u

/* Linux's kb_wait(): the 8042 takes a command when IBF is clear. */
static bool kbc_ready(void)
{
	uint8_t st = inb(KBC_STATUS);

	report((st & (KBC_STATUS_IBF | KBC_STATUS_OBF)) == 0 && (st & KBC_STATUS_SYS),
	       "8042 status %#x: input and output buffers empty, self test passed", st);
	return !(st & KBC_STATUS_IBF);
}

static void reset_kbc(bool outport)
{
	kbc_ready();
	outb(KBC_STATUS, 0xff);         /* pulse no line (bits 3:0 all 1): nothing happens */
	report(true, "command 0xff (no line pulsed) left the guest running");
	if (outport) {
		outb(KBC_STATUS, KBC_WRITE_OUT);
		outb(KBC_DATA, 0xfe);   /* output port with bit 0, the reset line, low */
	} else {
		outb(KBC_STATUS, KBC_PULSE_RESET);
	}
}

/* reboot=pci: inb, then the kind (SYS_RST), then the kind with RST_CPU. */
static void reset_cf9(void)
{
	uint8_t cf9 = inb(RST_CNT);

	report(cf9 == 0, "0xcf9 reads 0 at power-on (%#x)", cf9);
	outb(RST_CNT, RST_SYS_RST);
	report(inb(RST_CNT) == RST_SYS_RST, "SYS_RST alone reads back and does not reset");
	outb(RST_CNT, RST_SYS_RST | RST_CPU);
}

/* acpi_hw_extended_sleep(): clear WAK_STS, then SLP_TYP | SLP_EN. A sleep
 * type that is not \_S5 is refused by waking at once (WAK_STS). */
static void power_off_acpi(void)
{
	report(inb(SLEEP_STATUS) == 0, "SLEEP_STATUS: WAK_STS clear at power-on");
	outb(SLEEP_CONTROL, 1u << SLP_TYP_SHIFT | SLP_EN);
	report(inb(SLEEP_STATUS) == WAK_STS, "sleep type 1 (not offered): woken at once, WAK_STS");
	outb(SLEEP_STATUS, WAK_STS);
	report(inb(SLEEP_STATUS) == 0, "writing 1 to WAK_STS cleared it");
	outb(SLEEP_CONTROL, SLP_TYP_S5 << SLP_TYP_SHIFT);
	report(true, "SLP_TYP S5 without SLP_EN left the guest running");
	outb(SLEEP_CONTROL, SLP_TYP_S5 << SLP_TYP_SHIFT | SLP_EN);
}

int main(int argc, char **argv)
{
	const char *how = arg_get("how");

	(void)argc;
	(void)argv;
	report_prefix_push("power_reset");
	if (!how) {
		report_fail("no how= argument");
		return report_summary();
	}
	report_prefix_push(how);
	if (!strcmp(how, "kbc") || !strcmp(how, "kbc-outport"))
		reset_kbc(!strcmp(how, "kbc-outport"));
	else if (!strcmp(how, "cf9"))
		reset_cf9();
	else if (!strcmp(how, "acpi-s5"))
		power_off_acpi();
	else
		report_fail("unknown how=%s", how);
	tsc_delay_us(10000);
	report_fail("still running 10 ms after the request");
	return report_summary();
}
