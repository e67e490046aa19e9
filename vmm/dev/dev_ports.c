// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which device model answers which guest port. A new port device is one
 * new file under vmm/dev/ plus one line here. Ranges do not overlap; a
 * port exit scans this short list (fifteen entries), which costs less
 * than the exit itself by orders of magnitude.
 */
#include "drivers/cmos.h"
#include "drivers/fwcfg.h"
#include "drivers/pci.h"
#include "drivers/pic.h"
#include "drivers/serial.h"
#include "drivers/uart.h"
#include "vmm/dev/dev_io.h"
#include "vmm/dev/dev_power.h"

#define DEBUG_EXIT_PORT 0xf4u
#define POST_CODE_PORT  0x80u

struct dev_port_range {
	uint16_t first, last;           /* inclusive */
	io_fn fn;
};

static const struct dev_port_range dev_ports[] = {
	{ SERIAL_COM1, SERIAL_COM1 + UART_SCR, io_serial },
	{ DEBUG_EXIT_PORT, DEBUG_EXIT_PORT, io_debug_exit },
	{ PIC1_CMD, PIC1_DATA, io_pic },
	{ PIC2_CMD, PIC2_DATA, io_pic },
	{ PIC_ELCR1, PIC_ELCR2, io_pic },
	{ PCI_CONFIG_ADDR, PCI_CONFIG_ADDR, io_pci_addr },
	{ PCI_CONFIG_DATA, PCI_CONFIG_DATA + 3, io_ones },      /* no device: all ones */
	{ POST_CODE_PORT, POST_CODE_PORT, io_ones },
	{ FWCFG_PORT_SEL, FWCFG_PORT_SEL, io_fwcfg },
	{ FWCFG_PORT_DATA, FWCFG_PORT_DATA, io_fwcfg },
	{ DEV_KBC_DATA_PORT, DEV_KBC_DATA_PORT, io_kbc },
	{ DEV_KBC_CMD_PORT, DEV_KBC_CMD_PORT, io_kbc },
	{ DEV_RESET_CONTROL_PORT, DEV_RESET_CONTROL_PORT, io_reset_control },
	{ DEV_ACPI_SLEEP_CONTROL_PORT, DEV_ACPI_SLEEP_STATUS_PORT, io_acpi_sleep },
	{ CMOS_INDEX_PORT, CMOS_DATA_PORT, io_cmos },
};

io_fn dev_io_lookup(uint16_t port)
{
	for (unsigned i = 0; i < ARRAY_SIZE(dev_ports); i++)
		if (port >= dev_ports[i].first && port <= dev_ports[i].last)
			return dev_ports[i].fn;
	return NULL;
}

int io_ones(struct vcpu *v, struct io_req *r)
{
	/* Known-harmless ports (POST codes, PCI config data): all ones, writes ignored, no count. */
	if (r->in)
		r->val = ~0u;
	return 0;
}

int dev_io_bytewise(struct vcpu *v, struct io_req *r)
{
	uint32_t val = 0;

	for (unsigned i = 0; i < r->size; i++) {
		struct io_req b = {
			.port = (uint16_t)(r->port + i), .size = 1, .in = r->in,
			.val = (r->val >> (8 * i)) & 0xffu,
		};
		io_fn fn = dev_io_lookup(b.port);

		if (!fn)
			fn = io_ones;
		if (fn(v, &b))
			return -1;
		val |= (b.val & 0xffu) << (8 * i);
	}
	if (r->in)
		r->val = val;
	return 0;
}
