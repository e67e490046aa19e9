// SPDX-License-Identifier: BSD-2-Clause
/*
 * dev_ports: the port map tickvisor gives a guest (DESIGN.md, "Guest
 * environment"; the table is vmm/dev/dev_ports.c, one model per file in
 * vmm/dev/): COM1 16550 registers, the debug-exit port on reads, the two
 * PICs masked, PCI configuration mechanism #1 with no devices, the POST
 * port, and all ones on every port nobody claims - checked on both edges
 * of each claimed range, so a table entry one port too short or too long
 * shows. The values are tickvisor's (a PC's PCI host bridge answers, its
 * PIC masks are what firmware left), so natively everything is skipped;
 * with expect=tickvisor a missing tickvisor fails instead.
 */
#include "lib/guest.h"

#define COM1            0x3f8u
#define UART_IIR        2u              /* read side of FCR */
#define UART_MSR        6u
#define UART_SCR        7u
#define PORT_DEBUG_EXIT 0xf4u
#define PORT_POST       0x80u
#define PIC1_CMD        0x20u
#define PIC1_DATA       0x21u
#define PIC2_CMD        0xa0u
#define PIC2_DATA       0xa1u
#define PIC_ELCR1       0x4d0u
#define PIC_ELCR2       0x4d1u
#define PCI_ADDR        0xcf8u
#define PCI_DATA        0xcfcu
#define PCI_ENABLE      BIT(31)

static void test_uart(void)
{
	uint8_t lcr = inb(COM1 + UART_LCR);

	report_prefix_push("com1");
	report(lcr == UART_LCR_8N1, "LCR reads 0x%02x as the runtime set it (8N1)", lcr);
	outb(COM1 + UART_SCR, 0x5a);
	report(inb(COM1 + UART_SCR) == 0x5a, "scratch register keeps 0x5a");
	outb(COM1 + UART_SCR, 0xa5);
	report(inb(COM1 + UART_SCR) == 0xa5, "scratch register keeps 0xa5");
	report(inb(COM1 + UART_LSR) == (UART_LSR_THRE | UART_LSR_TEMT),
	       "LSR: transmitter empty and idle, no data");
	/* 0xc0: FIFOs on, as the runtime's FCR 0x07 left them (PC16550D, IIR bits 7:6) */
	report(inb(COM1 + UART_IIR) == 0xc1, "IIR: no interrupt pending, FIFOs enabled");
	report(inb(COM1 + UART_MSR) == 0xb0, "MSR: DCD, DSR, CTS");
	report(inb(COM1 - 1) == 0xff && inb(COM1 + 8) == 0xff,
	       "ports 0x%x and 0x%x around COM1 read all ones", COM1 - 1, COM1 + 8);
	report_prefix_pop();
}

static void test_pic(void)
{
	report_prefix_push("pic");
	outb(PIC1_DATA, 0x00);          /* an unmask attempt: the model stays masked */
	report(inb(PIC1_DATA) == 0xff && inb(PIC2_DATA) == 0xff, "both mask registers read 0xff");
	report(inb(PIC1_CMD) == 0 && inb(PIC2_CMD) == 0, "command ports read 0 (no IRR bits)");
	report(inb(PIC_ELCR1) == 0 && inb(PIC_ELCR2) == 0, "ELCR 0x4d0-0x4d1 read 0 (all edge)");
	report(inb(PIC1_DATA + 1) == 0xff && inb(PIC2_DATA + 1) == 0xff &&
	       inb(PIC_ELCR2 + 1) == 0xff, "ports after each range read all ones");
	report_prefix_pop();
}

/* The data window reads all ones at every width and offset inside it,
 * whatever 0xcf8 selects (enable bit off, the host bridge's register 0,
 * the last register of the last function on bus 255), and drops writes
 * of every width without touching 0xcf8. */
static void test_pci_data_widths(void)
{
	static const uint32_t addrs[] = {
		0, PCI_ENABLE, PCI_ENABLE | 0x800u | 0x3cu,
		PCI_ENABLE | 255u << 16 | 31u << 11 | 7u << 8 | 0xfcu,
	};
	bool ones = true, kept = true;

	for (unsigned a = 0; a < ARRAY_SIZE(addrs); a++) {
		outl(PCI_ADDR, addrs[a]);
		for (uint16_t off = 0; off < 4; off++) {
			outb(PCI_DATA + off, 0);
			ones &= inb(PCI_DATA + off) == 0xff;
			if (off < 3) {
				outw(PCI_DATA + off, 0);
				ones &= inw(PCI_DATA + off) == 0xffff;
			}
		}
		outl(PCI_DATA, 0);
		ones &= inl(PCI_DATA) == 0xffffffffu;
		kept &= inl(PCI_ADDR) == addrs[a];
	}
	report(ones, "0xcfc-0xcff read all ones as bytes, words (0xcfd too) and a dword, "
	       "after writes of each, for %u addresses", (unsigned)ARRAY_SIZE(addrs));
	report(kept, "data-window accesses leave 0xcf8 as written");
}

static void test_pci(void)
{
	report_prefix_push("pci");
	outl(PCI_ADDR, PCI_ENABLE | 0x800u);    /* bus 0, device 1, register 0 */
	report(inl(PCI_ADDR) == (PCI_ENABLE | 0x800u), "0xcf8 keeps a 32-bit write");
	outb(PCI_ADDR, 0x12);                   /* byte accesses are not PCI */
	report(inl(PCI_ADDR) == (PCI_ENABLE | 0x800u), "a byte write to 0xcf8 leaves it");
	report(inb(PCI_ADDR) == 0xff, "a byte read of 0xcf8 reads all ones");
	report(inl(PCI_DATA) == 0xffffffffu, "0xcfc reads all ones: no device");
	report(inb(PCI_DATA + 3) == 0xff && inw(PCI_DATA + 2) == 0xffff,
	       "0xcfe-0xcff read all ones");
	report(inb(PCI_ADDR + 3) == 0xff && inb(PCI_DATA + 4) == 0xff,
	       "0xcfb and 0xd00 (unclaimed) read all ones");
	test_pci_data_widths();
	outl(PCI_ADDR, 0);
	report_prefix_pop();
}

static void test_misc_ports(void)
{
	report(inb(PORT_DEBUG_EXIT) == 0xff, "debug-exit port 0x%x reads all ones", PORT_DEBUG_EXIT);
	report(inb(PORT_DEBUG_EXIT - 1) == 0xff && inb(PORT_DEBUG_EXIT + 1) == 0xff,
	       "ports beside debug-exit read all ones");
	outb(PORT_POST, 0x42);
	report(inb(PORT_POST) == 0xff, "POST port 0x80 reads all ones");
	report(inl(0x3000) == 0xffffffffu && inw(0x2f8) == 0xffff,
	       "unclaimed ports read all ones (IN EAX, IN AX)");
}

int main(int argc, char **argv)
{
	const char *expect = arg_get("expect");

	(void)argc;
	(void)argv;
	report_prefix_push("dev_ports");
	if (tickvisor_present()) {
		test_uart();
		test_pic();
		test_pci();
		test_misc_ports();
	} else if (expect && !strcmp(expect, "tickvisor")) {
		report_fail("tickvisor not detected");
	} else {
		report_skip("port map: not running under tickvisor");
	}
	report_prefix_pop();
	return report_summary();
}
