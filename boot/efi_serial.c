// SPDX-License-Identifier: BSD-2-Clause
/*
 * serial=: which 16550 the log (and every guest's COM1 output) goes to,
 * settled before ExitBootServices: COM1 if a UART answers there until
 * the configuration is read, then the UART it names, or with
 * serial=auto the one the ACPI SPCR names. An MMIO UART is reached
 * through the firmware's identity map until vmm/host/paging.c maps it
 * uncached in tickvisor's own tables.
 */
#include "boot/efi.h"
#include "drivers/acpi.h"
#include "drivers/fmt.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"

static bool conout_uart;        /* the firmware's console writes a COM port */
static bool com1;               /* a 16550 answers at 0x3f8 */

void efi_serial_early(void)
{
	struct serial_uart c1 = SERIAL_UART_IO(SERIAL_COM1);

	conout_uart = efi_conout_has_uart();
	com1 = serial_probe(&c1);
	serial_init(com1 ? &c1 : NULL, 115200);
}

bool efi_serial_fw_writes(void)
{
	return conout_uart && com1;
}

/* The SPCR's GAS as a UART tickvisor can drive, else false with a line
 * that says why not. */
static bool spcr_gas_uart(const struct acpi_info *a, struct serial_uart *u)
{
	const struct acpi_gas *g = &a->spcr_base;
	unsigned long addr = (unsigned long)g->address;

	if (g->space_id == ACPI_GAS_IO) {
		if (g->address && g->address <= 0xfff8) {
			*u = SERIAL_UART_IO(g->address);
			return true;
		}
		pr_info("serial: ACPI SPCR names a 16550 at I/O port %#lx, outside the I/O space: "
			"not used", addr);
		return false;
	}
	if (g->space_id != ACPI_GAS_MEMORY) {
		pr_info("serial: ACPI SPCR names a 16550 at %#lx in address space %u; only I/O "
			"ports and memory are supported: not used", addr, g->space_id);
		return false;
	}
	if (a->spcr_reg_bytes != 1 && a->spcr_reg_bytes != 4) {
		pr_info("serial: ACPI SPCR names an MMIO 16550 at %#lx with registers of bit width "
			"%u, access size %u; only byte and 32-bit registers are supported: not used",
			addr, g->bit_width, g->access_size);
		return false;
	}
	*u = (struct serial_uart){
		a->spcr_reg_bytes == 4 ? SERIAL_SPACE_MMIO32 : SERIAL_SPACE_MMIO8, g->address };
	if (!g->address || g->address % a->spcr_reg_bytes ||
	    g->address > SERIAL_MMIO_LIMIT - serial_span(u)) {
		pr_info("serial: ACPI SPCR names an MMIO 16550 at %#lx, not an address its "
			"%u-byte registers can have: not used", addr, a->spcr_reg_bytes);
		return false;
	}
	if (efi_range_is_ram(u->base, serial_span(u))) {
		pr_info("serial: ACPI SPCR names an MMIO 16550 at %#lx, inside RAM by the UEFI "
			"memory map: not used", addr);
		return false;
	}
	return true;
}

/* serial=auto on a machine whose ACPI SPCR names its console UART: that
 * 16550 (and baud rate) when it is one tickvisor drives and it answers,
 * else false with a line that says why it is not used. */
static bool spcr_uart(uint64_t rsdp, struct serial_uart *u, uint32_t *baud)
{
	static struct acpi_info a;

	if (!rsdp || acpi_parse(&a, rsdp, acpi_map_identity, NULL, NULL, 0) || !a.has_spcr)
		return false;
	if (a.spcr_type != ACPI_SPCR_16550 && a.spcr_type != ACPI_SPCR_16450 &&
	    a.spcr_type != ACPI_SPCR_16550_GAS) {
		pr_info("serial: ACPI SPCR names a UART of interface type %#x, not a 16550: "
			"not used", a.spcr_type);
		return false;
	}
	if (!spcr_gas_uart(&a, u))
		return false;
	if (!serial_probe(u)) {
		if (u->space == SERIAL_SPACE_IO)
			pr_info("serial: ACPI SPCR names a 16550 at %#lx, but none answers there: "
				"not used", (unsigned long)u->base);
		else
			pr_info("serial: ACPI SPCR names an MMIO 16550 at %#lx that does not answer: "
				"not used", (unsigned long)u->base);
		return false;
	}
	*baud = a.spcr_baud;
	return true;
}

/* "serial=mmio32:0xfe032000,115200", as the configuration said it. */
static void serial_option(const struct serial_uart *u, uint32_t baud, char *buf, size_t n)
{
	static const char *const prefix[] = {
		[SERIAL_SPACE_IO] = "", [SERIAL_SPACE_MMIO8] = "mmio:",
		[SERIAL_SPACE_MMIO32] = "mmio32:",
	};
	int k = fmt_snprintf(buf, n, "serial=%s%#lx", prefix[u->space], (unsigned long)u->base);

	if (baud && k > 0 && (size_t)k < n)
		fmt_snprintf(buf + k, n - (size_t)k, ",%u", baud);
}

/*
 * Moves the log to u (from serial= or the SPCR). baud 0: an I/O-port
 * UART gets 115200, an MMIO one keeps the divisor the firmware set (its
 * input clock need not be 1.8432 MHz, as on Intel's LPSS UARTs).
 */
static void serial_move(const struct serial_uart *u, uint32_t baud, const char *why)
{
	struct serial_uart cur = serial_current();
	bool io = u->space == SERIAL_SPACE_IO, is_com1 = io && u->base == SERIAL_COM1;
	bool answers = serial_probe(u), fw_writes;
	char name[48];

	serial_describe(u, name, sizeof(name));
	if (!answers)
		pr_warn("serial: no 16550 answers at %s (its scratch register keeps nothing); "
			"writing to it regardless", name);
	if (!serial_same(u, &cur) || baud) {
		/* The firmware's serial console (a COM port, boot/efi_conout.c)
		 * is taken to be on the first UART there is: COM1 if it
		 * answers, else this one. Where it writes, its lines are
		 * there already. */
		fw_writes = io && conout_uart && (is_com1 ? com1 : !com1 && answers);
		log_flush();
		serial_init(u, baud ? baud : io ? 115200 : 0);
		log_set_serial(!fw_writes);
		/* Before the line below, which would be repeated too. */
		if (!fw_writes && !is_com1)
			log_serial_switched(true);
	}
	if (baud || io)
		pr_info("serial: 16550 at %s, %u baud (%s)", name, baud ? baud : 115200u, why);
	else
		pr_info("serial: 16550 at %s, at the baud rate the firmware set (%s)", name, why);
}

void efi_serial_apply(const struct tv_options *o, uint64_t rsdp)
{
	const struct serial_uart *u = &o->serial_uart;
	struct serial_uart spcr;
	uint32_t baud = 0;
	char opt[64];

	switch (o->serial) {
	case SERIAL_NONE:
		if (serial_current().base)
			pr_info("serial: off (serial=none): the log is on the screen only");
		log_flush();
		serial_init(NULL, 0);
		break;
	case SERIAL_UART:
		serial_option(u, o->serial_baud, opt, sizeof(opt));
		if (u->space != SERIAL_SPACE_IO && efi_range_is_ram(u->base, serial_span(u)))
			efi_fail("%s: %#lx is RAM by the UEFI memory map, not a UART", opt,
				 (unsigned long)u->base);
		serial_move(u, o->serial_baud, opt);
		break;
	case SERIAL_AUTO:
		if (spcr_uart(rsdp, &spcr, &baud)) {
			serial_move(&spcr, baud, "ACPI SPCR");
			break;
		}
		if (!serial_current().base)
			pr_info("serial: no 16550 at COM1 (0x3f8): the log is on the screen only "
				"(serial=PORT names another)");
		break;
	}
	log_serial_switched(false);     /* the UART is settled: no more lines kept */
}
