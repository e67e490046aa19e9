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
 * The guest cannot watch its own end, so before the write that must end
 * it, it says which byte goes to which port; tickvisor's line names the
 * device and that write, and tests/suites.py ("containment-devices")
 * holds each guest to its exact line, so a request honoured for another
 * write (a pulse command that pulses no reset line, SLP_TYP S5 without
 * SLP_EN) fails there. Writes that must not end the guest are followed
 * by a check of the device state they leave.
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
#define KBC_STATUS_CMD  0x08u           /* the last write went to 0x64 */
#define KBC_STATUS_UNLOCKED 0x10u
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

/* The write that must end the guest, announced first. */
static void outb_last(uint16_t port, uint8_t val, const char *what)
{
	report_info("writing 0x%02x to port %#x (%s): tickvisor must end this guest", val, port,
		    what);
	outb(port, val);
}

static void reset_kbc(bool outport)
{
	uint8_t st;

	kbc_ready();
	outb(KBC_DATA, 0);              /* keyboard data (to nobody): clears CMD */
	outb(KBC_STATUS, 0xff);         /* pulse no line (bits 3:0 all 1): nothing happens */
	st = inb(KBC_STATUS);
	report(st == (KBC_STATUS_SYS | KBC_STATUS_CMD | KBC_STATUS_UNLOCKED),
	       "command 0xff (no line pulsed): still running, status %#x (CMD: taken as a "
	       "command)", st);
	if (outport) {
		outb(KBC_STATUS, KBC_WRITE_OUT);
		outb_last(KBC_DATA, 0xfe, "8042 output port after command 0xd1, reset line low");
	} else {
		outb_last(KBC_STATUS, KBC_PULSE_RESET, "8042 command: pulse the reset line");
	}
}

/* reboot=pci: inb, then the kind (SYS_RST), then the kind with RST_CPU. */
static void reset_cf9(void)
{
	uint8_t cf9 = inb(RST_CNT);

	report(cf9 == 0, "0xcf9 reads 0 at power-on (%#x)", cf9);
	outb(RST_CNT, RST_SYS_RST);
	report(inb(RST_CNT) == RST_SYS_RST, "SYS_RST alone reads back and does not reset");
	outb_last(RST_CNT, RST_SYS_RST | RST_CPU, "0xcf9: SYS_RST | RST_CPU, hard reset");
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
	report(inb(SLEEP_STATUS) == 0 && inb(SLEEP_CONTROL) == 0,
	       "SLP_TYP S5 without SLP_EN: still running, no wake-up (WAK_STS clear), control "
	       "reads 0");
	outb_last(SLEEP_CONTROL, SLP_TYP_S5 << SLP_TYP_SHIFT | SLP_EN,
		  "ACPI sleep control: SLP_TYP S5 | SLP_EN, soft off");
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
