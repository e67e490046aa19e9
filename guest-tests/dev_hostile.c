// SPDX-License-Identifier: BSD-2-Clause
/*
 * dev_hostile: accesses to the device ports that no driver makes - word
 * and dword accesses that run past a device's last register into
 * unclaimed ports, an index byte with every bit set, reset and sleep
 * bits landing in the byte next to their register - are answered the
 * way the ISA bus answers them (one byte per port, unclaimed ports read
 * 0xff and drop writes) and the guest goes on. Last, string I/O to COM1,
 * which tickvisor does not emulate: that ends the guest with status 250
 * (GUEST_STATUS_KILLED) and a message, and the next guest of the boot
 * still runs (tests/suites.py, "containment-devices"). If any check
 * before fails, the guest exits with 1 instead, so the expected 250
 * also says that all of them held.
 */
#include "lib/guest.h"

#define COM1            0x3f8u
#define CMOS_INDEX      0x70u
#define CMOS_DATA       0x71u
#define KBC_DATA        0x60u
#define KBC_STATUS      0x64u
#define RST_CNT         0xcf9u
#define SLEEP_CONTROL   0x600u

static bool all_ok = true;

static void expect32(uint32_t got, uint32_t want, const char *what)
{
	all_ok &= report(got == want, "%s: %#x (expected %#x)", what, got, want);
}

static void test_uart(void)
{
	outl(COM1 + 5, 0x11223344);     /* LSR, MSR (ignored), SCR = 0x22, 0x400 (nobody) */
	expect32(inl(COM1 + 5), 0xff22b060u, "inl at COM1+5: LSR, MSR, SCR, then an unclaimed port");
	expect32(inw(COM1 + 7), 0xff22u, "inw at COM1+7: SCR, then an unclaimed port");
}

static void test_cmos(void)
{
	outb(CMOS_INDEX, 0xff);         /* NMI bit and index 0x7f: the last RAM byte */
	outb(CMOS_DATA, 0x77);
	outb(CMOS_INDEX, 0x7f);
	expect32(inb(CMOS_DATA), 0x77, "index 0xff is register 0x7f");
	expect32(inl(CMOS_INDEX), 0xffff77ffu, "inl at 0x70: index (0xff), data, 0x72-0x73 unclaimed");
	outl(CMOS_INDEX, 0x12345e7fu);  /* index 0x7f, data 0x5e, 0x72-0x73 dropped */
	outb(CMOS_INDEX, 0x7f);
	expect32(inb(CMOS_DATA), 0x5e, "outl at 0x70: index and data bytes, the rest dropped");
}

static void test_kbc(void)
{
	expect32(inl(KBC_DATA), 0xffffff00u, "inl at 0x60: no data, 0x61-0x63 unclaimed");
	expect32(inw(KBC_STATUS), 0xff1cu, "inw at 0x64: status 0x1c, then 0x65");
	/* A data byte (to nobody) clears the status's CMD bit; the word's
	 * low byte must then reach 0x64 as a command and set it again, its
	 * high byte 0xfe go to 0x65 and reset nothing (a reset would end
	 * this guest with 249, not the 250 the suite expects). */
	outb(KBC_DATA, 0);
	expect32(inb(KBC_STATUS), 0x14u, "a data byte to 0x60: status 0x14, CMD clear");
	outw(KBC_STATUS, 0xfe00u);      /* 0x00 to 0x64 (a no-op command), 0xfe to 0x65 */
	expect32(inb(KBC_STATUS), 0x1cu, "outw 0xfe00 at 0x64: the 0x00 reached 0x64 as a "
		 "command (CMD set), the 0xfe in 0x65 reset nothing");
}

static void test_power_ports(void)
{
	outw(RST_CNT, 0x0402u);         /* SYS_RST to 0xcf9, RST_CPU's bit into 0xcfa */
	expect32(inw(RST_CNT), 0xff02u, "0xcf9 keeps SYS_RST, RST_CPU in 0xcfa reset nothing");
	outb(RST_CNT, 0);
	outw(SLEEP_CONTROL, 0x8000u);   /* no SLP_EN; WAK_STS write-1-to-clear */
	expect32(inl(SLEEP_CONTROL), 0xffff0000u, "inl at 0x600: control 0, status 0, 0x602-0x603");
}

int main(int argc, char **argv)
{
	static const char msg[] = "string I/O\n";
	const char *p = msg;
	unsigned long n = sizeof(msg) - 1;

	(void)argc;
	(void)argv;
	report_prefix_push("dev_hostile");
	test_uart();
	test_cmos();
	test_kbc();
	test_power_ports();
	if (!all_ok)
		return report_summary();
	report_info("now rep outsb to COM1: tickvisor ends this guest (status 250)");
	asm volatile("rep outsb" : "+S"(p), "+c"(n) : "d"(COM1) : "memory");
	report_fail("still running after string I/O to COM1");
	return report_summary();
}
