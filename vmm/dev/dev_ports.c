// SPDX-License-Identifier: BSD-2-Clause
/*
 * Which device model answers which guest port. A new port device is one
 * new file under vmm/dev/ plus one line here. Ranges do not overlap; a
 * port exit scans this short list (a dozen entries), which costs less
 * than the exit itself by orders of magnitude.
 */
#include "drivers/fwcfg.h"
#include "drivers/pci.h"
#include "drivers/pic.h"
#include "drivers/serial.h"
#include "drivers/uart.h"
#include "vmm/dev/dev_ports.h"

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
};

io_fn dev_ports_lookup(uint16_t port)
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
